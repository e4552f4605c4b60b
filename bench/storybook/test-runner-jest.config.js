// The test-runner's Jest config (its --eject output) with one change:
// Playwright launches Debian's Chromium, the binary toolserver uses
// (CHROMIUM_PATH, which bench/storybook/run.sh sets), with the flags
// bench/suite's Playwright side uses. Playwright's own browser is never
// downloaded (PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 at install).
import { getJestConfig } from '@storybook/test-runner';

const testRunnerConfig = getJestConfig();
const executablePath = process.env.CHROMIUM_PATH;
if (!executablePath) {
  throw new Error('test-runner-jest.config.js: set CHROMIUM_PATH to the Chromium binary (bench/storybook/run.sh does)');
}

/** @type {import('@jest/types').Config.InitialOptions} */
export default {
  ...testRunnerConfig,
  testEnvironmentOptions: {
    'jest-playwright': {
      ...testRunnerConfig.testEnvironmentOptions['jest-playwright'],
      launchOptions: {
        executablePath,
        args: ['--no-sandbox', '--hide-scrollbars', '--force-device-scale-factor=1'],
      },
    },
  },
};
