// Package flow is the flow language: the YAML files under .argent/flows
// that users write, commit and run in CI (docs/product.md, "Flow files
// (YAML)"). The file format is Argent's, so flows written for Argent's own
// tool-server parse here unchanged and vice versa. The runner that plays a
// flow on a device is flow/run; this package imports neither it nor the
// image code.
//
// Parsing is pure: Parse takes the file's bytes and the name to use in
// messages (over a link, the client's canonical path) and never touches the
// file system. It rejects everything a run would trip over later — unknown
// directives and options, malformed selectors, regular expressions that do
// not compile, else: beside when:, an end-to-end flow that declares an
// executionPrerequisite — with the file, the step number and the YAML line
// (see Error). Resolution of run: targets, nested flows, baselines and tool
// file arguments is the runner's and the link's job; the walk helpers on Flow
// (RunTargets, NestedFlows, SnapshotNames, ToolSteps) give them what the file
// says, with the step and line of each.
//
// Sizes are bounded, because a flow file can arrive from the network: Parse
// refuses a file whose YAML aliases would expand without end or add more
// than MaxAliasValues values, and one that holds more than MaxRunSteps
// steps (when: blocks included). The runner enforces the same bound on a
// whole run (see flow/run).
//
// The AST is a Flow of Steps; each Step holds one Directive, a pointer to one
// of the directive types (*Launch, *Tap, *When, …) that a runner type-switches
// on. Parse fills every default docs/product.md names (an await timeout of
// 7500 ms, a snapshot maxMismatch of 0.5 percent, …) into the AST, and
// Marshal writes only the values that differ from those defaults, so a
// parsed, re-marshalled and re-parsed flow is the same flow. A step built by
// hand (the recorder's) may leave Tap.Times, Await.Timeout,
// LongPress.Duration and ScrollTo.Direction zero, which Marshal reads as the
// default; a zero Snapshot.MaxMismatch or Type.Submit is meant literally (an
// exact compare, no Enter), so set those.
//
// Beside the language: the project configuration (.argent/toolserver.yaml,
// LoadConfig, the one file this package reads itself), the model of a flow
// file as a source answers for it (File; reading one from disk, with its
// spelling, is flow/run's Disk), and the result of a run as it crosses the
// wire and is stored (Report, StepReport and the types they hold), which the
// report, the run store and the link read without the runner. The package
// writes no file.
//
// Schema returns a JSON Schema (draft 2020-12) of the file format for
// editors; a test keeps its directive and option lists equal to the parser's.
package flow
