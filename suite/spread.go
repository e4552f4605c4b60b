package suite

import (
	"context"
	"sync/atomic"
)

// Spread deals flows over n tool-servers: each flow goes to the next in
// turn, and a flow a server refused before running it (it is stopping,
// its queue is full, or it cannot be reached) goes on to the one after.
// A call that may have run is never sent again (docs/link-protocol.md,
// "The call").
type Spread struct {
	n    int
	next atomic.Int64
}

// NewSpread deals over n servers, n ≥ 1.
func NewSpread(n int) *Spread { return &Spread{n: max(n, 1)} }

// Do runs one flow: try on the next server in turn, and on the ones after
// it while refused says the last one refused the flow before running it,
// until each has had it once or ctx ends; moved is told each move, with
// the refusal. Do returns try's last error.
func (s *Spread) Do(ctx context.Context, try func(server int) error, refused func(error) bool, moved func(from, to int, err error)) error {
	at := int(s.next.Add(1)-1) % s.n
	for tries := 1; ; tries++ {
		err := try(at)
		if err == nil || !refused(err) || tries == s.n || ctx.Err() != nil {
			return err
		}
		next := (at + 1) % s.n
		moved(at, next, err)
		at = next
	}
}
