package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
)

func runVersion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fmt.Fprintf(stdout, "toolserver %s (commit %s, %s)\n", version, commit, runtime.Version())
	return nil
}
