package linked

import (
	"context"
	"strings"

	"github.com/toolserver/toolserver/flow"
	flowrun "github.com/toolserver/toolserver/flow/run"
	linkclient "github.com/toolserver/toolserver/link/client"
	"github.com/toolserver/toolserver/suite"
)

// URLs splits a --link value (or $ARGENT_TOOLS_URL) into its
// tool-servers: one URL, or several separated by commas.
func URLs(v string) []string {
	var out []string
	for _, u := range strings.Split(v, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	return out
}

// Spread runs flows over several tool-servers, dealt by suite.Spread:
// each flow goes to the next in turn, and one a server refused before
// running it goes to the next one.
type Spread struct {
	urls []string
	runs []*Run
	deal *suite.Spread
}

// NewSpread deals flows over runs, one a tool-server, at urls (the
// same order; urls name them in a Resent).
func NewSpread(urls []string, runs []*Run) *Spread {
	return &Spread{urls: urls, runs: runs, deal: suite.NewSpread(len(urls))}
}

// Close closes the tunnels of the run (--expose).
func (s *Spread) Close() {
	for _, r := range s.runs {
		r.Close()
	}
}

// Flow runs one flow on the next tool-server, and on the ones after it
// while they refuse it before running it; what it shows goes to p.
func (s *Spread) Flow(ctx context.Context, t suite.Target, p Printer) (rep *flow.Report, notWritten int, plans []flowrun.Plan, err error) {
	err = s.deal.Do(ctx, func(at int) error {
		mine := *s.runs[at]
		mine.p = p
		var err error
		rep, notWritten, plans, err = mine.Flow(ctx, t)
		return err
	}, linkclient.NotRun, func(from, to int, err error) {
		p.Resent(t.Name, s.urls[from], s.urls[to], err)
	})
	return rep, notWritten, plans, err
}
