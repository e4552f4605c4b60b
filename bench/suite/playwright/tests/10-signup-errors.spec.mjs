// Create account with an empty form: every field says what it needs.
import { test, expect } from "@playwright/test";

test("10-signup-errors", async ({ page }) => {
  await page.goto("/signup.html");
  await page.getByRole("button", { name: "Create account" }).click();
  await expect(page.getByRole("alert")).toContainText("There are 3 problems");
  await expect(page.getByText("Use at least 8 characters")).toBeVisible();
  await expect(page.locator("#form")).toHaveScreenshot("errors.png");
});
