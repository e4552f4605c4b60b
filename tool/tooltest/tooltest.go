// Package tooltest calls the tools of a registry from tests and reads
// their results as a client reads them: encoded to JSON and decoded into a
// generic map.
//
// It is test support, not product code: only tests import it
// (internal/layout holds that rule).
package tooltest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/tool"
)

// Invoke calls the tool name of r with args, as a linked client when
// linked, and decodes its result into a generic map. A call gets a
// minute.
func Invoke(t testing.TB, r *tool.Registry, name string, args map[string]any, linked bool) (map[string]any, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Invoke(ctx, name, raw, tool.Options{Linked: linked})
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatalf("%s result: %v", name, err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s result %s: %v", name, b, err)
	}
	return out, nil
}

// Call is Invoke, not linked, of a call that must succeed.
func Call(t testing.TB, r *tool.Registry, name string, args map[string]any) map[string]any {
	t.Helper()
	res, err := Invoke(t, r, name, args, false)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// WantCode checks that err is a tool error with code, and returns it.
func WantCode(t testing.TB, err error, code string) *fault.Error {
	t.Helper()
	var te *fault.Error
	if !errors.As(err, &te) || te.Code != code {
		t.Fatalf("got %v, want a %s error", err, code)
	}
	return te
}
