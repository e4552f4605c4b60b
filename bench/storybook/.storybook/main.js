// The benchmark's Storybook: HTML stories built by Vite, the framework and
// versions of the storybook command's test rig (testdata/storybook).
export default {
  framework: '@storybook/html-vite',
  stories: ['../stories/*.stories.js'],
  core: { disableTelemetry: true, disableWhatsNewNotifications: true },
};
