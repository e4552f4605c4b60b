package server

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/toolserver/toolserver/link/tunnel"
)

// TestTunnelIDResolvesOnceAnswered: a client may name its tunnel in a
// call the moment it reads the 101, so the id must resolve by then. The
// 101 once went out before the session was stored, and a call that came
// quickly was told no such tunnel was open (seen in BenchmarkExposeExample,
// two runs in a hundred).
func TestTunnelIDResolvesOnceAnswered(t *testing.T) {
	ts := NewTunnels(nil)
	defer ts.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := ts.Upgrade(w, r, http.NotFoundHandler()); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	}))
	defer srv.Close()
	for i := range 200 {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: %s\r\n%s: localhost:5173\r\n\r\n", tunnel.Path, tunnel.Protocol, tunnel.HeaderExpose)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusSwitchingProtocols {
			t.Fatalf("open %d: got %s, want 101", i, resp.Status)
		}
		tun, err := ts.Get(resp.Header.Get(tunnel.HeaderID))
		if err != nil {
			t.Fatalf("open %d: Get right after the 101: %v", i, err)
		}
		c.Close()
		select {
		case <-tun.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("open %d: the tunnel did not close with its connection", i)
		}
	}
}
