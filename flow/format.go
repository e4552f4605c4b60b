package flow

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// FormatStep renders a step on one line in YAML flow style, the way the
// link protocol quotes a step (docs/link-protocol.md, "What the
// tool-server does with the members") in a FLOW_FILE_INVALID message:
// `script: { path: ../../scripts/hello.mjs }`. It writes what Marshal
// would, defaults left out, and "<invalid step: …>" for a step that has no
// YAML spelling.
func FormatStep(step *Step) string {
	n, err := step.node()
	if err != nil {
		return fmt.Sprintf("<invalid step: %v>", err)
	}
	var b strings.Builder
	writePairs(&b, n)
	return b.String()
}

func writeFlow(b *strings.Builder, n *yaml.Node) {
	switch n.Kind {
	case yaml.MappingNode:
		if len(n.Content) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{ ")
		writePairs(b, n)
		b.WriteString(" }")
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[ ")
		for i, c := range n.Content {
			if i > 0 {
				b.WriteString(", ")
			}
			writeFlow(b, c)
		}
		b.WriteString(" ]")
	case yaml.AliasNode:
		writeFlow(b, n.Alias)
	default:
		writeScalar(b, n)
	}
}

func writePairs(b *strings.Builder, m *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if i > 0 {
			b.WriteString(", ")
		}
		// Keys are the format's own words (on, y): never quoted.
		b.WriteString(m.Content[i].Value)
		b.WriteString(": ")
		writeFlow(b, m.Content[i+1])
	}
}

// writeScalar writes a scalar plain when that reads back as the same
// string inside a flow collection, else double-quoted.
func writeScalar(b *strings.Builder, n *yaml.Node) {
	if n.ShortTag() != "!!str" || plainInFlow(n.Value) {
		b.WriteString(n.Value)
		return
	}
	b.WriteString(strconv.Quote(n.Value))
}

func plainInFlow(s string) bool {
	if s == "" || s != strings.TrimSpace(s) || strings.ContainsAny(s, ",[]{}\n\r\t\"'") ||
		strings.Contains(s, ": ") || strings.Contains(s, " #") || strings.HasSuffix(s, ":") ||
		strings.ContainsAny(s[:1], "#&*!|>%@`") || isOldBool(s) {
		return false
	}
	// "-", "?" and ":" start a plain scalar only when a non-space follows.
	if strings.ContainsAny(s[:1], "-?:") && (len(s) == 1 || s[1] == ' ') {
		return false
	}
	var n yaml.Node
	if yaml.Unmarshal([]byte(s), &n) != nil || len(n.Content) != 1 {
		return false
	}
	c := n.Content[0]
	return c.Kind == yaml.ScalarNode && c.ShortTag() == "!!str" && c.Value == s
}

// Target is the target a report line names for a step: what it acted on.
func Target(s *Step) string {
	switch d := s.Directive.(type) {
	case *Tap:
		if d.Point {
			return fmt.Sprintf("(%g, %g)", d.X, d.Y)
		}
		return d.On.String()
	case *LongPress:
		if d.Point {
			return fmt.Sprintf("(%g, %g)", d.X, d.Y)
		}
		return d.On.String()
	case *Type:
		return "into " + d.Into.String()
	case *Await:
		if d.Condition.Kind == CondIdle {
			return ""
		}
		return d.Condition.String()
	case *Assert:
		return d.Condition.String()
	case *When:
		return d.Condition.String()
	case *ScrollTo:
		if d.Direction != "" && d.Direction != "down" {
			return d.Target.String() + " (" + d.Direction + ")"
		}
		return d.Target.String()
	case *Snapshot:
		if d.CropOn != nil {
			return fmt.Sprintf("%q cropOn %s", d.Name, d.CropOn)
		}
		return fmt.Sprintf("%q", d.Name)
	case *Run:
		return d.File()
	case *Launch:
		t, _ := d.ChromiumTarget()
		return t
	case *Script:
		return d.Path
	case *Press:
		return pressTarget(d)
	}
	return ""
}

// pressTarget is a press step's report target: the key, and how often.
func pressTarget(d *Press) string {
	if d.Times > 1 {
		return fmt.Sprintf("%s ×%d", d.Key, d.Times)
	}
	return d.Key
}
