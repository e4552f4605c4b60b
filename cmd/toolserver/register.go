package main

import "github.com/toolserver/toolserver/flowtool"

// registerMoreTools adds the flow tools and the snapshot tools.
func registerMoreTools(a *app, poolErr error) {
	(&flowtool.Tools{Pool: a.pool, PoolErr: poolErr, Artifacts: a.artifacts, Registry: a.tools, Uploads: a.uploads, TempDir: a.tmp}).Register(a.tools)
}
