// Sign up with care tips on.
import { test, expect } from "@playwright/test";

test("11-signup", async ({ page }) => {
  await page.goto("/signup.html");
  await page.locator("#name").fill("Ada Lovelace");
  await page.locator("#email").fill("ada@example.com");
  await page.locator("#password").fill("analytical-engine");
  await page.locator("#tips").click();
  await expect(page).toHaveScreenshot("filled.png");
  await page.getByRole("button", { name: "Create account" }).click();
  await expect(page.getByText("Welcome, Ada!")).toBeVisible();
  await expect(page.getByRole("status")).toContainText("first care tip arrives on Monday");
  await expect(page).toHaveScreenshot("welcome.png");
});
