// Package suite runs a suite of flows, the engine under toolserver flow
// run and toolserver storybook: which flow files an argument names
// (Resolve: a name, a file, or a directory with its fragments left out),
// which of them a CI job runs (Shard), running them workers at a time
// (Run) or dealt over several tool-servers (Spread), and what their
// results come to (Collect).
//
// How one flow runs is the caller's: it hands Run a function that runs a
// target in-process or over a link, and prints. The package touches no
// device, no link and no terminal.
package suite
