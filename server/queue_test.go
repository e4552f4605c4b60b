package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/server"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/tool/devicetool"
)

// queueRig is a server over a pool of its own with one device and a
// queue of two, and a tool, grab, that takes a device the way the
// device tools do and keeps it until the test releases it.
type queueRig struct {
	url     string
	pool    *cdp.Pool
	got     chan string              // the device each grab got, in order
	release map[string]chan struct{} // closed to end the grab of an id
}

func newQueueRig(t *testing.T, ids ...string) *queueRig {
	t.Helper()
	pool := cdp.NewPool(cdp.Options{SharedBrowser: true, MaxDevices: 1, Evict: true, Queue: 2, Log: os.Stderr})
	t.Cleanup(func() { pool.Close() })
	q := &queueRig{pool: pool, got: make(chan string, len(ids)), release: map[string]chan struct{}{}}
	for _, id := range ids {
		q.release[id] = make(chan struct{})
	}
	reg := tool.NewRegistry()
	reg.Add(&tool.Tool{
		Name: "grab", Description: "test: takes a device until the test releases it",
		InputSchema: tool.Object(map[string]*tool.Schema{"device": tool.String("device")}, "device"),
		Run: func(ctx context.Context, call *tool.Call) (any, error) {
			a, err := tool.Decode[struct{ Device string }](call)
			if err != nil {
				return nil, err
			}
			d, err := devicetool.Acquire(ctx, pool, call, a.Device)
			if err != nil {
				return nil, err
			}
			q.got <- d.ID()
			select {
			case <-q.release[a.Device]:
				return map[string]any{"device": d.ID()}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
	})
	ts := httptest.NewServer(server.New(server.Config{Addr: "127.0.0.1:0", Tools: reg, TempDir: t.TempDir()}).Handler())
	t.Cleanup(ts.Close)
	q.url = ts.URL
	return q
}

// grab posts a grab of id for NDJSON under ctx and sends the lines of
// its answer on the channel it returns, which closes when the answer
// ends; a refusal before the stream comes as one line of event "status".
func (q *queueRig) grab(t *testing.T, ctx context.Context, id string) <-chan streamLine {
	t.Helper()
	lines := make(chan streamLine, 64)
	req, err := http.NewRequestWithContext(ctx, "POST", q.url+"/tools/grab", strings.NewReader(fmt.Sprintf(`{"device":%q}`, id)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/x-ndjson")
	go func() {
		defer close(lines)
		// Do returns with the first line: a call that gets its device at
		// once sends none before its result.
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			lines <- streamLine{Event: "status", Error: err.Error()}
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			lines <- streamLine{Event: "status", Error: resp.Status}
			return
		}
		sc := bufio.NewScanner(resp.Body)
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

// gotDevice returns the device the next grab got, within 30 s.
func (q *queueRig) gotDevice(t *testing.T, want string) {
	t.Helper()
	select {
	case id := <-q.got:
		if id != want {
			t.Fatalf("the next call to get its device got %s, want %s (first in, first served)", id, want)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("no call got a device within 30 s, want the call for %s to", want)
	}
}

// waitingAt reads a call's lines up to a waiting line at position pos,
// within 30 s, failing on any line but a waiting one.
func waitingAt(t *testing.T, lines <-chan streamLine, who string, pos int) tool.Waiting {
	t.Helper()
	deadline := time.After(30 * time.Second)
	var last tool.Waiting
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("%s: the answer ended, want it to wait at position %d", who, pos)
			}
			var w tool.Waiting
			if l.Event != "waiting" || json.Unmarshal(l.Data, &w) != nil {
				t.Fatalf("%s: got a %q line (%s %s), want it to wait at position %d", who, l.Event, l.Data, l.Error, pos)
			}
			if w.Position == pos {
				return w
			}
			last = w
		case <-deadline:
			t.Fatalf("%s: no waiting line at position %d within 30 s; the last said %+v", who, pos, last)
		}
	}
}

// TestDeviceQueue: with --max-devices 1 and --queue 2, while a call holds
// the one device, two calls for other devices wait in the queue and their
// streams say where (1, 2); a fourth is refused at once with a 503,
// Retry-After and the error shape. A waiting call whose client goes away
// leaves the queue (the one behind moves up), and as devices free up the
// waiting calls get theirs in arrival order, the idle device stopped to
// make room.
func TestDeviceQueue(t *testing.T) {
	t.Parallel()
	const (
		devA = "chromium-cdp-611x401"
		devB = "chromium-cdp-612x402"
		devC = "chromium-cdp-613x403"
		devD = "chromium-cdp-614x404"
		devE = "chromium-cdp-615x405"
	)
	q := newQueueRig(t, devA, devB, devC, devD, devE)
	ctx := t.Context()

	a := q.grab(t, ctx, devA)
	q.gotDevice(t, devA)

	ctxB, leaveB := context.WithCancel(ctx)
	defer leaveB()
	b := q.grab(t, ctxB, devB)
	w := waitingAt(t, b, "call for B", 1)
	if w.Device != devB || w.Ahead != 0 || w.Message != "waiting for a device: next in line (--max-devices 1, all busy)" {
		t.Errorf("call for B's waiting line: got %+v, want device %s, 0 ahead, next in line", w, devB)
	}
	c := q.grab(t, ctx, devC)
	w = waitingAt(t, c, "call for C", 2)
	if w.Ahead != 1 || w.Message != "waiting for a device: 1 call ahead of this one (--max-devices 1, all busy)" {
		t.Errorf("call for C's waiting line: got %+v, want 1 call ahead", w)
	}

	// The queue is full: the next call is refused at once.
	resp, body := do(t, "POST", q.url+"/tools/grab", fmt.Sprintf(`{"device":%q}`, devD), "Accept", "application/x-ndjson")
	var e struct {
		Error     string `json:"error"`
		ErrorCode string `json:"error_code"`
		ErrorKind string `json:"error_kind"`
	}
	if resp.StatusCode != http.StatusServiceUnavailable || json.Unmarshal(body, &e) != nil ||
		e.ErrorKind != "unavailable" || e.ErrorCode != devicetool.CodeQueueFull ||
		!strings.Contains(e.Error, "the queue is full: 2 calls wait ahead of this one") {
		t.Errorf("a call past the queue: got %d %s, want a 503 unavailable %s saying the queue is full with 2 calls ahead", resp.StatusCode, body, devicetool.CodeQueueFull)
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || s < 1 {
		t.Errorf("a call past the queue: got Retry-After %q, want whole seconds, at least 1", resp.Header.Get("Retry-After"))
	}

	// B's client goes away: C moves up, and E takes the place behind it.
	leaveB()
	waitingAt(t, c, "call for C once B left", 1)
	ee := q.grab(t, ctx, devE)
	waitingAt(t, ee, "call for E", 2)

	// A ends: C (first in line) gets the one device, A's, idle now,
	// stopped to make room; then E.
	close(q.release[devA])
	q.gotDevice(t, devC)
	if got := q.pool.List(); len(got) != 1 || got[0].ID != devC {
		t.Errorf("devices once C got its turn: got %+v, want %s alone (A, idle, stopped)", got, devC)
	}
	waitingAt(t, ee, "call for E once C got its device", 1)
	close(q.release[devC])
	q.gotDevice(t, devE)
	close(q.release[devE])
	for _, call := range []struct {
		who   string
		lines <-chan streamLine
		id    string
	}{{"call for A", a, devA}, {"call for C", c, devC}, {"call for E", ee, devE}} {
		l := result(t, call.lines, call.who)
		var res struct{ Device string }
		if l.Event != "result" || json.Unmarshal(l.Data, &res) != nil || res.Device != call.id {
			t.Errorf("%s: got %s %s %s, want its result on %s", call.who, l.Event, l.Data, l.Error, call.id)
		}
	}
	for l := range b {
		if l.Event == "result" {
			t.Errorf("call for B, whose client left: got a result %s, want none", l.Data)
		}
	}
	select {
	case id := <-q.got:
		t.Errorf("got a device for %s after the queue emptied, want none (B left)", id)
	default:
	}
}
