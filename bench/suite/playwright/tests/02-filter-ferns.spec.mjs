// Narrow the grid to ferns with a filter chip.
import { test, expect } from "@playwright/test";

test("02-filter-ferns", async ({ page }) => {
  await page.goto("/index.html");
  await page.getByRole("button", { name: "Ferns" }).click();
  await expect(page.locator("#card-kentia-palm")).toBeHidden();
  await expect(page.locator("#card-birds-nest-fern")).toBeVisible();
  await expect(page).toHaveScreenshot("ferns.png");
});
