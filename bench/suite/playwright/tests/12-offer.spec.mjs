// Today's offer fades in (opacity 0 to 1 over 180 ms) when revealed, after
// a screenshot of the page without it.
import { test, expect } from "@playwright/test";

test("12-offer", async ({ page }) => {
  await page.goto("/offers.html");
  await expect(page).toHaveScreenshot("offers.png");
  await page.getByRole("button", { name: "Show today's offer" }).click();
  await expect(page.getByText("20% off every fern")).toBeVisible();
  await expect(page.locator("#offer")).toHaveScreenshot("offer.png");
});
