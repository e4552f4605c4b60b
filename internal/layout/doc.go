// Package layout holds the test that keeps the tree's import rules: which
// package may import which (docs/README.md describes the layout). It has
// no code of its own.
package layout
