// Package storybooktool owns the tools that read a Storybook preview
// (iframe.html) open on a device: storybook-stories returns each story's
// parameters.toolserver and tags, storybook-ready waits until the story
// the page shows has rendered. toolserver storybook runs them as tool:
// steps of the flows it generates, so that they run on the run's device,
// in-process or on a tool-server over a link.
package storybooktool

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/storybook"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/tool/devicetool"
)

// The tools' names, as a generated flow's tool: steps call them
// (package storybook writes those flows).
const (
	ToolStories = storybook.ToolStories
	ToolReady   = storybook.ToolReady
)

// Bounds of the tools.
const (
	// DefaultTimeout is how long a tool waits for the preview (its store,
	// or the story's render) when the call sets no timeoutMs.
	DefaultTimeout = 15 * time.Second
	// MaxTimeout bounds timeoutMs.
	MaxTimeout = 2 * time.Minute
	// MaxParamBytes bounds the JSON of one story's parameters.toolserver
	// as the page hands it over; a larger one is reported, not read.
	MaxParamBytes = 16 << 10
	// MaxStories bounds the stories storybook-stories returns.
	MaxStories = 20_000
	// MaxErrorText bounds the error text of a story that threw.
	MaxErrorText = 2000
)

// Tools is the Storybook tool set over a pool.
type Tools struct{ Pool *cdp.Pool }

// Register adds storybook-stories and storybook-ready to r.
func (t *Tools) Register(r *tool.Registry) {
	r.Add(t.stories())
	r.Add(t.ready())
}

func props(extra map[string]*tool.Schema) map[string]*tool.Schema {
	p := map[string]*tool.Schema{
		"device":    tool.String("Device id chromium-cdp-<W>x<H> whose page shows the Storybook preview (a flow's tool: step gets the run's device)."),
		"timeoutMs": tool.Integer("How long to wait for the preview, in milliseconds (default 15000).", 1, float64(MaxTimeout/time.Millisecond)),
	}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

type args struct {
	Device    string `json:"device"`
	ID        string `json:"id"`
	TimeoutMs int    `json:"timeoutMs"`
}

func (a args) timeout() time.Duration {
	if a.TimeoutMs <= 0 {
		return DefaultTimeout
	}
	return min(time.Duration(a.TimeoutMs)*time.Millisecond, MaxTimeout)
}

func (t *Tools) stories() *tool.Tool {
	return &tool.Tool{
		Name: ToolStories,
		Description: "On a device whose page is a Storybook preview (iframe.html, Storybook 8 to 10), wait for the preview's store " +
			"and return each story's tags and parameters.toolserver ({skip, devices, mask, ignore, delay}) as " +
			"{stories: {<id>: {tags, toolserver}}}, from the preview's extract().",
		InputSchema: tool.Object(props(nil), "device"),
		Run:         t.handler(storiesScript, decodeStories),
	}
}

func (t *Tools) ready() *tool.Tool {
	return &tool.Tool{
		Name: ToolReady,
		Description: "On a device whose page is a Storybook preview showing story id, wait until the preview has rendered it " +
			"(its render phase finished, play function included) and the page's fonts have loaded. A story that throws, " +
			"is missing or does not render within timeoutMs is an error naming the story.",
		InputSchema: tool.Object(props(map[string]*tool.Schema{
			"id": tool.String("The story id (e.g. button--primary), as iframe.html?id= names it."),
		}), "device", "id"),
		Run: t.handler(readyScript, decodeReady),
	}
}

// handler is a tool that evaluates script(args) on the call's device and
// hands the page's answer to decode.
func (t *Tools) handler(script func(args) string, decode func(args, json.RawMessage) (any, error)) tool.Handler {
	return func(ctx context.Context, call *tool.Call) (any, error) {
		a, err := tool.Decode[args](call)
		if err != nil {
			return nil, err
		}
		if a.Device == "" {
			return nil, fault.FieldError("device", "device: required (a device id such as chromium-cdp-1280x800)")
		}
		d, err := devicetool.Acquire(ctx, t.Pool, call, a.Device)
		if err != nil {
			return nil, err
		}
		if ctx, err = call.HoldDevice(ctx, d.ID()); err != nil {
			return nil, err
		}
		// The script waits timeout itself and answers; the context's
		// margin is for a page that stops answering at all.
		ctx, cancel := context.WithTimeout(ctx, a.timeout()+10*time.Second)
		defer cancel()
		raw, err := d.Eval(ctx, script(a))
		if err != nil {
			return nil, devicetool.DeviceError(err)
		}
		return decode(a, raw)
	}
}

// pageAnswer is what the scripts hand back: a state and its details.
type pageAnswer struct {
	State   string                         `json:"state"`
	Message string                         `json:"message"`
	Phase   string                         `json:"phase"`
	Stories map[string]storybook.Extracted `json:"stories"`
}

func decodeStories(a args, raw json.RawMessage) (any, error) {
	var p pageAnswer
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("storybook-stories: the page's answer is not JSON: %w", err)
	}
	switch p.State {
	case "ok":
		if len(p.Stories) > MaxStories {
			return nil, &fault.Error{Kind: fault.Validation, Message: fmt.Sprintf("storybook-stories: the preview has %d stories, over the cap of %d", len(p.Stories), MaxStories)}
		}
		return storybook.Stories{Stories: p.Stories}, nil
	case "timeout":
		return nil, &fault.Error{Kind: fault.Validation, Message: fmt.Sprintf("storybook-stories: no Storybook preview answered within %s (%s); is the page a Storybook 8-10 iframe.html?", a.timeout(), capText(p.Message))}
	}
	return nil, &fault.Error{Kind: fault.Validation, Message: "storybook-stories: the preview failed: " + capText(p.Message)}
}

func decodeReady(a args, raw json.RawMessage) (any, error) {
	var p pageAnswer
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("storybook-ready: the page's answer is not JSON: %w", err)
	}
	switch p.State {
	case "rendered":
		return map[string]any{"id": a.ID, "phase": p.Phase}, nil
	case "timeout":
		return nil, &fault.Error{Kind: fault.Validation, Message: fmt.Sprintf("story %s did not render within %s (render phase: %s)", a.ID, a.timeout(), capText(p.Phase))}
	case "missing":
		return nil, &fault.Error{Kind: fault.Validation, Message: fmt.Sprintf("story %s: the preview has no such story", a.ID)}
	}
	return nil, &fault.Error{Kind: fault.Validation, Message: fmt.Sprintf("story %s threw: %s", a.ID, capText(p.Message))}
}

// capText bounds a text that comes from the page: MaxErrorText
// characters, then the ellipsis.
func capText(s string) string { return fault.Clip(s, MaxErrorText, fault.Runes, fault.Beyond) }

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// waitPreview is the in-page helper both scripts start with: it polls,
// every 20 ms until the deadline, for window.__STORYBOOK_PREVIEW__ (set
// by Storybook 8 to 10's PreviewWeb when the preview boots) and its
// ready() (the story store initialised).
const waitPreview = `
const tick = () => new Promise((r) => setTimeout(r, 20));
const errorShown = () => document.body && document.body.classList.contains('sb-show-errordisplay');
const errorText = () => {
  const m = document.getElementById('error-message'), s = document.getElementById('error-stack');
  // The message, else the stack's first line: the stack repeats it.
  const text = ((m && m.textContent) || '').trim();
  return text || (((s && s.textContent) || '').trim().split('\n')[0] || 'the preview showed its error display');
};
while (!window.__STORYBOOK_PREVIEW__) {
  if (Date.now() > end) return { state: 'timeout', message: 'no window.__STORYBOOK_PREVIEW__', phase: 'no preview' };
  await tick();
}
const preview = window.__STORYBOOK_PREVIEW__;
const left = Math.max(0, end - Date.now());
const ready = await Promise.race([
  Promise.resolve(preview.ready ? preview.ready() : undefined).then(() => 'ready', (e) => 'failed: ' + ((e && e.message) || e)),
  new Promise((r) => setTimeout(() => r('timeout'), left)),
]);
if (ready === 'timeout') return { state: 'timeout', message: 'the preview never became ready', phase: 'preparing' };
if (ready !== 'ready') return { state: 'error', message: ready };
`

// storiesScript reads every story's tags and parameters.toolserver with
// the preview's extract(), which loads every CSF file. Functions and
// values that do not survive JSON are dropped, as JSON.stringify drops
// them; a story's parameters past MaxParamBytes are reported instead.
func storiesScript(a args) string {
	return fmt.Sprintf(`(async () => {
const end = Date.now() + %d;
%s
let all;
try { all = await preview.extract(); } catch (e) { return { state: 'error', message: 'extract(): ' + ((e && e.message) || e) }; }
const stories = {};
for (const [id, s] of Object.entries(all || {})) {
  const out = { tags: Array.isArray(s.tags) ? s.tags.filter((t) => typeof t === 'string') : [] };
  const p = s.parameters && s.parameters.toolserver;
  if (p !== undefined) {
    let j;
    try { j = JSON.stringify(p); } catch (e) { out.error = 'parameters.toolserver is not JSON: ' + e.message; }
    if (j !== undefined && j.length > %d) out.error = 'parameters.toolserver is ' + j.length + ' bytes of JSON, over the cap of %d';
    else if (j !== undefined) out.toolserver = JSON.parse(j);
  }
  stories[id] = out;
}
return { state: 'ok', stories };
})()`, a.timeout().Milliseconds(), waitPreview, MaxParamBytes, MaxParamBytes)
}

// readyScript waits for the story's render: the preview's StoryRender
// for id reaching the phase "finished" (after the render, the play
// function and afterEach; Storybook emits storyRendered at "completed"),
// then document.fonts.ready. The preview's error display (shown on
// storyThrewException, storyErrored and a play function that threw) is
// the story's error; the no-preview display is a missing story.
func readyScript(a args) string {
	return fmt.Sprintf(`(async () => {
const end = Date.now() + %d;
const id = %s;
%s
for (;;) {
  if (errorShown()) return { state: 'error', message: errorText() };
  if (document.body && document.body.classList.contains('sb-show-nopreview')) return { state: 'missing' };
  const r = (preview.storyRenders || []).find((r) => r.id === id);
  if (r && r.phase === 'finished') {
    if (errorShown()) return { state: 'error', message: errorText() };
    await document.fonts.ready;
    return { state: 'rendered', phase: r.phase };
  }
  if (Date.now() > end) return { state: 'timeout', phase: r ? r.phase : 'no render of this story started' };
  await tick();
}
})()`, a.timeout().Milliseconds(), quote(a.ID), waitPreview)
}
