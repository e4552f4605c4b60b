package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// nginxConf proxies a listen address to the tool-server with a small body
// limit, as a reverse proxy in front of a shared tool-server would be;
// %[5]s is nginxUpgradeMap or "", %[6]s the headers that pass or drop an
// Upgrade.
const nginxConf = `daemon off;
master_process off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  client_max_body_size %[4]s;
%[5]s  upstream toolservers {
%[3]s  }
  server {
    listen %[2]s;
    location / {
      proxy_pass http://toolservers;
      proxy_http_version 1.1;
%[6]s      proxy_set_header Host $http_host;
      proxy_buffering off;
      proxy_read_timeout 300s;
    }
  }
}
`

// nginxUpgradeMap and nginxUpgrade pass an HTTP/1.1 Upgrade (the tunnel of
// flow run --expose, GET /tunnels) as deploy/nginx.conf does; a request
// without one gets an empty Connection header.
const (
	nginxUpgradeMap = `  map $http_upgrade $connection_upgrade {
    default upgrade;
    '' '';
  }
`
	nginxUpgrade = `      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
`
	// nginxNoUpgrade is a proxy that drops the upgrade, as nginx does
	// unless told: it sends no Upgrade header and an empty Connection.
	nginxNoUpgrade = `      proxy_set_header Connection "";
`
)

// startNginx runs Debian's nginx (make test installs it) in front of
// upstream and returns the proxy's URL.
func startNginx(t *testing.T, upstream, maxBody string) string {
	t.Helper()
	return startNginxUpstream(t, []string{upstream}, maxBody)
}

// startNginxUpstream runs nginx in front of the tool-servers at urls, a
// plain round-robin upstream (each request to the next), and returns the
// proxy's URL.
func startNginxUpstream(t *testing.T, urls []string, maxBody string) string {
	t.Helper()
	return startNginxConf(t, urls, maxBody, true)
}

// startNginxConf is startNginxUpstream with upgrade telling whether the
// proxy passes an HTTP/1.1 Upgrade.
func startNginxConf(t *testing.T, urls []string, maxBody string, upgrade bool) string {
	t.Helper()
	upgradeMap, headers := nginxUpgradeMap, nginxUpgrade
	if !upgrade {
		upgradeMap, headers = "", nginxNoUpgrade
	}
	var servers strings.Builder
	for _, u := range urls {
		fmt.Fprintf(&servers, "    server %s;\n", strings.TrimPrefix(u, "http://"))
	}
	bin, err := exec.LookPath("nginx")
	if err != nil {
		bin = "/usr/sbin/nginx"
		if _, serr := os.Stat(bin); serr != nil {
			t.Fatalf("nginx is missing (%v): make test installs it (EXTRA_PACKAGES=nginx docker/install-runtime.sh)", err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(nginxConf, dir, addr, servers.String(), maxBody, upgradeMap, headers)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", dir, "-c", conf, "-e", filepath.Join(dir, "error.log"))
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	// Poll until the proxy answers (anything: the upstream asks for a
	// token), with a deadline.
	u := "http://" + addr
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u+"/healthz", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			return u
		}
		select {
		case err := <-exited:
			t.Fatalf("nginx exited: %v\n%s", err, out.String())
		case <-ctx.Done():
			t.Fatalf("nginx did not answer on %s: %s", u, out.String())
		case <-tick.C:
		}
	}
}

// TestLinkThroughNginx: a run streams through a reverse proxy; a member
// past the proxy's body limit stops the call before it is sent, with the
// size the proxy must accept on POST /upload.
func TestLinkThroughNginx(t *testing.T) {
	t.Parallel()
	root := e2eProject(t, "704x504")
	e := env{envAuthToken: "nginx-token"}
	u := startNginx(t, startServe(t, e, false), "64k")
	flows := filepath.Join(root, ".argent", "flows")

	code, out, errOut := runCLIEnv(t, e, "flow", "run", "chain", "--project", root, "--link", u, "--device="+sharedDevice(t, "chromium-cdp-704x504"))
	if code != 0 || !strings.Contains(out, "✓  5       tap") || !strings.Contains(out, "PASS chain") {
		t.Fatalf("through nginx: exit %d\n%s\n%s", code, out, errOut)
	}

	// A member past the inline budget goes to POST /upload, as its own
	// archive: random bytes do not compress, so the proxy refuses it.
	noise := make([]byte, 300<<10)
	rand.Read(noise)
	pad := func(n int) string { return "steps: []\n#" + base64.StdEncoding.EncodeToString(noise)[:n] + "\n" }
	os.WriteFile(filepath.Join(flows, "big1.yaml"), []byte(pad(40<<10)), 0o644)
	big2 := filepath.Join(flows, "big2.yaml")
	os.WriteFile(big2, []byte(pad(190<<10)), 0o644)
	big3 := filepath.Join(flows, "big3.yaml")
	os.WriteFile(big3, []byte(pad(300<<10)), 0o644)
	os.WriteFile(filepath.Join(flows, "big.yaml"), []byte("steps:\n  - run: big3\n"), 0o644)
	code, out, errOut = runCLIEnv(t, e, "flow", "run", "big", "--project", root, "--link", u)
	if code != 2 {
		t.Fatalf("upload 413: exit %d, want 2\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"POST /upload of " + big3 + " was refused with 413 Request Entity Too Large", "must accept a body of", "client_max_body_size 33m", "The call was not sent."} {
		if !strings.Contains(errOut, want) {
			t.Errorf("upload 413: got\n%s\nwant %q", errOut, want)
		}
	}

	// The call body itself (the flow and up to 256 KiB of members inline)
	// can pass the limit too: the error says what the proxy must accept.
	os.WriteFile(filepath.Join(flows, "big.yaml"), []byte("steps:\n  - run: big1\n  - run: big2\n"), 0o644)
	code, out, errOut = runCLIEnv(t, e, "flow", "run", "big", "--project", root, "--link", u)
	if code != 2 || !strings.Contains(errOut, "POST /tools/flow-execute was refused with 413 Request Entity Too Large: the proxy in front of the tool-server must accept a body of ") {
		t.Errorf("call 413: exit %d, want 2\n%s\n%s", code, out, errOut)
	}
}

// TestExposeThroughNginx: flow run --expose opens its tunnel through the
// same reverse proxy as its calls: a flow launches a site on the client's
// 127.0.0.1 through it, and the bundled example's relative launch is
// served by the client's files, which nothing but the tunnel carries. A
// proxy that drops the upgrade stops the run before its first call,
// saying what the proxy must pass.
func TestExposeThroughNginx(t *testing.T) {
	t.Parallel()
	e := env{envAuthToken: "nginx-token"}
	// A browser of its own: the example's baselines are 1280x800, a size
	// other tests of the shared browser use.
	serve := startServe(t, e, true)
	u := startNginx(t, serve, "1m")
	site := httptest.NewServer(http.FileServer(http.Dir("../../testdata/pages")))
	t.Cleanup(site.Close)
	root := writeProject(t, map[string]string{
		"app.yaml": "steps:\n  - launch: /app.html\n  - tap: Go now\n  - assert: { text: { in: { id: out }, equals: clicked 1 } }\n",
	})
	target := strings.TrimPrefix(site.URL, "http://")

	code, out, errOut := runCLIEnv(t, e, "flow", "run", "app", "--project", root, "--link", u, "--device", "chromium-cdp-800x600", "--base-url", site.URL, "--expose", target)
	if code != 0 || !strings.Contains(out, "PASS app") {
		t.Fatalf("--expose %s through nginx: exit %d\n%s\n%s", target, code, out, errOut)
	}

	shop := t.TempDir()
	if err := os.CopyFS(shop, os.DirFS("../../examples/shop")); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLIEnv(t, e, "flow", "run", "checkout", "--project", shop, "--link", u, "--expose", "localhost")
	if code != 0 || !strings.Contains(out, "PASS checkout") {
		t.Fatalf("examples/shop --expose localhost through nginx: exit %d\n%s\n%s", code, out, errOut)
	}
	// Without the tunnel the relative launch has nowhere to come from.
	code, out, errOut = runCLIEnv(t, e, "flow", "run", "checkout", "--project", shop, "--link", u)
	if code == 0 || !strings.Contains(out+errOut, "a relative launch path resolves on the tool-server's machine") {
		t.Errorf("examples/shop without --expose: exit %d, want the relative launch refused\n%s\n%s", code, out, errOut)
	}

	bare := startNginxConf(t, []string{serve}, "1m", false)
	code, out, errOut = runCLIEnv(t, e, "flow", "run", "app", "--project", root, "--link", bare, "--device", "chromium-cdp-800x600", "--base-url", site.URL, "--expose", target)
	if code != 2 {
		t.Errorf("through a proxy that drops the upgrade: exit %d, want 2\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"open the tunnel (GET " + bare + "/tunnels)", "Upgrade", "proxy_http_version 1.1"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("through a proxy that drops the upgrade: got\n%s\nwant %q", errOut, want)
		}
	}
}

// TestExposeThroughAFleet: behind a round-robin nginx over three
// replicas, every call of a run with --expose reaches the replica that
// holds its tunnel: the client sends them through the tunnel itself.
func TestExposeThroughAFleet(t *testing.T) {
	t.Parallel()
	e := env{envAuthToken: "fleet-token"}
	var replicas []string
	for range 3 {
		replicas = append(replicas, startServe(t, e, false, "--state-dir", ""))
	}
	u := startNginxUpstream(t, replicas, "1m")
	site := httptest.NewServer(http.FileServer(http.Dir("../../testdata/pages")))
	t.Cleanup(site.Close)
	flows := map[string]string{}
	for _, name := range []string{"one", "two", "three", "four"} {
		flows[name+".yaml"] = "steps:\n  - launch: /app.html\n  - tap: Go now\n  - assert: { text: { in: { id: out }, equals: clicked 1 } }\n"
	}
	root := writeProject(t, flows)
	dev := "--device=" + sharedDevice(t, "chromium-cdp-801x601")
	code, out, errOut := runCLIEnv(t, e, "flow", "run", filepath.Join(root, ".argent", "flows"), "--project", root, "--link", u, dev,
		"--base-url", site.URL, "--expose", strings.TrimPrefix(site.URL, "http://"), "--expose-only")
	if code != 0 || strings.Count(out, "PASS ") != 4 {
		t.Fatalf("four flows with --expose through a round-robin fleet: exit %d\n%s\n%s", code, out, errOut)
	}
}
