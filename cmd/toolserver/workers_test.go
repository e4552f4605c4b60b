package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// workersProject writes n flows on pages of their own (data: URLs): each
// types its own name, waits its own time, and checks that it sees only
// its own name, which two flows sharing a page would not.
func workersProject(t *testing.T, n int) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, ".argent", "flows")
	os.MkdirAll(dir, 0o755)
	for i := range n {
		name := fmt.Sprintf("w%d", i)
		// The first flows wait longest, so they end last.
		page := fmt.Sprintf(`<!doctype html><input id="name"><button onclick="setTimeout(()=>out.textContent='hello '+document.getElementById('name').value, %d)">Greet</button><p id="out"></p><script>localStorage.seen=(localStorage.seen||'')+'%s'</script>`, (n-i)*150, name)
		// The open-url step names no device: the run binds its own, so
		// it must reach this flow's page, not another worker's.
		u := "data:text/html," + url.PathEscape(page)
		body := fmt.Sprintf("steps:\n  - launch: %q\n  - tool: open-url\n    args: { url: %q }\n  - type: { into: { id: name }, text: %s, submit: false }\n  - tap: Greet\n  - await: { text: { in: { id: out }, equals: hello %s } }\n",
			u, u, name, name)
		if err := os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestWorkers: four flows at once, each on a device of its own, all pass
// (no flow sees another's page); the report lists them in their order,
// not in the order they ended; each flow's lines print as one block.
func TestWorkers(t *testing.T) {
	t.Parallel()
	device := sharedDevice(t, "chromium-cdp-335x215")
	root := workersProject(t, 4)
	flows := filepath.Join(root, ".argent", "flows")
	code, out, errOut := runCLI(t, "flow", "run", flows, "--device", device, "--workers", "4")
	if code != 0 {
		t.Fatalf("--workers 4: exit %d\n%s\n%s", code, out, errOut)
	}
	// Blocks: each "Flow" header is followed by its own lines only.
	blocks := strings.Split(out, "Flow \"")
	var ended []string
	for _, b := range blocks[1:] {
		name := b[:2]
		for _, line := range strings.Split(strings.TrimSpace(b), "\n")[1:] {
			if strings.Contains(line, "hello w") && !strings.Contains(line, "hello "+name) {
				t.Errorf("flow %s's block has another flow's line: %q", name, line)
			}
		}
		ended = append(ended, name)
	}
	if len(ended) != 4 {
		t.Fatalf("%d flow blocks, want 4:\n%s", len(ended), out)
	}
	code, out, _ = runCLI(t, "flow", "run", flows, "--device", device, "--workers", "4", "-o", "json")
	var reps []struct {
		Flow string
		OK   bool
	}
	if err := json.Unmarshal([]byte(out), &reps); code != 0 || err != nil {
		t.Fatalf("--workers 4 -o json: exit %d %v\n%s", code, err, out)
	}
	var order []string
	for _, r := range reps {
		order = append(order, r.Flow)
	}
	if strings.Join(order, " ") != "w0 w1 w2 w3" {
		t.Errorf("report order: %v, want the flows' order", order)
	}
	if code, _, errOut := runCLI(t, "flow", "run", flows, "--workers", "0"); code != 2 || !strings.Contains(errOut, "--workers 0") {
		t.Errorf("--workers 0: exit %d %s", code, errOut)
	}
}

// TestShards: three shards of five flows run every flow exactly once; a
// shard with no flow exits 0 saying so.
func TestShards(t *testing.T) {
	t.Parallel()
	device := sharedDevice(t, "chromium-cdp-336x216")
	root := workersProject(t, 5)
	flows := filepath.Join(root, ".argent", "flows")
	var ran []string
	for i := 1; i <= 3; i++ {
		code, out, errOut := runCLI(t, "flow", "run", flows, "--device", device, "--shard", fmt.Sprintf("%d/3", i), "-o", "json")
		if code != 0 {
			t.Fatalf("shard %d/3: exit %d\n%s\n%s", i, code, out, errOut)
		}
		var reps []struct{ Flow string }
		if err := json.Unmarshal([]byte(out), &reps); err != nil {
			var one struct{ Flow string }
			if json.Unmarshal([]byte(out), &one) != nil {
				t.Fatalf("shard %d/3: %v\n%s", i, err, out)
			}
			reps = append(reps, one)
		}
		for _, r := range reps {
			ran = append(ran, r.Flow)
		}
	}
	if strings.Join(ran, " ") != "w0 w1 w2 w3 w4" {
		t.Errorf("three shards ran %v, want every flow once", ran)
	}
	one := filepath.Join(flows, "w0.yaml")
	code, _, errOut := runCLI(t, "flow", "run", one, "--shard", "2/2")
	if code != 0 || !strings.Contains(errOut, "shard 2/2 has no flows (1 flow in all)") {
		t.Errorf("an empty shard: exit %d\n%s", code, errOut)
	}
}

// TestSeveralLinks: flows spread over several tool-servers; one that
// cannot be reached runs nothing, so its flows go to the next.
func TestSeveralLinks(t *testing.T) {
	t.Parallel()
	device := sharedDevice(t, "chromium-cdp-338x218")
	root := workersProject(t, 4)
	flows := filepath.Join(root, ".argent", "flows")
	live := startServe(t, nil, false)
	dead := "http://127.0.0.1:1" // nothing listens on port 1
	code, out, errOut := runCLI(t, "flow", "run", flows, "--device", device, "--link", dead+","+live)
	if code != 0 || !strings.Contains(out, "4 flows: 4 passed, 0 failed") {
		t.Fatalf("--link dead,live: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, dead+" did not run it") || !strings.Contains(errOut, "sending it to "+live) {
		t.Errorf("no word of the flows that moved:\n%s", errOut)
	}
}

// TestSeveralLinksBusyServer: a tool-server whose devices are all busy
// and whose queue is full refuses a flow before running it (503
// QUEUE_FULL), so the flow goes to the next tool-server.
func TestSeveralLinksBusyServer(t *testing.T) {
	t.Parallel()
	site, reached, release := heldPage(t)
	busy := startServe(t, nil, true, "--max-devices", "1", "--queue", "0")
	// The held flow ends before the servers shut down: a server drains
	// its calls in flight before it stops.
	defer release()
	free := startServe(t, nil, false)
	// Hold the busy server's only device with a flow on a page that does
	// not answer.
	held := writeProject(t, map[string]string{"held.yaml": "steps:\n  - launch: \"" + site + "/held\"\n"})
	go runCLI(t, "flow", "run", "held", "--project", held, "--device", "chromium-cdp-339x219", "--link", busy)
	select {
	case <-reached:
	case <-time.After(time.Minute):
		t.Fatal("the holding flow never reached its page")
	}
	device := sharedDevice(t, "chromium-cdp-340x220")
	root := workersProject(t, 3)
	flows := filepath.Join(root, ".argent", "flows")
	code, out, errOut := runCLI(t, "flow", "run", flows, "--device", device, "--link", busy+","+free, "--workers", "1")
	if code != 0 || !strings.Contains(out, "3 flows: 3 passed, 0 failed") {
		t.Fatalf("--link busy,free: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, busy+" did not run it") || !strings.Contains(errOut, "queue") {
		t.Errorf("no word of the flows the busy server refused:\n%s", errOut)
	}
}
