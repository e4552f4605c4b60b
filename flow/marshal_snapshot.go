package flow

import (
	"go.yaml.in/yaml/v3"
)

// snapshotOptionNodes adds to the map m the options of d beyond Argent's
// (maxDiffPixels, threshold, metric, windowSize, fullPage, mask, maskColor, hide, ignore,
// ignoreRegions, style, stylePath, stopOnFailure), each only when set, in the schema's order. A mask or hide
// list is written as a list even when it has one selector.
func snapshotOptionNodes(m *yaml.Node, d *Snapshot) error {
	if d.MaxDiffPixels != nil {
		addPair(m, "maxDiffPixels", numNode(float64(*d.MaxDiffPixels)))
	}
	if d.Threshold != nil {
		addPair(m, "threshold", numNode(*d.Threshold))
	}
	if d.Metric != "" {
		addPair(m, "metric", strNode(d.Metric))
	}
	if d.WindowSize != nil {
		addPair(m, "windowSize", numNode(float64(*d.WindowSize)))
	}
	if d.FullPage {
		addPair(m, "fullPage", boolNode(true))
	}
	if err := addSelectorList(m, "mask", d.Mask); err != nil {
		return err
	}
	if d.MaskColor != "" {
		addPair(m, "maskColor", strNode(d.MaskColor))
	}
	if err := addSelectorList(m, "hide", d.Hide); err != nil {
		return err
	}
	if err := addSelectorList(m, "ignore", d.Ignore); err != nil {
		return err
	}
	if len(d.IgnoreRegions) > 0 {
		seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, r := range d.IgnoreRegions {
			item := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle}
			addPair(item, "x", numNode(float64(r.X)))
			addPair(item, "y", numNode(float64(r.Y)))
			addPair(item, "width", numNode(float64(r.Width)))
			addPair(item, "height", numNode(float64(r.Height)))
			seq.Content = append(seq.Content, item)
		}
		addPair(m, "ignoreRegions", seq)
	}
	if d.Style != "" {
		addPair(m, "style", strNode(d.Style))
	}
	if d.StylePath != "" {
		addPair(m, "stylePath", strNode(d.StylePath))
	}
	if d.StopOnFailure != nil {
		addPair(m, "stopOnFailure", boolNode(*d.StopOnFailure))
	}
	return nil
}

// addSelectorList adds key: [ <selector>, … ] to m when sels is not empty.
func addSelectorList(m *yaml.Node, key string, sels []*Selector) error {
	if len(sels) == 0 {
		return nil
	}
	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
	for _, s := range sels {
		n, err := s.node()
		if err != nil {
			return err
		}
		seq.Content = append(seq.Content, n)
	}
	addPair(m, key, seq)
	return nil
}
