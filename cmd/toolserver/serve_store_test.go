package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolserver/toolserver/internal/pgtest"
	"github.com/toolserver/toolserver/runs"
	v1 "github.com/toolserver/toolserver/runs/v1"
)

// TestServeOverPostgres: serve --store-file (a file holding the address,
// as a Kubernetes Secret mounts it) keeps its runs in PostgreSQL: a run
// of POST /v1/runs completes there, runs list --store reads it with no
// server, /readyz says ready, and the password is in no line serve
// logged.
func TestServeOverPostgres(t *testing.T) {
	t.Parallel()
	c := pgtest.Get(t)
	db := filepath.Base(strings.SplitN(strings.TrimPrefix(pgtest.DSN(t), "postgres://postgres@/"), "?", 2)[0])
	dsn := c.TCPDSN(db)
	secret := filepath.Join(t.TempDir(), "dsn")
	if err := os.WriteFile(secret, []byte(dsn+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServeProc(t, "", "--store-file", secret, "--dashboard")
	root := t.TempDir()
	flowFile := filepath.Join(root, ".argent", "flows", "quick.yaml")
	os.MkdirAll(filepath.Dir(flowFile), 0o755)
	os.WriteFile(flowFile, []byte("steps:\n  - echo: hi\n"), 0o644)
	c1 := v1.NewClient(p.url, "")
	st, err := c1.Start(t.Context(), runs.StartRequest{ToolArgs: []byte(fmt.Sprintf(`{"name":"quick","project_root":%q}`, root))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	end, err := c1.Follow(ctx, st.Run, 0, func(runs.Event) error { return nil }, nil)
	if err != nil || end.Status.Outcome() != runs.Passed {
		t.Fatalf("the run: %+v %v", end, err)
	}
	code, out, errOut := runCLIEnv(t, env{envStore: dsn}, "runs", "list", "-o", "json")
	if code != exitOK || !strings.Contains(out, st.Run) || strings.Contains(out+errOut, pgtest.Password) {
		t.Errorf("runs list over $%s: exit %d %s %s", envStore, code, out, errOut)
	}
	resp, err := httpGet(p.url + "/readyz")
	if err != nil || !strings.Contains(resp, `"ready":true`) {
		t.Errorf("/readyz: %s %v", resp, err)
	}
	p.kill()
	if log := p.stderr.String(); strings.Contains(log, pgtest.Password) || !strings.Contains(log, "shared by the fleet") {
		t.Errorf("serve's log shows the password, or not the store:\n%s", log)
	}
}

// TestServeStoreUnreachable: a store that does not answer is exit 2 at
// start, naming the host and never the password; an address that is not
// PostgreSQL's and --store beside --state-dir are usage errors.
func TestServeStoreUnreachable(t *testing.T) {
	t.Parallel()
	dsn := "postgres://fleet:" + pgtest.Password + "@127.0.0.1:1/runs?sslmode=disable&connect_timeout=2"
	code, _, errOut := runCLI(t, "serve", "--addr", "127.0.0.1:0", "--store", dsn)
	if code != exitUsage || !strings.Contains(errOut, "127.0.0.1:1") || strings.Contains(errOut, pgtest.Password) {
		t.Errorf("an unreachable store: exit %d %s; want 2 naming the host, not the password", code, errOut)
	}
	for _, args := range [][]string{
		{"serve", "--addr", "127.0.0.1:0", "--store", "mysql://x:" + pgtest.Password + "@h/db"},
		{"serve", "--addr", "127.0.0.1:0", "--store", dsn, "--state-dir", t.TempDir()},
		{"serve", "--addr", "127.0.0.1:0", "--store-file", filepath.Join(t.TempDir(), "none")},
	} {
		code, _, errOut := runCLI(t, args...)
		if code != exitUsage || strings.Contains(errOut, pgtest.Password) {
			t.Errorf("%v: exit %d %s; want 2 without the password", args[3:], code, errOut)
		}
	}
}

// httpGet is the body of a GET of u.
func httpGet(u string) (string, error) {
	resp, err := http.Get(u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}
