// A product page, opened from a shared link.
import { test, expect } from "@playwright/test";

test("04-product-page", async ({ page }) => {
  await page.goto("/product.html?p=boston-fern");
  await expect(page.getByRole("heading", { name: "Boston fern" })).toBeVisible();
  await expect(page.locator("#price")).toHaveText("£18.00");
  await expect(page.locator("#qty")).toHaveText("1");
  await expect(page).toHaveScreenshot("product.png");
});
