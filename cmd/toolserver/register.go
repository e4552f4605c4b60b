package main

import (
	"github.com/toolserver/toolserver/tool/flowtool"
	"github.com/toolserver/toolserver/tool/snapshottool"
)

// registerMoreTools adds the flow tools and the snapshot tools.
func registerMoreTools(a *app) {
	a.flowTools = &flowtool.Tools{Pool: a.pool, Artifacts: a.artifacts, Registry: a.tools, Uploads: a.uploads, TempDir: a.tmp}
	a.flowTools.Register(a.tools)
	(&snapshottool.Tools{Pool: a.pool, Artifacts: a.artifacts}).Register(a.tools)
}

// setNoHostFiles switches the flow tools between reading a flow at the
// client's path on this machine and always using the bytes sent.
func setNoHostFiles(a *app, on bool) { a.flowTools.NoHostFiles = on }
