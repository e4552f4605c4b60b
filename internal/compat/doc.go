// Package compat holds no code of its own: its tests build the toolserver
// binary and hold it to recorded CLI and HTTP exchanges (the goldens in
// testdata/golden), so that a change that must not change behaviour, a
// restructuring, proves it did not. The tests see the binary from the
// outside only (arguments, environment, files, stdout, stderr, the exit
// code, HTTP on loopback), so they hold unchanged whatever moves inside.
// docs/testing.md, "The compatibility record" says how to re-record.
package compat
