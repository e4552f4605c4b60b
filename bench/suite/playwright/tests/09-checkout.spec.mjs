// Remove one plant, check out the other through the confirmation modal.
import { test, expect } from "@playwright/test";

test("09-checkout", async ({ page }) => {
  await page.goto("/index.html");
  await page.locator("#card-boston-fern").getByRole("button", { name: "Add to basket" }).click();
  await expect(page.locator("#basket-count")).toHaveText("1");
  await page.locator("#card-snake-plant").getByRole("button", { name: "Add to basket" }).click();
  await expect(page.locator("#basket-count")).toHaveText("2");
  await page.goto("/basket.html"); // as the flow does: see ../../README.md
  await expect(page.getByText("Order summary")).toBeVisible();
  await page.getByRole("button", { name: "Remove Snake plant" }).click();
  await expect(page.getByText("Snake plant")).toBeHidden();
  await page.getByRole("button", { name: "Checkout" }).click();
  await expect(page.getByRole("dialog")).toBeVisible();
  await expect(page).toHaveScreenshot("confirm.png");
  await page.getByRole("button", { name: "Place order" }).click();
  await expect(page.getByRole("status")).toContainText("Order FH-1042 is confirmed");
  await expect(page).toHaveScreenshot("ordered.png");
});
