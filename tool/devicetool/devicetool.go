// Package devicetool owns the device tools of the server (list-devices,
// boot-device, stop-device, open-url, describe, screenshot, the gestures,
// keyboard and the await tools): their schemas and handlers over a
// device/cdp pool, and the mapping of device errors to tool errors.
package devicetool

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/store"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/wire"
)

// Tools is the device tool set over a pool.
type Tools struct {
	// Pool boots the devices. When it found no Chromium every device call
	// fails with the pool's reason while the tools stay listed.
	Pool      *cdp.Pool
	Artifacts *store.Artifacts
}

// deviceProps are the properties every device tool takes: device, or udid
// as the published Argent client names it.
func deviceProps(extra map[string]*tool.Schema) map[string]*tool.Schema {
	p := map[string]*tool.Schema{
		"device": {Type: "string", Description: "Device id chromium-cdp-<W>x<H>, e.g. chromium-cdp-1280x800 (the CSS viewport; screenshots are exactly W×H).", Pattern: `^chromium-cdp-[0-9]+x[0-9]+$`},
		"udid":   {Type: "string", Description: "Alias of device, as Argent clients send it."},
	}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

type deviceArgs struct {
	Device string `json:"device"`
	UDID   string `json:"udid"`
}

func (a deviceArgs) id() (string, error) {
	switch {
	case a.Device != "" && a.UDID != "" && a.Device != a.UDID:
		return "", fault.FieldError("device", "device and udid name different devices (%q, %q)", a.Device, a.UDID)
	case a.Device != "":
		return a.Device, nil
	case a.UDID != "":
		return a.UDID, nil
	}
	return "", fault.FieldError("device", "device: required (a device id such as chromium-cdp-1280x800)")
}

// callLimit bounds one device tool call.
const callLimit = 3 * time.Minute

// named is an argument struct that names a device (it embeds deviceArgs).
type named interface{ id() (string, error) }

// onDevice makes the handler of a device tool: decode the arguments into
// A, run check (argument rules beyond the schema) before any browser
// starts, resolve the device (booting it on first use), and run fn; device
// errors become tool errors of the right kind.
func onDevice[A named](t *Tools, check func(A) error, fn func(context.Context, *cdp.Device, A) (any, error)) tool.Handler {
	return func(ctx context.Context, call *tool.Call) (any, error) {
		a, err := tool.Decode[A](call)
		if err != nil {
			return nil, err
		}
		if check != nil {
			if err := check(a); err != nil {
				return nil, err
			}
		}
		id, err := a.id()
		if err != nil {
			return nil, err
		}
		d, err := Acquire(ctx, t.Pool, call, id)
		if err != nil {
			return nil, err
		}
		// One call drives a device at a time (tool.Call.HoldDevice).
		if ctx, err = call.HoldDevice(ctx, d.ID()); err != nil {
			return nil, err
		}
		// A page whose script never returns must not hold a call (and the
		// device) forever; the longest wait a tool accepts is 120 s.
		ctx, cancel := context.WithTimeout(ctx, callLimit)
		defer cancel()
		res, err := fn(ctx, d, a)
		if err != nil {
			return nil, DeviceError(err)
		}
		return res, nil
	}
}

// CodeQueueFull is the error code of a call refused because every
// device is busy and the queue of calls waiting for one is full.
const CodeQueueFull = wire.CodeQueueFull

// Acquire returns the device id of pool for call, booting it on first
// use, and keeps it in use until the call ends, so that the pool does
// not stop it to make room for another. When every device is busy the
// call waits its turn in the pool's queue and its stream says where it
// stands (tool.Waiting with a Position); a call inside one that holds a
// device does not wait (tool.Call.HoldsDevice). Errors are tool errors.
func Acquire(ctx context.Context, pool *cdp.Pool, call *tool.Call, id string) (*cdp.Device, error) {
	var waiting func(cdp.QueuePosition)
	if !call.HoldsDevice(ctx) {
		waiting = func(q cdp.QueuePosition) { call.Progress(queueWaiting(id, q)) }
	}
	d, release, err := pool.Acquire(ctx, id, waiting)
	if err != nil {
		return nil, DeviceError(err)
	}
	call.OnDone(release)
	return d, nil
}

// queueWaiting is the waiting line of a call at q in the pool's queue.
func queueWaiting(id string, q cdp.QueuePosition) tool.Waiting {
	where := "next in line"
	if ahead := q.Position - 1; ahead > 0 {
		where = fmt.Sprintf("%d %s ahead of this one", ahead, plural(ahead, "call", "calls"))
	}
	return tool.Waiting{Device: id, Ahead: q.Position - 1, Position: q.Position,
		Message: fmt.Sprintf("waiting for a device: %s (--max-devices %d, all busy)", where, q.MaxDevices)}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// DeviceError maps an error of device/cdp to a tool error of the right kind.
func DeviceError(err error) error {
	if err == nil {
		return nil
	}
	var te *fault.Error
	var full *cdp.QueueFullError
	switch {
	case errors.As(err, &te):
		return err
	case errors.Is(err, cdp.ErrBadID):
		return &fault.Error{Kind: fault.Validation, Field: "device", Message: err.Error(), Err: err}
	case errors.Is(err, cdp.ErrFileURL), errors.Is(err, cdp.ErrBadURL), errors.Is(err, cdp.ErrHostNotAllowed), errors.Is(err, cdp.ErrPageLoad):
		// The URL a caller gave: refused, or its page did not load.
		return &fault.Error{Kind: fault.Validation, Field: "url", Message: err.Error(), Err: err}
	case errors.As(err, &full):
		return &fault.Error{Kind: fault.Unavailable, Code: CodeQueueFull, RetryAfter: full.RetryAfter, Err: err,
			Message: fmt.Sprintf("the tool-server is busy: %v; try again in %s, or another tool-server (its --max-devices and --queue set these bounds)", err, full.RetryAfter.Round(time.Second))}
	case errors.Is(err, cdp.ErrTooManyDevices):
		return &fault.Error{Kind: fault.Conflict, Code: "TOO_MANY_DEVICES", Message: err.Error(), Err: err}
	case errors.Is(err, cdp.ErrNoChromium), errors.Is(err, cdp.ErrCrashed), errors.Is(err, cdp.ErrClosed), errors.Is(err, cdp.ErrNoNetwork):
		return &fault.Error{Kind: fault.Unavailable, Message: err.Error(), Err: err}
	case errors.Is(err, cdp.ErrNotBooted):
		return &fault.Error{Kind: fault.NotFound, Message: err.Error(), Err: err}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return &fault.Error{Kind: fault.Unavailable, Message: err.Error(), Err: err}
	}
	return &fault.Error{Kind: fault.Internal, Message: err.Error(), Err: err}
}

func ms(v float64, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return time.Duration(v * float64(time.Millisecond))
}

// Register adds the device tools to r.
func (t *Tools) Register(r *tool.Registry) {
	for _, tl := range []*tool.Tool{
		t.listDevices(), t.bootDevice(), t.stopDevice(), t.openURL(), t.describe(), t.screenshot(),
		t.gestureTap(), t.gestureSwipe(), t.gestureScroll(), t.keyboard(), t.awaitUIElement(), t.awaitScreenIdle(),
	} {
		r.Add(tl)
	}
}

func (t *Tools) listDevices() *tool.Tool {
	return &tool.Tool{
		Name:        "list-devices",
		Description: "List the Chromium devices: the booted ones with their state, and how to name a new one (chromium-cdp-<W>x<H> boots on first use).",
		InputSchema: tool.Object(map[string]*tool.Schema{}),
		Run: func(ctx context.Context, call *tool.Call) (any, error) {
			return map[string]any{
				"devices": t.Pool.List(),
				"hint":    "Any chromium-cdp-<W>x<H> id (sides 100..4096) boots on first use; e.g. chromium-cdp-1280x800.",
			}, nil
		},
	}
}

func (t *Tools) bootDevice() *tool.Tool {
	return &tool.Tool{
		Name:        "boot-device",
		Description: "Boot a Chromium device (a headless browser with a W×H viewport at device-pixel-ratio 1). Booting an already booted device returns it.",
		InputSchema: tool.Object(deviceProps(map[string]*tool.Schema{
			"url": tool.String("Optional page to open after booting."),
		})),
		Run: onDevice(t, func(a bootArgs) error {
			if a.URL != "" {
				return DeviceError(t.Pool.CheckURL(a.URL))
			}
			return nil
		}, func(ctx context.Context, d *cdp.Device, a bootArgs) (any, error) {
			if a.URL != "" {
				if err := d.Launch(ctx, a.URL); err != nil {
					return nil, err
				}
			}
			w, h := d.Size()
			return map[string]any{"id": d.ID(), "platform": "chromium", "width": w, "height": h, "booted": true}, nil
		}),
	}
}

func (t *Tools) stopDevice() *tool.Tool {
	return &tool.Tool{
		Name:        "stop-device",
		Description: "Stop a Chromium device and close its browser.",
		InputSchema: tool.Object(deviceProps(nil)),
		Run: func(ctx context.Context, call *tool.Call) (any, error) {
			a, err := tool.Decode[deviceArgs](call)
			if err != nil {
				return nil, err
			}
			id, err := a.id()
			if err != nil {
				return nil, err
			}
			if err := t.Pool.Stop(id); err != nil {
				return nil, DeviceError(err)
			}
			return map[string]any{"id": id, "stopped": true}, nil
		},
	}
}

func (t *Tools) openURL() *tool.Tool {
	return &tool.Tool{
		Name:        "open-url",
		Description: "Open a URL on a device and wait until it has loaded. With fresh: true the page gets a new browser context (no cookies or storage), as a flow's launch step does.",
		InputSchema: tool.Object(deviceProps(map[string]*tool.Schema{
			"url":   tool.String("The URL to open: http, https, data or about:blank, and file where the tool-server allows it."),
			"fresh": tool.Bool("Start from a fresh browser context."),
		}), "url"),
		Run: onDevice(t, func(a openArgs) error {
			if a.URL == "" {
				return fault.FieldError("url", "url: required")
			}
			// A URL no device opens is refused before a browser starts.
			return DeviceError(t.Pool.CheckURL(a.URL))
		}, func(ctx context.Context, d *cdp.Device, a openArgs) (any, error) {
			open := d.Navigate
			if a.Fresh {
				open = d.Launch
			}
			if err := open(ctx, a.URL); err != nil {
				return nil, err
			}
			return map[string]any{"opened": a.URL, "device": d.ID()}, nil
		}),
	}
}

func (t *Tools) describe() *tool.Tool {
	return &tool.Tool{
		Name:        "describe",
		Description: "List the page's elements that a selector can reach, in reading order: id (DOM id, data-testid, aria-label or name), text, role, frame normalized to the viewport (0..1), and visibility.",
		InputSchema: tool.Object(deviceProps(nil)),
		Run: onDevice(t, nil, func(ctx context.Context, d *cdp.Device, a deviceArgs) (any, error) {
			els, err := d.Describe(ctx)
			if err != nil {
				return nil, err
			}
			w, h := d.Size()
			return map[string]any{"device": d.ID(), "width": w, "height": h, "url": d.URL(), "elements": els}, nil
		}),
	}
}

func (t *Tools) screenshot() *tool.Tool {
	return &tool.Tool{
		Name:        "screenshot",
		Description: "Capture the device's viewport as a PNG of exactly W×H pixels, returned as an artifact (GET /artifacts/{id}).",
		InputSchema: tool.Object(deviceProps(nil)),
		OutputHint:  "image",
		Run: onDevice(t, nil, func(ctx context.Context, d *cdp.Device, a deviceArgs) (any, error) {
			png, err := d.Screenshot(ctx)
			if err != nil {
				return nil, err
			}
			h, err := t.Artifacts.Put(fmt.Sprintf("screenshot-%s-%d.png", d.ID(), time.Now().UnixMilli()), "image/png", png)
			if err != nil {
				return nil, err
			}
			w, hh := d.Size()
			return map[string]any{"image": h, "width": w, "height": hh, "device": d.ID()}, nil
		}),
	}
}

type bootArgs struct {
	deviceArgs
	URL string `json:"url"`
}

type openArgs struct {
	deviceArgs
	URL   string `json:"url"`
	Fresh bool   `json:"fresh"`
}
