// From the grid to a product page by the plant's name.
import { test, expect } from "@playwright/test";

test("04-product-page", async ({ page }) => {
  await page.goto("/index.html");
  await page.getByRole("link", { name: "Boston fern" }).click();
  await expect(page.getByRole("heading", { name: "Boston fern" })).toBeVisible();
  await expect(page.locator("#price")).toHaveText("£18.00");
  await expect(page).toHaveScreenshot("product.png");
});
