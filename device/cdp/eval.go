package cdp

import (
	"context"
	"encoding/json"
)

// Eval evaluates a JavaScript expression in the device's current page,
// awaiting the promise it returns, and returns the value as JSON. It is
// for the tools that read a page's own state (a Storybook preview's);
// ctx bounds it, so an expression that never settles ends with ctx.
func (d *Device) Eval(ctx context.Context, expr string) (json.RawMessage, error) {
	var out json.RawMessage
	err := d.call(ctx, "eval", func(tab context.Context) error {
		b, err := evaluate[[]byte](tab, expr)
		out = b
		return err
	})
	return out, err
}
