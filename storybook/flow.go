package storybook

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/toolserver/toolserver/flow"
)

// The tools the generated flows call (tool/storybooktool registers them).
const (
	// ToolStories answers the preview's Stories.
	ToolStories = "storybook-stories"
	// ToolReady waits until the story the page shows has rendered.
	ToolReady = "storybook-ready"
)

// FlowFile is the virtual flow file of the generated flows, under the
// project: its stem keys the baselines,
// <project>/__baselines__/storybook/<story id>__chromium-<W>x<H>.png.
const FlowFile = "storybook.yaml"

// StoryURL is the preview page of story id alone; base is the
// Storybook's root URL, ending in /.
func StoryURL(base, id string) string {
	return base + "iframe.html?id=" + url.QueryEscape(id) + "&viewMode=story"
}

// StoriesFlow is the flow that reads every story's parameters.toolserver:
// it opens the preview under base and calls ToolStories.
func StoriesFlow(base string) ([]byte, error) {
	return yaml.Marshal(map[string]any{"steps": []any{
		map[string]any{"launch": base + "iframe.html"},
		map[string]any{"tool": ToolStories},
	}})
}

// Flow is the flow of one story: open pageURL (the story alone), wait
// for the preview's render (at most timeout, then p's delay), snapshot
// it under the story's id. The flow is parsed here, so a mask or ignore
// selector the flow language refuses is the story's error.
func Flow(pageURL, id string, p Params, timeout time.Duration) ([]byte, error) {
	ready := map[string]any{"tool": ToolReady, "args": map[string]any{"id": id, "timeoutMs": timeout.Milliseconds()}}
	if p.Delay > 0 {
		ready["delayMs"] = p.Delay
	}
	snap := map[string]any{"name": id}
	if len(p.Mask) > 0 {
		snap["mask"] = p.Mask
	}
	if len(p.Ignore) > 0 {
		snap["ignore"] = p.Ignore
	}
	data, err := yaml.Marshal(map[string]any{"steps": []any{
		map[string]any{"launch": pageURL},
		ready,
		map[string]any{"snapshot": snap},
	}})
	if err != nil {
		return nil, err
	}
	if _, err := flow.Parse(FlowFile, data); err != nil {
		var fe *flow.Error
		if errors.As(err, &fe) {
			return nil, fmt.Errorf("story %s: parameters.toolserver: %s", id, fe.Msg)
		}
		return nil, fmt.Errorf("story %s: parameters.toolserver: %v", id, err)
	}
	return data, nil
}
