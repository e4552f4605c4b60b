package runs

import "github.com/toolserver/toolserver/fault"

// What a run's record holds of strings from outside is bounded whatever
// way they came in: every list, /v1/events frame and MCP answer carries
// each run's flow, device and reason, so one long value would ride in all
// of them. The surface refuses longer arguments first (flow-execute's
// caps); these are the store's own bounds behind them.
const (
	// MaxNameBytes bounds a run's flow and device as recorded.
	MaxNameBytes = 256
	// MaxReasonBytes bounds a summary's reason.
	MaxReasonBytes = 2048
)

// InternalReason is the reason of a run an internal fault ended: the
// fault's text (a server path, a store's or Chromium's own words) is for
// the tool-server's log, never for the record every client reads.
const InternalReason = "internal error; see the tool-server's log"

// reasonOf is the reason a run records for the error that ended it.
func reasonOf(err error) string {
	if fault.AsError(err).Internal() {
		return InternalReason
	}
	return fault.Clip(err.Error(), MaxReasonBytes)
}
