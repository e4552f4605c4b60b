package client

import (
	"errors"
	"net/http"

	"github.com/toolserver/toolserver/wire"
)

// ErrNotSent marks a call that never reached the tool-server: the
// connection failed before the request was written, or the tool listing
// that comes first failed to connect.
var ErrNotSent = errors.New(wire.NotSent)

// refusedBeforeRun are the error codes of a tool-server that refused a
// call before running anything: it is stopping, or its queue is full.
var refusedBeforeRun = map[string]bool{wire.CodeDraining: true, wire.CodeQueueFull: true}

// NotRun reports whether err proves the call's tool did not run: it was never
// sent, or the tool-server refused it before running it (503 DRAINING or
// QUEUE_FULL). Only such a call may be sent to another tool-server; any other
// failure may have run it (docs/link-protocol.md, "The call": a call is sent
// once).
func NotRun(err error) bool {
	if errors.Is(err, ErrNotSent) {
		return true
	}
	var ce *CallError
	return errors.As(err, &ce) && ce.Status == http.StatusServiceUnavailable && refusedBeforeRun[ce.Code]
}
