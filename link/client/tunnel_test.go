package client_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolserver/toolserver/internal/clientfs"
	linkclient "github.com/toolserver/toolserver/link/client"
	linkserver "github.com/toolserver/toolserver/link/server"
	"github.com/toolserver/toolserver/link/tunnel"
	"github.com/toolserver/toolserver/wire"
)

// tunnelServer is the tool-server's side of a tunnel, as serve mounts it:
// GET /tunnels and the capability.
func tunnelServer(t *testing.T, offer bool) (*httptest.Server, *linkserver.Tunnels) {
	t.Helper()
	ts := linkserver.NewTunnels(nil)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /tools", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"tools":[{"name":"via-`+r.Header.Get("X-Via")+`"}]}`)
	})
	viaTunnel := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("X-Via", "tunnel")
		mux.ServeHTTP(w, r)
	})
	mux.HandleFunc("GET /v1/capabilities", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if offer {
			io.WriteString(w, `{"capabilities":{"runs":true,"tunnel":true}}`)
		} else {
			io.WriteString(w, `{"capabilities":{"runs":true}}`)
		}
	})
	mux.HandleFunc("GET "+tunnel.Path, func(w http.ResponseWriter, r *http.Request) {
		if err := ts.Upgrade(w, r, viaTunnel); err != nil {
			http.Error(w, `{"error":`+quote(err.Error())+`}`, http.StatusBadRequest)
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		ts.Close()
		srv.Close()
	})
	return srv, ts
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `'`) + `"` }

// viaProxy is an HTTP client whose every request goes through the
// binding's proxy, as the run's browser's do.
func viaProxy(t *testing.T, b *linkserver.Binding, roots *tls.Config) *http.Client {
	t.Helper()
	pu, err := url.Parse(b.ProxyURL())
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: roots, DisableKeepAlives: true}}
}

// openBound opens a tunnel to srv and binds it, as a call naming it
// does; both close with the test.
func openBound(t *testing.T, srv *httptest.Server, tunnels *linkserver.Tunnels, opts linkclient.TunnelOptions) (*linkclient.Tunnel, *linkserver.Tunnel, *linkserver.Binding) {
	t.Helper()
	tun, err := linkclient.NewClient(srv.URL, "", nil).OpenTunnel(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tun.Close() })
	st, err := tunnels.Get(tun.ID())
	if err != nil {
		t.Fatal(err)
	}
	b, err := st.Bind(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return tun, st, b
}

func get(t *testing.T, c *http.Client, u string) (int, string, error) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// echoSite is a site on the client's loopback: its page, and an upgrade
// to a protocol that echoes each line, as a dev server's hot reload
// holds a WebSocket open.
func echoSite(t *testing.T) *httptest.Server {
	t.Helper()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "echo" {
			io.WriteString(w, "the client's page at "+r.Host)
			return
		}
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
		rw.Flush()
		for {
			line, err := rw.ReadString('\n')
			if err != nil {
				return
			}
			rw.WriteString("echo " + line)
			rw.Flush()
		}
	}))
	t.Cleanup(site.Close)
	return site
}

func port(t *testing.T, u string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return p.Port()
}

func TestTunnelCarriesHTTPUpgradesAndTLS(t *testing.T) {
	srv, tunnels := tunnelServer(t, true)
	site := echoSite(t)
	tlsSite := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "secure "+r.URL.Path)
	}))
	defer tlsSite.Close()
	targets, err := wire.ParseTargets([]string{"localhost:" + port(t, site.URL), "127.0.0.1:" + port(t, tlsSite.URL)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	tun, st, b := openBound(t, srv, tunnels, linkclient.TunnelOptions{Targets: targets})

	// HTTP/1.1: the page, asked for at localhost, comes from the client.
	roots := &tls.Config{RootCAs: tlsSite.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
	c := viaProxy(t, b, roots)
	if code, body, err := get(t, c, "http://localhost:"+port(t, site.URL)+"/"); err != nil || code != 200 || body != "the client's page at localhost:"+port(t, site.URL) {
		t.Fatalf("GET through the tunnel: %d %q %v", code, body, err)
	}

	// TLS, by CONNECT: the certificate is the client's site's own.
	if code, body, err := get(t, c, "https://127.0.0.1:"+port(t, tlsSite.URL)+"/x"); err != nil || code != 200 || body != "secure /x" {
		t.Fatalf("GET https through the tunnel: %d %q %v", code, body, err)
	}

	// An upgrade (a dev server's WebSocket) stays open both ways.
	conn, err := net.Dial("tcp", strings.TrimPrefix(b.ProxyURL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	target := "localhost:" + port(t, site.URL)
	io.WriteString(conn, "GET http://"+target+"/hmr HTTP/1.1\r\nHost: "+target+"\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("the upgrade through the proxy: %v %v", resp, err)
	}
	for _, msg := range []string{"one", "two"} {
		io.WriteString(conn, msg+"\n")
		if line, err := br.ReadString('\n'); err != nil || line != "echo "+msg+"\n" {
			t.Fatalf("after the upgrade: %q %v", line, err)
		}
	}
	if st.Targets().String() != targets.String() {
		t.Errorf("the server's targets: %s", st.Targets())
	}

	// The client's calls go through the tunnel, to the server that holds
	// it, not through the connection a load balancer would spread.
	direct := linkclient.NewClient(srv.URL, "", nil)
	for _, tc := range []struct {
		c    *linkclient.Client
		want string
	}{{direct, "via-"}, {tun.Client(direct), "via-tunnel"}} {
		tools, err := tc.c.Tools(ctx)
		if err != nil || len(tools) != 1 || tools[0].Name != tc.want {
			t.Errorf("GET /tools: %v %v, want %s", tools, err, tc.want)
		}
	}
}

func TestTunnelRefusesWhatItDoesNotExpose(t *testing.T) {
	srv, tunnels := tunnelServer(t, true)
	site := echoSite(t)
	other := echoSite(t)
	targets, _ := wire.ParseTargets([]string{"localhost:" + port(t, site.URL)})
	tun, st, b := openBound(t, srv, tunnels, linkclient.TunnelOptions{Targets: targets, Only: true})
	c := viaProxy(t, b, nil)
	otherHost := "localhost:" + port(t, other.URL)
	if code, _, err := get(t, c, "http://"+otherHost+"/"); err == nil {
		t.Fatalf("a port not exposed, with --expose-only: answered %d", code)
	}
	if why := b.Refusal(otherHost); !strings.Contains(why, "not one of the targets this run exposes") || !strings.Contains(why, "--expose-only") {
		t.Errorf("the refusal: %q", why)
	}
	if _, _, err := get(t, c, "http://example.com/"); err == nil || !strings.Contains(b.Refusal("example.com:80"), "--expose-only") {
		t.Errorf("another host, with --expose-only: %v, %q", err, b.Refusal("example.com:80"))
	}

	// A page that finds the proxy's port asks in origin form: refused.
	code, body, err := get(t, &http.Client{}, b.ProxyURL()+"/")
	if err != nil || code != http.StatusBadRequest || !strings.Contains(body, "one run's proxy") {
		t.Errorf("an origin-form request to the proxy: %d %q %v", code, body, err)
	}

	// Another id is no tunnel.
	if _, err := tunnels.Get("not-" + tun.ID()); err == nil || !strings.Contains(err.Error(), "no tunnel with this id is open") {
		t.Errorf("an unknown id: %v", err)
	}

	// The client goes: the tunnel, and the proxy with it, close.
	tun.Close()
	select {
	case <-st.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the server's tunnel outlived the client's")
	}
	if _, err := tunnels.Get(tun.ID()); err == nil {
		t.Error("a closed tunnel is still found")
	}
	select {
	case <-b.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the call's proxy outlived its tunnel")
	}
	if _, _, err := get(t, c, "http://localhost:"+port(t, site.URL)+"/"); err == nil {
		t.Fatal("the proxy still answers after its tunnel closed")
	}
}

func TestTunnelServesTheClientsFilesReadOnly(t *testing.T) {
	srv, tunnels := tunnelServer(t, true)
	project := t.TempDir()
	outside := t.TempDir()
	os.MkdirAll(filepath.Join(project, "site"), 0o755)
	os.WriteFile(filepath.Join(project, "site", "index.html"), []byte("<h1>shop</h1>"), 0o644)
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("the-hidden-content"), 0o644)
	os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(project, "site", "link.txt"))
	targets, _ := wire.ParseTargets([]string{"localhost:1"})
	tun, err := linkclient.NewClient(srv.URL, "", nil).OpenTunnel(t.Context(), linkclient.TunnelOptions{Targets: targets, Only: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tun.Close()
	real, _ := filepath.EvalSymlinks(project)
	tun.ServeFiles(&clientfs.Policy{Roots: []string{real}})
	st, _ := tunnels.Get(tun.ID())
	b, err := st.Bind(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	c := viaProxy(t, b, nil)
	at := func(p string) string { return "http://" + wire.FilesHost + filepath.ToSlash(p) }
	if code, body, err := get(t, c, at(filepath.Join(real, "site", "index.html"))); err != nil || code != 200 || body != "<h1>shop</h1>" {
		t.Fatalf("a file of the project: %d %q %v", code, body, err)
	}
	for _, tc := range []struct {
		path string
		code int
	}{
		{filepath.Join(outside, "secret.txt"), http.StatusForbidden},
		{filepath.Join(real, "site", "link.txt"), http.StatusForbidden},
		{filepath.Join(real, "site", "..", "..", filepath.Base(outside), "secret.txt"), http.StatusForbidden},
		{filepath.Join(real, "site", "missing.html"), http.StatusNotFound},
		{filepath.Join(real, "site"), http.StatusNotFound},
	} {
		code, body, err := get(t, c, at(tc.path))
		if err != nil || code != tc.code || strings.Contains(body, "the-hidden-content") {
			t.Errorf("GET %s: %d %q %v, want %d", tc.path, code, body, err, tc.code)
		}
	}
	resp, err := c.Post(at(filepath.Join(real, "site", "index.html")), "text/plain", strings.NewReader("x"))
	if err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST to a file: %v %v", resp, err)
	}
	if resp != nil {
		resp.Body.Close()
	}
}

func TestOpenTunnelOnAServerWithout(t *testing.T) {
	srv, _ := tunnelServer(t, false)
	targets, _ := wire.ParseTargets([]string{"localhost:5173"})
	_, err := linkclient.NewClient(srv.URL, "", nil).OpenTunnel(t.Context(), linkclient.TunnelOptions{Targets: targets})
	if !errors.Is(err, linkclient.ErrNoTunnel) || !strings.Contains(err.Error(), `lists "tunnel"`) || !strings.Contains(err.Error(), "without --expose") {
		t.Fatalf("a server without the capability: %v", err)
	}
	// Argent's own tool-server has no /v1 at all.
	bare := httptest.NewServer(http.NotFoundHandler())
	defer bare.Close()
	if _, err := linkclient.NewClient(bare.URL, "", nil).OpenTunnel(context.Background(), linkclient.TunnelOptions{Targets: targets}); !errors.Is(err, linkclient.ErrNoTunnel) {
		t.Fatalf("a server with no /v1: %v", err)
	}
}

func TestTunnelUpgradeRefusals(t *testing.T) {
	srv, _ := tunnelServer(t, true)
	for _, tc := range []struct {
		name    string
		headers map[string]string
		want    string
	}{
		{"no upgrade", map[string]string{}, "came without Connection: Upgrade"},
		{"a target off the loopback", map[string]string{"Connection": "Upgrade", "Upgrade": tunnel.Protocol, tunnel.HeaderExpose: "10.0.0.1:80"}, "is not this machine's loopback"},
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+tunnel.Path, nil)
		for k, v := range tc.headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), tc.want) {
			t.Errorf("%s: %d %s, want 400 with %q", tc.name, resp.StatusCode, b, tc.want)
		}
	}
}

// A client that stops reading is dropped, not waited for: its streams
// fail within the stall, and the keep-alive it never answers ends the
// tunnel.
func TestTunnelDropsAClientThatStopsReading(t *testing.T) {
	srv, tunnels := tunnelServer(t, true)
	tunnels.Stall = time.Second
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "GET "+tunnel.Path+" HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: "+tunnel.Protocol+"\r\n"+tunnel.HeaderExpose+": localhost:9\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("the upgrade: %v %v", resp, err)
	}
	st, err := tunnels.Get(resp.Header.Get(tunnel.HeaderID))
	if err != nil {
		t.Fatal(err)
	}
	// From here on the client reads nothing.
	b, err := st.Bind(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, _, err := get(t, viaProxy(t, b, nil), "http://localhost:9/"); err == nil {
		t.Fatal("a request through a client that reads nothing was answered")
	}
	select {
	case <-st.Done():
	case <-time.After(60 * time.Second):
		t.Fatal("the tunnel of a client that reads nothing is still open")
	}
}
