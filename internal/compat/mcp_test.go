package compat

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// mcpTimeout bounds the wait for one answer of the MCP session.
const mcpTimeout = time.Minute

// TestMCPStdio holds toolserver mcp, the agent's session on stdin and
// stdout, to its answers: each request is sent once the answer to the one
// before has come (the server may answer calls out of order), and the
// transcript, notifications included, is the record.
func TestMCPStdio(t *testing.T) {
	t.Parallel()
	work := workDir(t, "mcp", "")
	cmd := exec.Command(bin, "mcp", "--state-dir", "state")
	cmd.Dir = work
	cmd.Env = baseEnv()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &watchedBuffer{wrote: make(chan struct{}, 1)}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()

	done := make(chan struct{})
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			// A test that failed midway: the process goes, its
			// reader with it.
			cmd.Process.Kill()
			for range lines {
			}
			cmd.Wait()
		}
	})

	var transcript strings.Builder
	send := func(msg string) {
		t.Helper()
		fmt.Fprintf(&transcript, "> %s\n", msg)
		if _, err := io.WriteString(stdin, msg+"\n"); err != nil {
			t.Fatal(err)
		}
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal([]byte(msg), &req); err != nil || req.ID == nil {
			return // a notification: no answer
		}
		deadline := time.After(mcpTimeout)
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("mcp closed stdout before answering %s:\n%s", msg, stderr.String())
				}
				fmt.Fprintf(&transcript, "< %s\n", line)
				var resp struct {
					ID json.RawMessage `json:"id"`
				}
				if json.Unmarshal([]byte(line), &resp) == nil && string(resp.ID) == string(req.ID) {
					return
				}
			case <-deadline:
				t.Fatalf("mcp did not answer %s within %s:\n%s", msg, mcpTimeout, stderr.String())
			}
		}
	}
	unknown := `"` + unknownRun + `"`
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"compat","version":"1"}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_runs","arguments":{}}}`)
	send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"list_runs","arguments":{"status":"bogus"}}}`)
	send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_run","arguments":{"id":` + unknown + `}}}`)
	send(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"get_run","arguments":{"id":"nope"}}}`)
	send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_run_events","arguments":{"id":` + unknown + `}}}`)
	send(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"abandon_run","arguments":{"id":` + unknown + `}}}`)
	send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"resume_run","arguments":{"id":` + unknown + `}}}`)
	send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"start_run","arguments":{"tool_args":{}}}}`)
	send(`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"start_run","arguments":{"tool_args":{"project_root":` + fmt.Sprintf("%q", filepath.Join(work, "none")) + `,"name":"x"}}}}`)
	send(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"flow-execute","arguments":{}}}`)
	send(`{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"flow-execute","arguments":{"project_root":"relative","name":"x"}}}`)
	send(`{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"nope","arguments":{}}}`)
	send(`{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"list-devices","arguments":{}}}`)
	send(`{"jsonrpc":"2.0","id":16,"method":"nope"}`)
	stdin.Close()
	// What mcp writes after the last answer is part of the record too;
	// Wait may run only once stdout has been read to its end.
	deadline := time.After(mcpTimeout)
	for open := true; open; {
		select {
		case line, ok := <-lines:
			if open = ok; ok {
				fmt.Fprintf(&transcript, "< %s\n", line)
			}
		case <-deadline:
			t.Fatalf("mcp did not close stdout within %s of stdin's close:\n%s", mcpTimeout, stderr.String())
		}
	}
	go func() {
		cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(mcpTimeout):
		t.Fatalf("mcp did not exit within %s of stdin's close:\n%s", mcpTimeout, stderr.String())
	}
	fmt.Fprintf(&transcript, "exit %d\n", cmd.ProcessState.ExitCode())
	section(&transcript, "stderr", stderr.String())
	golden(t, "mcp/session", normalize("$ toolserver mcp --state-dir state\n"+transcript.String()))

	// A message that is not JSON-RPC ends the session.
	cli(t, "mcp/not-json-rpc", exchange{args: []string{"mcp"}, dir: workDir(t, "mcp-bad", ""), stdin: "not json\n"})
	cli(t, "mcp/empty-stdin", exchange{args: []string{"mcp"}, dir: workDir(t, "mcp-empty", "")})
}
