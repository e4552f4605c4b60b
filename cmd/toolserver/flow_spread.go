package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolserver/toolserver/flow"
	flowrun "github.com/toolserver/toolserver/flow/run"
	linkclient "github.com/toolserver/toolserver/link/client"
	"github.com/toolserver/toolserver/suite"
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

// spread runs flows over several tool-servers, dealt by suite.Spread:
// each flow goes to the next in turn, and one a server refused before
// running it goes to the next one.
type spread struct {
	urls []string
	runs []*linkedRun
	deal *suite.Spread
}

func newSpread(urls []string, arg string, opts flowRunOptions, out *renderer) (*spread, error) {
	s := &spread{urls: urls, deal: suite.NewSpread(len(urls))}
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
func (s *spread) run(ctx context.Context, t flowTarget, worker int, out *renderer) (rep *flow.Report, notWritten int, plans []flowrun.Plan, err error) {
	err = s.deal.Do(ctx, func(at int) error {
		mine := *s.runs[at]
		mine.out = out
		var err error
		rep, notWritten, plans, err = mine.run(ctx, t)
		return err
	}, linkclient.NotRun, func(from, to int, err error) {
		out.warn(fmt.Sprintf("%s: %s did not run it (%v); sending it to %s", t.Name, s.urls[from], err, s.urls[to]))
	})
	return rep, notWritten, plans, err
}
