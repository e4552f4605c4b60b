// Package run plays flows on a device: the steps of a flow file, its run:
// fragments and nested flows, the snapshot step with its limits and changed
// regions, and the report of the run (flow.Report). It reads every file
// through a Source (the local disk, Disk, or the members a linked client
// sent) and drives the browser through a Device, both declared here where
// they are consumed. Disk lives here rather than in flow, so the language
// reads and writes no flow file, baseline or stylesheet; a link client reads
// its members with it, as a local run reads them.
//
// Execute refuses, before the first step, a flow whose run: fragments and
// nested flows could make its report longer than flow.MaxRunSteps lines, and
// the runner ends a run at that many lines anyway. A run whose context ends
// (its caller went away) reports the step it cut short and nothing after it.
package run
