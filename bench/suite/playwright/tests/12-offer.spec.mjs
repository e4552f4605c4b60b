// Today's offer fades in (opacity 0 to 1 over 180 ms) when revealed.
import { test, expect } from "@playwright/test";

test("12-offer", async ({ page }) => {
  await page.goto("/offers.html");
  await expect(page.locator("#offer")).toBeHidden();
  await page.getByRole("button", { name: "Show today's offer" }).click();
  await expect(page.locator("#offer")).toBeVisible();
  await expect(page).toHaveScreenshot("offer.png");
});
