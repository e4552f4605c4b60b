// Package cdp owns the Chromium devices: headless browsers driven over the
// Chrome DevTools Protocol through chromedp, each named by its viewport
// (chromium-cdp-1280x800). It boots a device on first use, reuses it,
// detects a crashed browser and boots a fresh one on the next call, and is
// the only package of the project that talks CDP.
//
// cdproto's own package named cdp is imported as proto throughout, so the
// two never shadow each other.
package cdp
