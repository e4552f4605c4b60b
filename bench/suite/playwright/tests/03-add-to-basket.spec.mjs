// Add a Kentia palm from the grid: the toast and the header's count change.
import { test, expect } from "@playwright/test";

test("03-add-to-basket", async ({ page }) => {
  await page.goto("/index.html");
  await page.locator("#card-kentia-palm").getByRole("button", { name: "Add to basket" }).click();
  await expect(page.locator("#toast")).toContainText("Kentia palm added");
  await expect(page.locator("#basket-count")).toHaveText("1");
  await expect(page.getByRole("navigation")).toHaveScreenshot("header.png");
  await expect(page).toHaveScreenshot("added.png");
});
