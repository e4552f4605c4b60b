package mcp_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolserver/toolserver/server/mcp"
	"github.com/toolserver/toolserver/tool"
)

// A message that declares more than the cap is refused before a byte of
// it is read: the client, still holding the body, gets its 413 at once.
// Before the budget the SDK read up to the cap first, so this request,
// whose body never comes, had no answer.
func TestBodyDeclaredTooLargeRefusedUnread(t *testing.T) {
	f := newFixture(t)
	srv := mcp.New(f.config())
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	defer srv.Close()
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n{", ts.Listener.Addr(), mcp.MaxRequestBody+1)
	// The deadline only bounds a failure: a fixed server answers at once.
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a message declared over the cap: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413", resp.StatusCode)
	}
}

// While a large call holds the budget, another large message waits, then
// gets 503 with Retry-After; once the call ends, a large call goes again.
func TestBodyBudgetBoundsMessagesAtOnce(t *testing.T) {
	f := newFixture(t)
	entered, release := make(chan struct{}), make(chan struct{})
	f.reg.Add(&tool.Tool{
		Name:        "hold",
		InputSchema: tool.Object(map[string]*tool.Schema{"pad": tool.String("Padding.")}),
		Run: func(ctx context.Context, call *tool.Call) (any, error) {
			close(entered)
			<-release
			return map[string]any{"held": true}, nil
		},
	})
	cfg := f.config()
	cfg.BodyBudget = 1 << 20
	cfg.BodyWait = 100 * time.Millisecond
	srv := mcp.New(cfg)
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	defer srv.Close()
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: ts.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	pad := strings.Repeat("a", 700<<10)
	held := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "hold", Arguments: map[string]any{"pad": pad}})
		held <- err
	}()
	<-entered
	resp, err := http.Post(ts.URL, "application/json", strings.NewReader(`{"pad":"`+pad+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a second large message while the budget is held: status %d, Retry-After %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	close(release)
	if err := <-held; err != nil {
		t.Fatalf("the held call: %v", err)
	}
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": pad}})
	if err != nil || res.IsError {
		t.Fatalf("a large call once the budget is free: %v %+v", err, res)
	}
	http.DefaultClient.CloseIdleConnections()
}
