package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolserver/toolserver/device/cdp/cdptest"
	"github.com/toolserver/toolserver/server"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/tool/devicetool"
	"github.com/toolserver/toolserver/tool/flowtool"
)

// streamLine is one NDJSON line of a call.
type streamLine struct {
	Event string          `json:"event"`
	Data  json.RawMessage `json:"data"`
	Error string          `json:"error"`
}

// streamCall posts a call for NDJSON and sends each line it answers on the
// channel it returns, which closes at the end of the answer.
func streamCall(t *testing.T, url, name, body string) <-chan streamLine {
	t.Helper()
	lines := make(chan streamLine, 64)
	resp := postNDJSON(t, url+"/tools/"+name, body)
	go func() {
		defer close(lines)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var l streamLine
			if json.Unmarshal(sc.Bytes(), &l) != nil {
				l = streamLine{Event: "unparsable", Error: sc.Text()}
			}
			lines <- l
		}
	}()
	return lines
}

// next returns the next line of a call within 30 s.
func next(t *testing.T, lines <-chan streamLine, who string) streamLine {
	t.Helper()
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatalf("%s: the answer ended without a result", who)
		}
		return l
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no line within 30 s", who)
	}
	return streamLine{}
}

// result reads a call's lines up to its result or error.
func result(t *testing.T, lines <-chan streamLine, who string) streamLine {
	t.Helper()
	for {
		if l := next(t, lines, who); l.Event == "result" || l.Event == "error" {
			return l
		}
	}
}

// TestFlowsOnOneDeviceTakeTurns: a run holds its device to the end. Flow
// B, sent while flow A waits between its launch: and its assert:, waits
// (its stream says so) instead of replacing A's page, then runs; a
// single-step call on the device meanwhile is refused with a 409.
func TestFlowsOnOneDeviceTakeTurns(t *testing.T) {
	t.Parallel()
	const id = "chromium-cdp-702x502"
	t.Cleanup(func() { cdptest.Stop(t, id) })
	dir := t.TempDir()
	atGate, openGate := make(chan struct{}, 1), make(chan struct{})
	reg := tool.NewRegistry()
	(&devicetool.Tools{Pool: cdptest.Pool(t)}).Register(reg)
	(&flowtool.Tools{Pool: cdptest.Pool(t), TempDir: dir}).Register(reg)
	reg.Add(&tool.Tool{Name: "gate", Description: "test: waits until the test opens it",
		Run: func(ctx context.Context, call *tool.Call) (any, error) {
			atGate <- struct{}{}
			select {
			case <-openGate:
				return "open", nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}})
	ts := httptest.NewServer(server.New(server.Config{Addr: "127.0.0.1:0", Tools: reg, TempDir: dir}).Handler())
	t.Cleanup(ts.Close)
	root := t.TempDir()
	writeFlow(t, root, "a", `steps:
  - launch: "{{URL}}/app.html"
  - tool: gate
  - assert: { text: { in: { id: out }, equals: not clicked } }
`)
	writeFlow(t, root, "b", `steps:
  - launch: "{{URL}}/noise.html"
  - assert: { visible: { id: c } }
`)
	args := func(name string) string {
		return fmt.Sprintf(`{"name":%q,"project_root":%q,"device":%q}`, name, root, id)
	}
	a := streamCall(t, ts.URL, "flow-execute", args("a"))
	select {
	case <-atGate:
	case <-time.After(30 * time.Second):
		t.Fatal("flow a did not reach its gate within 30 s")
	}
	b := streamCall(t, ts.URL, "flow-execute", args("b"))
	first := next(t, b, "flow b")
	if first.Event != "waiting" {
		close(openGate)
		t.Fatalf("flow b, sent while a runs: got a %q line first (%s), want it to wait; a then answered %s",
			first.Event, first.Data, result(t, a, "flow a").Data)
	}
	var w tool.Waiting
	if err := json.Unmarshal(first.Data, &w); err != nil || w.Device != id || w.Holder != "flow-execute" || w.Ahead != 1 {
		t.Fatalf("flow b's waiting line: got %s, want device %s held by flow-execute, 1 ahead", first.Data, id)
	}
	resp, body := do(t, "POST", ts.URL+"/tools/describe", fmt.Sprintf(`{"device":%q}`, id))
	if resp.StatusCode != 409 || !strings.Contains(string(body), tool.CodeDeviceBusy) {
		t.Errorf("describe during a run: got %d %s, want a 409 %s", resp.StatusCode, body, tool.CodeDeviceBusy)
	}
	close(openGate)
	for _, c := range []struct {
		name  string
		lines <-chan streamLine
	}{{"a", a}, {"b", b}} {
		l := result(t, c.lines, "flow "+c.name)
		var rep struct {
			OK     bool
			Passed int
		}
		if l.Event != "result" || json.Unmarshal(l.Data, &rep) != nil || !rep.OK {
			t.Fatalf("flow %s: got %s %s %s, want it to pass on its own page", c.name, l.Event, l.Data, l.Error)
		}
	}
}
