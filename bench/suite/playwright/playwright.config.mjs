// The Playwright side of the suite: the 12 flows of ../project/.argent/flows
// as Playwright Test specs, on the same Chromium (Debian's, by path) and the
// same 1280×800 viewport. toHaveScreenshot keeps Playwright's defaults.
// run.sh sets SUITE_BASE_URL and CHROMIUM; the defaults serve a hand run.
import { defineConfig } from "@playwright/test";

export default defineConfig({
  testDir: "./tests",
  workers: 1,
  fullyParallel: false,
  retries: 0,
  reporter: "list",
  use: {
    browserName: "chromium",
    baseURL: process.env.SUITE_BASE_URL || "http://127.0.0.1:8417",
    viewport: { width: 1280, height: 800 },
    deviceScaleFactor: 1,
    launchOptions: {
      executablePath: process.env.CHROMIUM || "/usr/bin/chromium-headless-shell",
      args: ["--no-sandbox", "--hide-scrollbars", "--force-device-scale-factor=1"],
    },
  },
});
