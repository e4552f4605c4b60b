package recordtool

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/toolserver/toolserver/flow"
)

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// summarize renders a step on one line for the recorder's results, in
// Argent's spelling: `tap: {"id":"add-to-cart"}` (a captured selector as
// the strict map it is), `tap: (0.5, 0.52)`, `run: login.yaml`,
// `tool: keyboard {"text":"Ann"} (after 500ms)`, `await: visible id="done"`.
func summarize(s *flow.Step) string {
	switch d := s.Directive.(type) {
	case *flow.Tap:
		out := "tap: " + targetSummary(d.On, d.Point, d.X, d.Y)
		if d.Times > 1 {
			out += fmt.Sprintf(" ×%d", d.Times)
		}
		return out
	case *flow.LongPress:
		out := "long-press: " + targetSummary(d.On, d.Point, d.X, d.Y)
		if d.Duration > 0 && d.Duration != flow.DefaultLongPress {
			out += fmt.Sprintf(" (%dms)", d.Duration.Milliseconds())
		}
		return out
	case *flow.Launch:
		if d.URL != "" {
			return "launch: " + d.URL
		}
	case *flow.Run:
		return "run: " + d.Target
	case *flow.Echo:
		return "echo: " + strconv.Quote(d.Message)
	case *flow.Snapshot:
		return "snapshot: " + d.Name
	case *flow.Wait:
		return fmt.Sprintf("wait: %dms", d.Duration.Milliseconds())
	case *flow.Await:
		if d.Condition.Kind == flow.CondIdle {
			return "await: screen idle"
		}
		return "await: " + d.Condition.String()
	case *flow.Assert:
		return "assert: " + d.Condition.String()
	case *flow.When:
		return fmt.Sprintf("when: %s (%s)", d.Condition, stepWord(len(d.Steps)))
	case *flow.Tool:
		out := "tool: " + d.Name
		if len(d.Args) > 0 {
			b, _ := json.Marshal(d.Args)
			out += " " + string(b)
		}
		if d.Delay > 0 {
			out += fmt.Sprintf(" (after %dms)", d.Delay/time.Millisecond)
		}
		return out
	}
	return flow.FormatStep(s)
}

func targetSummary(sel *flow.Selector, point bool, x, y float64) string {
	switch {
	case point:
		return fmt.Sprintf("(%s, %s)", num(x), num(y))
	case sel.Loose:
		return strconv.Quote(sel.Text)
	}
	b, _ := json.Marshal(sel.Spec())
	return string(b)
}
