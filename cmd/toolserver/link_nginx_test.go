package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// nginxConf proxies a listen address to the tool-server with a small body
// limit, as a reverse proxy in front of a shared tool-server would be.
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
  upstream toolservers {
%[3]s  }
  server {
    listen %[2]s;
    location / {
      proxy_pass http://toolservers;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_buffering off;
      proxy_read_timeout 300s;
    }
  }
}
`

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
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(nginxConf, dir, addr, servers.String(), maxBody)), 0o644); err != nil {
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
