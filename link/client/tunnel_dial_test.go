package client

import (
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/link/tunnel"
	"github.com/toolserver/toolserver/wire"
)

// The client forwards only what it exposed, to its own loopback, whatever
// a tool-server asks of it.
func TestTunnelDialsOnlyItsTargets(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	targets, _ := wire.ParseTargets([]string{"localhost:" + strconv.Itoa(port)})
	tun := &Tunnel{targets: targets}
	c, err := tun.dialTarget(tunnel.Open{Host: "localhost", Port: port})
	if err != nil {
		t.Fatalf("an exposed target: %v", err)
	}
	c.Close()
	for _, o := range []tunnel.Open{
		{Host: "localhost", Port: port + 1},
		{Host: "example.com", Port: port},
		{Host: "10.0.0.1", Port: port},
		{Host: "", Port: port},
	} {
		if c, err := tun.dialTarget(o); err == nil || !strings.Contains(err.Error(), "is not one of the targets this client exposes") {
			if c != nil {
				c.Close()
			}
			t.Errorf("dial %+v: %v, want a refusal", o, err)
		}
	}
}
