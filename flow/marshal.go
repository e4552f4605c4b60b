package flow

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Marshal writes f as a flow file: executionPrerequisite (when set), then
// steps, in the compact spelling Argent's serializer uses — defaults left
// out, bare strings for name-only snapshots and loose selectors. It parses
// the result back before returning it, so a step built by hand that the
// parser would refuse fails here, where it was built, and not on the next
// load of the file.
func Marshal(f *Flow) ([]byte, error) {
	root, err := f.node()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, fmt.Errorf("flow: encode: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("flow: encode: %w", err)
	}
	name := f.Name
	if name == "" {
		name = "marshalled flow"
	}
	if _, err := Parse(name, buf.Bytes()); err != nil {
		return nil, fmt.Errorf("flow: the marshalled flow does not parse back: %w", err)
	}
	return buf.Bytes(), nil
}

// MarshalYAML implements yaml.Marshaler, so yaml.Marshal(f) writes the same
// document as Marshal (without Marshal's parse-back check).
func (f *Flow) MarshalYAML() (any, error) { return f.node() }

// MarshalYAML implements yaml.Marshaler for one step: the step's map.
func (s *Step) MarshalYAML() (any, error) { return s.node() }

func (f *Flow) node() (*yaml.Node, error) {
	root := mapNode(false)
	if f.ExecutionPrerequisite != "" {
		addPair(root, "executionPrerequisite", strNode(f.ExecutionPrerequisite))
	}
	seq, err := stepsNode(f.Steps)
	if err != nil {
		return nil, err
	}
	return addPair(root, "steps", seq), nil
}

func stepsNode(steps []*Step) (*yaml.Node, error) {
	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, s := range steps {
		n, err := s.node()
		if err != nil {
			return nil, err
		}
		seq.Content = append(seq.Content, n)
	}
	return seq, nil
}

// node encodes one step as its map: the directive key and, for when: and
// tool:, the sibling keys.
func (s *Step) node() (*yaml.Node, error) {
	m := mapNode(false)
	if s == nil || s.Directive == nil {
		return nil, errors.New("flow: a step without a directive")
	}
	k := string(s.Kind())
	switch d := s.Directive.(type) {
	case *When:
		guard, err := d.Condition.node()
		if err != nil {
			return nil, err
		}
		steps, err := stepsNode(d.Steps)
		if err != nil {
			return nil, err
		}
		return addPair(addPair(m, k, guard), "steps", steps), nil
	case *Tool:
		addPair(m, k, strNode(d.Name))
		if len(d.Args) > 0 {
			args := &yaml.Node{}
			if err := args.Encode(d.Args); err != nil {
				return nil, fmt.Errorf("flow: tool %s args: %w", d.Name, err)
			}
			addPair(m, "args", args)
		}
		if d.Delay > 0 {
			addPair(m, "delayMs", msNode(d.Delay))
		}
		return m, nil
	}
	v, err := directiveNode(s.Directive)
	if err != nil {
		return nil, fmt.Errorf("flow: %s: %w", k, err)
	}
	return addPair(m, k, v), nil
}

// directiveNode encodes a directive's value, writing an option only when it
// differs from the default the parser would fill in.
func directiveNode(d Directive) (*yaml.Node, error) {
	switch d := d.(type) {
	case *Launch:
		return launchNode(d), nil
	case *Tap:
		t, err := targetNode(d.On, d.Point, d.X, d.Y)
		if err != nil || d.Times <= 1 {
			return t, err
		}
		return addPair(addPair(mapNode(true), "on", t), "times", numNode(float64(d.Times))), nil
	case *LongPress:
		t, err := targetNode(d.On, d.Point, d.X, d.Y)
		if err != nil || d.Duration == 0 || d.Duration == DefaultLongPress {
			return t, err
		}
		return addPair(addPair(mapNode(true), "on", t), "duration", msNode(d.Duration)), nil
	case *Type:
		return typeNode(d)
	case *ScrollTo:
		return scrollToNode(d)
	case *Await:
		m, err := d.Condition.node()
		if err == nil && d.Timeout != 0 && d.Timeout != DefaultAwaitTimeout {
			addPair(m, "timeout", msNode(d.Timeout))
		}
		return m, err
	case *Assert:
		return d.Condition.node()
	case *Wait:
		return msNode(d.Duration), nil
	case *Snapshot:
		return snapshotNode(d)
	case *Run:
		return strNode(d.Target), nil
	case *Echo:
		return strNode(d.Message), nil
	case *Script:
		m := addPair(mapNode(true), "path", strNode(d.Path))
		if d.Timeout > 0 {
			addPair(m, "timeout", msNode(d.Timeout))
		}
		return m, nil
	case *Pinch:
		return twoFingerNode(d.On, "scale", d.Scale)
	case *Rotate:
		return twoFingerNode(d.On, "by", d.By)
	case *Press:
		return pressNode(d), nil
	}
	return nil, fmt.Errorf("no YAML spelling for %T", d)
}

// launchNode writes a launch as its URL, or as the map of the app it
// names per platform, with chromium: { path, args } when it has args.
func launchNode(d *Launch) *yaml.Node {
	if d.URL != "" {
		return strNode(d.URL)
	}
	m := mapNode(true)
	for _, kv := range [][2]string{{"native", d.Native}, {"ios", d.IOS}, {"android", d.Android}, {"vega", d.Vega}} {
		if kv[1] != "" {
			addPair(m, kv[0], strNode(kv[1]))
		}
	}
	switch {
	case len(d.ChromiumArgs) > 0:
		args := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
		for _, a := range d.ChromiumArgs {
			args.Content = append(args.Content, strNode(a))
		}
		addPair(m, "chromium", addPair(addPair(mapNode(true), "path", strNode(d.Chromium)), "args", args))
	case d.Chromium != "":
		addPair(m, "chromium", strNode(d.Chromium))
	}
	return m
}

// typeNode writes type: { into, text }, with submit: false only when the
// step does not press Enter (true is the default).
func typeNode(d *Type) (*yaml.Node, error) {
	into, err := d.Into.node()
	if err != nil {
		return nil, err
	}
	m := addPair(addPair(mapNode(true), "into", into), "text", strNode(d.Text))
	if !d.Submit {
		addPair(m, "submit", boolNode(false))
	}
	return m, nil
}

// scrollToNode writes the bare target when direction and within are the
// defaults and the target is a loose selector, else the map form.
func scrollToNode(d *ScrollTo) (*yaml.Node, error) {
	t, err := d.Target.node()
	if err != nil {
		return nil, err
	}
	down := d.Direction == "" || d.Direction == "down"
	if d.Target.Loose && down && d.Within == nil {
		return t, nil
	}
	m := addPair(mapNode(true), "target", t)
	if !down {
		addPair(m, "direction", strNode(d.Direction))
	}
	if d.Within != nil {
		w, err := d.Within.node()
		if err != nil {
			return nil, err
		}
		addPair(m, "within", w)
	}
	return m, nil
}

// snapshotNode writes a snapshot as its bare name when it has no option
// beyond the defaults, else the map form: Argent's keys first, then this
// project's in the order the schema lists them. maxMismatch is written
// when the file spelled it out (it then wins over a project's defaults),
// even at the default value.
func snapshotNode(d *Snapshot) (*yaml.Node, error) {
	m := addPair(mapNode(true), "name", strNode(d.Name))
	if d.MaxMismatchSet || d.MaxMismatch != DefaultMaxMismatch {
		addPair(m, "maxMismatch", numNode(d.MaxMismatch))
	}
	if d.CropOn != nil {
		c, err := d.CropOn.node()
		if err != nil {
			return nil, err
		}
		addPair(m, "cropOn", c)
	}
	if err := snapshotOptionNodes(m, d); err != nil {
		return nil, err
	}
	if len(m.Content) == 2 {
		return strNode(d.Name), nil
	}
	return m, nil
}

func targetNode(sel *Selector, point bool, x, y float64) (*yaml.Node, error) {
	if point {
		if sel != nil {
			return nil, errors.New("a target is a selector or a point, not both")
		}
		return addPair(addPair(mapNode(true), "x", numNode(x)), "y", numNode(y)), nil
	}
	return sel.node()
}

func twoFingerNode(on *Selector, amount string, v float64) (*yaml.Node, error) {
	m := mapNode(true)
	if on != nil {
		n, err := on.node()
		if err != nil {
			return nil, err
		}
		addPair(m, "on", n)
	}
	return addPair(m, amount, numNode(v)), nil
}

func mapNode(flow bool) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	if flow {
		n.Style = yaml.FlowStyle
	}
	return n
}

// addPair appends key: v to the map m and returns m.
func addPair(m *yaml.Node, key string, v *yaml.Node) *yaml.Node {
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
	return m
}

// strNode is a string scalar. The encoder quotes it when the plain form
// would read as another type; a multi-line string is double-quoted because
// a block scalar does not round-trip whitespace-only lines (Argent turns
// block scalars off for the same reason).
func strNode(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	if strings.ContainsAny(s, "\n\r") || isOldBool(s) {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

func isOldBool(s string) bool {
	switch strings.ToLower(s) {
	case "y", "n", "yes", "no", "on", "off":
		return true
	}
	return false
}

func boolNode(b bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(b)}
}

func numNode(f float64) *yaml.Node {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(int64(f), 10)}
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: strconv.FormatFloat(f, 'f', -1, 64)}
}

// msNode writes a duration as the milliseconds the YAML counts in.
func msNode(d time.Duration) *yaml.Node {
	return numNode(float64(d) / float64(time.Millisecond))
}
