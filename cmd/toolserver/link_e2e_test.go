package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	linkclient "github.com/toolserver/toolserver/link/client"
)

// startServe runs `toolserver serve` on a loopback port (args are added:
// a later --addr wins) with the ARGENT_AUTH_TOKEN of e, on the shared
// browser or, with private, on browsers of its own; it returns the
// server's URL. The server stops when the test ends. The shared browser's
// pool has its own options: a test of --allow-hosts or of file: URLs on a
// wildcard bind needs private.
func startServe(t testing.TB, e env, private bool, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &syncBuffer{started: make(chan struct{})}
	s := testStreams(t, e, io.Discard, stderr)
	if private {
		s.pool = nil
	}
	done := make(chan int, 1)
	go func() { done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), s) }()
	select {
	case <-stderr.started:
	case code := <-done:
		cancel()
		t.Fatalf("serve exited %d before listening: %s", code, stderr.String())
	}
	t.Cleanup(func() {
		cancel()
		<-done
	})
	m := regexp.MustCompile(`listening on http://(\S+) `).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("serve: no address in %q", stderr.String())
	}
	host, port, err := net.SplitHostPort(m[1])
	if err != nil {
		t.Fatalf("serve: address %q: %v", m[1], err)
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1" // a wildcard bind answers on loopback too
	}
	return "http://" + net.JoinHostPort(host, port)
}

// e2eProject writes the flows of the end-to-end tests, for a device of
// the size wxh; {{URL}} is a server of ../../testdata/pages, {{ROOT}} the
// project and {{SIZE}} wxh.
func e2eProject(t *testing.T, wxh string) string {
	t.Helper()
	return writeProject(t, map[string]string{
		// A run: chain two levels deep, one target in a when: block.
		"chain.yaml":        "steps:\n  - launch: \"{{URL}}/app.html\"\n  - run: shared/press\n  - assert: { text: { in: { id: out }, equals: clicked 1 } }\n",
		"shared/press.yaml": "steps:\n  - when: { visible: Go now }\n    steps:\n      - run: ../tap\n",
		"tap.yaml":          "steps:\n  - tap: Go now\n",
		// A nested flow by name and project_root.
		"outer.yaml": "steps:\n  - tool: flow-execute\n    args: { name: inner, project_root: \"{{ROOT}}\" }\n",
		"inner.yaml": "steps:\n  - launch: \"{{URL}}/app.html\"\n  - tap: Go now\n  - assert: { text: { in: { id: out }, equals: clicked 1 } }\n",
		// A snapshot through a fragment.
		"snap.yaml":  "steps:\n  - launch: \"{{URL}}/app.html\"\n  - run: frame\n",
		"frame.yaml": "steps:\n  - snapshot: { name: home, maxMismatch: 0 }\n",
		// A tool file argument.
		"diff.yaml": "steps:\n  - tool: screenshot-diff\n    args: { baselinePath: \"{{ROOT}}/.argent/flows/__baselines__/snap/home__chromium-{{SIZE}}.png\", currentPath: \"{{ROOT}}/.argent/flows/__baselines__/snap/home__chromium-{{SIZE}}.png\" }\n",
	}, "{{SIZE}}", wxh)
}

// writeProject writes files (paths relative to .argent/flows) into a new
// project and returns its real path. In each file {{URL}} becomes a
// server of ../../testdata/pages, {{ROOT}} the project, and each further
// pair of vars a placeholder and its value.
func writeProject(t *testing.T, files map[string]string, vars ...string) string {
	t.Helper()
	pages := httptest.NewServer(http.FileServer(http.Dir("../../testdata/pages")))
	t.Cleanup(pages.Close)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := strings.NewReplacer(append([]string{"{{URL}}", pages.URL, "{{ROOT}}", root}, vars...)...)
	for rel, body := range files {
		p := filepath.Join(root, ".argent", "flows", rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(r.Replace(body)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestLinkEndToEnd runs `toolserver flow run --link` and `toolserver
// call --link` against `toolserver serve` over loopback: a run: chain, a
// nested flow, an update that writes baselines into the client's project,
// a compare that passes and one that fails, a tool file argument, and a
// recording over the link.
func TestLinkEndToEnd(t *testing.T) {
	t.Parallel()
	root := e2eProject(t, "703x503")
	e := env{envAuthToken: "e2e-token"}
	u := startServe(t, e, false)
	flows := filepath.Join(root, ".argent", "flows")
	dev := "--device=" + sharedDevice(t, "chromium-cdp-703x503")
	// flowRunEnv runs flow run with the environment e, flowRun with the
	// token alone.
	flowRunEnv := func(t *testing.T, e env, wantCode int, args ...string) (string, string) {
		t.Helper()
		code, out, errOut := runCLIEnv(t, e, append([]string{"flow", "run", "--project", root, "--link", u, dev}, args...)...)
		if code != wantCode {
			t.Fatalf("flow run %v: exit %d, want %d\n%s\n%s", args, code, wantCode, out, errOut)
		}
		return out, errOut
	}
	flowRun := func(t *testing.T, wantCode int, args ...string) (string, string) {
		t.Helper()
		return flowRunEnv(t, e, wantCode, args...)
	}

	t.Run("run chain", func(t *testing.T) {
		out, _ := flowRun(t, 0, "chain")
		if !strings.Contains(out, "PASS chain") {
			t.Errorf("got\n%s\nwant PASS chain", out)
		}
	})
	t.Run("nested flow", func(t *testing.T) {
		out, _ := flowRun(t, 0, "outer")
		if !strings.Contains(out, "PASS outer") || !strings.Contains(out, "tap") {
			t.Errorf("got\n%s\nwant the nested steps and PASS outer", out)
		}
	})
	baseline := filepath.Join(flows, "__baselines__", "snap", "home__chromium-703x503.png")
	t.Run("update writes baselines on the client", func(t *testing.T) {
		out, errOut := flowRunEnv(t, env{envAuthToken: e[envAuthToken], linkclient.FilesLogEnv: "1"}, 0, "snap", "--update-baselines")
		if !strings.Contains(out, "the client writes it when the run ends") {
			t.Errorf("got\n%s\nwant the linked adoption reason", out)
		}
		if !strings.Contains(errOut, "[flow-files] baseline "+baseline+": written") {
			t.Errorf("stderr: got\n%s\nwant the written line", errOut)
		}
		if st, err := os.Stat(baseline); err != nil || st.Size() == 0 {
			t.Fatalf("baseline: %v", err)
		}
	})
	t.Run("compare passes", func(t *testing.T) {
		flowRun(t, 0, "snap")
	})
	t.Run("tool file argument", func(t *testing.T) {
		out, _ := flowRun(t, 0, "diff")
		if !strings.Contains(out, "PASS diff") {
			t.Errorf("got\n%s\nwant PASS diff", out)
		}
	})
	t.Run("compare fails", func(t *testing.T) {
		frame := filepath.Join(flows, "frame.yaml")
		if err := os.WriteFile(frame, []byte("steps:\n  - tap: Go now\n  - snapshot: { name: home, maxMismatch: 0 }\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		outDir := t.TempDir()
		out, _ := flowRun(t, 1, "snap", "--output", outDir)
		if !strings.Contains(out, "FAIL snap") {
			t.Errorf("got\n%s\nwant FAIL snap", out)
		}
		if _, err := os.Stat(filepath.Join(outDir, "snap", "home__chromium-703x503-diff.png")); err != nil {
			t.Errorf("--output: %v", err)
		}
	})
	t.Run("recording over the link", func(t *testing.T) {
		call := func(name string, args map[string]any) string {
			t.Helper()
			b, _ := json.Marshal(args)
			code, out, errOut := runCLIEnv(t, e, "call", name, "--args", string(b), "--link", u)
			if code != 0 {
				t.Fatalf("call %s: exit %d\n%s\n%s", name, code, out, errOut)
			}
			return out
		}
		rec := filepath.Join(flows, "rec.yaml")
		base := map[string]any{"name": "rec", "project_root": root}
		with := func(extra map[string]any) map[string]any {
			m := map[string]any{}
			for k, v := range base {
				m[k] = v
			}
			for k, v := range extra {
				m[k] = v
			}
			return m
		}
		if out := call("flow-start-recording", base); !strings.Contains(out, fmt.Sprintf("%q", rec)) {
			t.Errorf("start: got\n%s\nwant savedTo %s", out, rec)
		}
		call("flow-add-echo", with(map[string]any{"message": "recorded over a link"}))
		step, _ := json.Marshal(map[string]any{"name": "inner", "project_root": root, "device": "chromium-cdp-703x503"})
		call("flow-add-step", with(map[string]any{"command": "flow-execute", "args": string(step)}))
		call("flow-finish-recording", base)
		got, err := os.ReadFile(rec)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"echo: recorded over a link", "inner"} {
			if !strings.Contains(string(got), want) {
				t.Errorf("recording: got\n%s\nwant %q", got, want)
			}
		}
		flowRun(t, 0, "rec")
	})
}

// TestFlowRunLinkedRejectedHeaderOnce: a flow the tool-server rejects as
// invalid prints its header once, then "not run", with the reason on
// stderr; the next flow of the run gets its own header.
func TestFlowRunLinkedRejectedHeaderOnce(t *testing.T) {
	t.Parallel()
	root := writeProject(t, map[string]string{
		"contact.yaml": "steps:\n  - launch: \"{{URL}}/app.html\"\n  - tap: { nope: 1 }\n",
		"home.yaml":    "steps:\n  - launch: \"{{URL}}/app.html\"\n  - echo: hi\n",
	})
	u := startServe(t, nil, false)
	dev := sharedDevice(t, "chromium-cdp-342x222")
	code, out, errOut := runCLI(t, "flow", "run", filepath.Join(root, ".argent", "flows"), "--project", root, "--link", u, "--device", dev)
	want := "Flow \"contact\" on " + dev + "\n  ✗ not run (invalid flow)\n"
	if code != 1 || !strings.HasPrefix(out, want) || strings.Count(out, `Flow "contact"`) != 1 {
		t.Errorf("got exit %d\n%s\nwant 1 and the header once:\n%s", code, out, want)
	}
	if !strings.Contains(out, "Flow \"home\" on "+dev+"\n") || !strings.Contains(errOut, `tap: unknown option "nope"`) {
		t.Errorf("got\n%s\n%s\nwant the next flow's header and the reason on stderr", out, errOut)
	}
}
