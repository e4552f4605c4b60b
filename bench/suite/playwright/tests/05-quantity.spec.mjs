// Three of a plant from its page: the stepper, the button, the count.
import { test, expect } from "@playwright/test";

test("05-quantity", async ({ page }) => {
  await page.goto("/product.html?p=areca-palm");
  await expect(page.getByRole("heading", { name: "Areca palm" })).toBeVisible();
  await page.getByRole("button", { name: "More" }).click();
  await page.getByRole("button", { name: "More" }).click();
  await expect(page.locator("#qty")).toHaveText("3");
  await page.locator("#add").click();
  await expect(page.locator("#added")).toContainText("3 × Areca palm");
  await expect(page.locator("#basket-count")).toHaveText("3");
  await expect(page.locator("#buy")).toHaveScreenshot("buy-box.png");
});
