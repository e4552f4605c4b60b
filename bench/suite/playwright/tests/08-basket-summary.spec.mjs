// Two plants in the basket: the lines and the order summary.
import { test, expect } from "@playwright/test";

test("08-basket-summary", async ({ page }) => {
  await page.goto("/index.html");
  await page.locator("#card-kentia-palm").getByRole("button", { name: "Add to basket" }).click();
  await expect(page.locator("#basket-count")).toHaveText("1");
  await page.locator("#card-snake-plant").getByRole("button", { name: "Add to basket" }).click();
  await expect(page.locator("#basket-count")).toHaveText("2");
  await page.goto("/basket.html"); // as the flow does: see ../../README.md
  await expect(page.getByText("Order summary")).toBeVisible();
  await expect(page.locator("#total")).toHaveText("£56.00");
  await expect(page).toHaveScreenshot("basket.png");
  await expect(page.locator("#summary")).toHaveScreenshot("summary.png");
});
