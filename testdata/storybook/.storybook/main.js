// The rig's Storybook: HTML stories built by Vite. staticDirs copies public/
// into the build, so a test can change a story's data (public/label.json) in
// its own copy of the build without rebuilding.
export default {
  framework: '@storybook/html-vite',
  stories: ['../stories/*.stories.js'],
  staticDirs: ['../public'],
  core: { disableTelemetry: true, disableWhatsNewNotifications: true },
};
