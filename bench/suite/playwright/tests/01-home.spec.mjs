// The shop's front page as a first-time visitor sees it.
import { test, expect } from "@playwright/test";

test("01-home", async ({ page }) => {
  await page.goto("/index.html");
  await expect(page.getByText("Plants that make a home")).toBeVisible();
  await expect(page.locator("#card-snake-plant")).toBeVisible();
  await expect(page).toHaveScreenshot("home.png");
});
