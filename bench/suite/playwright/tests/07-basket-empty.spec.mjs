// A new visitor's basket.
import { test, expect } from "@playwright/test";

test("07-basket-empty", async ({ page }) => {
  await page.goto("/basket.html");
  await expect(page.getByText("Your basket is empty")).toBeVisible();
  await expect(page).toHaveScreenshot("empty.png");
});
