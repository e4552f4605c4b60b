// Package storybook holds what toolserver storybook knows of a Storybook
// (8 to 10) apart from a browser: the stories of its index.json (v 5),
// the selection of --include, --exclude and --tag with the test-runner's
// tag rule, a story's parameters.toolserver, and the flow generated for
// each story. It touches no device and no file system: the CLI reads
// index.json and runs the flows; tool/storybooktool reads the preview on
// a device and answers with this package's Stories.
//
// Its errors are plain errors; a front end decides what kind of error
// each is (the CLI makes a bad index or glob a usage error).
package storybook
