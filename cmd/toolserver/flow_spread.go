package main

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/toolserver/toolserver/flow"
	flowrun "github.com/toolserver/toolserver/flow/run"
	linkclient "github.com/toolserver/toolserver/link/client"
)

// linkURLs splits a --link value (or $ARGENT_TOOLS_URL) into its
// tool-servers: one URL, or several separated by commas.
func linkURLs(v string) []string {
	var out []string
	for _, u := range strings.Split(v, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	return out
}

// spread runs flows over several tool-servers: each flow goes to the next in
// turn, and a flow a server refused before running it (it is stopping, its
// queue is full, or it cannot be reached) goes to the next one. A call that may
// have run is never sent again (docs/link-protocol.md, "The call").
type spread struct {
	urls []string
	runs []*linkedRun
	next atomic.Int64
}

func newSpread(urls []string, arg string, opts flowRunOptions, out *renderer) (*spread, error) {
	s := &spread{urls: urls}
	for _, u := range urls {
		lr, err := newLinkedRun(u, arg, opts, out)
		if err != nil {
			return nil, err
		}
		s.runs = append(s.runs, lr)
	}
	return s, nil
}

// close closes the tunnels of the run (--expose).
func (s *spread) close() {
	for _, lr := range s.runs {
		lr.tunnel.close()
	}
}

// run runs one flow on the next tool-server, and on the ones after it
// while they refuse it before running it.
func (s *spread) run(ctx context.Context, t flowTarget, worker int, out *renderer) (*flow.Report, int, []flowrun.Plan, error) {
	n := len(s.runs)
	at := int(s.next.Add(1)-1) % n
	for tries := 1; ; tries++ {
		mine := *s.runs[at]
		mine.out = out
		rep, notWritten, plans, err := mine.run(ctx, t)
		if err == nil || !linkclient.NotRun(err) || tries == n || ctx.Err() != nil {
			return rep, notWritten, plans, err
		}
		next := (at + 1) % n
		out.warn(fmt.Sprintf("%s: %s did not run it (%v); sending it to %s", t.name, s.urls[at], err, s.urls[next]))
		at = next
	}
}
