// The care guide opens in a modal and closes again.
import { test, expect } from "@playwright/test";

test("06-care-modal", async ({ page }) => {
  await page.goto("/product.html?p=kentia-palm");
  await page.getByRole("button", { name: "Care guide" }).click();
  await expect(page.getByRole("dialog")).toBeVisible();
  await expect(page.getByRole("dialog")).toContainText("Caring for your kentia palm");
  await expect(page).toHaveScreenshot("care-guide.png");
  await page.getByRole("button", { name: "Close" }).click();
  await expect(page.getByRole("dialog")).toBeHidden();
  await expect(page).toHaveScreenshot("closed.png");
});
