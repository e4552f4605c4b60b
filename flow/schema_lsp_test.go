package flow

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// yamllsBin is the YAML language server that scripts/fetch-yamlls.sh
// installs from testdata/yamlls/package-lock.json, relative to this package.
const yamllsBin = "../.cache/yaml-language-server/node_modules/.bin/yaml-language-server"

// yamllsSchemas is the folder wiring docs/flows.md shows for yaml.schemas:
// each schema file, beside the project, to the files it describes.
var yamllsSchemas = map[string]any{
	"./flow.schema.json":       ".argent/flows/**/*.yaml",
	"./toolserver.schema.json": ".argent/toolserver.yaml",
}

// lspMessage is one JSON-RPC message either way: a request (ID and Method),
// a response (ID and Result or Error) or a notification (Method only).
type lspMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      *int            `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// lspDiagnostic is the part of an LSP Diagnostic the test reads.
type lspDiagnostic struct {
	Range struct {
		Start struct{ Line, Character int } `json:"start"`
	} `json:"range"`
	Message string `json:"message"`
}

func (d lspDiagnostic) String() string {
	return fmt.Sprintf("%d:%d %s", d.Range.Start.Line+1, d.Range.Start.Character+1, d.Message)
}

// yamlls is a yaml-language-server over stdio. One goroutine reads its
// stdout into msgs; the test goroutine alone writes and consumes.
type yamlls struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	msgs   chan lspMessage
	nextID int
	// diags holds the latest diagnostics published per document URI.
	diags map[string][]lspDiagnostic
	// root is the workspace folder; the schema is root/flow.schema.json.
	root string
}

// startYAMLLS starts the server on a workspace holding schema as
// flow.schema.json and ConfigSchema() as toolserver.schema.json, wired the
// way the docs show.
func startYAMLLS(t *testing.T, schema []byte) *yamlls {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is not installed: run make test, or sudo apt-get install nodejs npm && ./scripts/fetch-yamlls.sh")
	}
	if _, err := os.Stat(yamllsBin); err != nil {
		t.Fatalf("yaml-language-server is not installed (%v): run ./scripts/fetch-yamlls.sh", err)
	}
	bin, err := filepath.Abs(yamllsBin)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "flow.schema.json"), schema, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "toolserver.schema.json"), ConfigSchema(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, ".argent", "flows"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", bin, "--stdio")
	cmd.Dir = root
	cmd.Stderr = &testLogWriter{t: t}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start yaml-language-server: %v", err)
	}
	s := &yamlls{t: t, cmd: cmd, stdin: stdin, msgs: make(chan lspMessage, 64), diags: map[string][]lspDiagnostic{}, root: root}
	go readLSP(bufio.NewReader(stdout), s.msgs)
	t.Cleanup(s.close)

	rootURI := fileURI(root)
	s.call("initialize", map[string]any{
		"processId":        os.Getpid(),
		"rootUri":          rootURI,
		"workspaceFolders": []any{map[string]any{"uri": rootURI, "name": "project"}},
		"capabilities": map[string]any{
			"textDocument": map[string]any{
				"completion":         map[string]any{"completionItem": map[string]any{"snippetSupport": true, "documentationFormat": []string{"markdown", "plaintext"}}},
				"hover":              map[string]any{"contentFormat": []string{"markdown", "plaintext"}},
				"publishDiagnostics": map[string]any{},
			},
		},
	})
	s.notify("initialized", map[string]any{})
	// The server answers a configuration change by asking for the yaml
	// section (workspace/configuration), which await answers with settings.
	// A document opened before that answer is validated without the
	// schema (no diagnostics at all), so nothing is opened until the
	// server has asked and been answered: on a loaded machine the question
	// comes late.
	s.notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"yaml": s.settings()}})
	s.await("the server's request for its settings", func(m lspMessage) bool {
		return m.Method == "workspace/configuration" && m.ID != nil
	})
	return s
}

// testLogWriter sends the server's stderr to the test log.
type testLogWriter struct{ t *testing.T }

func (w *testLogWriter) Write(p []byte) (int, error) {
	w.t.Logf("yaml-language-server: %s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// settings are the yaml section a VS Code workspace's settings.json would
// hold: the schema file beside the project, for every flow file.
func (s *yamlls) settings() map[string]any {
	return map[string]any{
		"validate":   true,
		"completion": true,
		"hover":      true,
		"schemas":    yamllsSchemas,
	}
}

func fileURI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

// readLSP decodes Content-Length framed messages until the stream ends.
func readLSP(r *bufio.Reader, out chan<- lspMessage) {
	defer close(out)
	for {
		length := -1
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\r\n")
			if line == "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				length, _ = strconv.Atoi(v)
			}
		}
		if length < 0 || length > 64<<20 {
			return
		}
		body := make([]byte, length)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		var m lspMessage
		if json.Unmarshal(body, &m) == nil {
			out <- m
		}
	}
}

func (s *yamlls) send(m lspMessage) {
	s.t.Helper()
	m.JSONRPC = "2.0"
	body, err := json.Marshal(m)
	if err != nil {
		s.t.Fatal(err)
	}
	if _, err := fmt.Fprintf(s.stdin, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		s.t.Fatalf("write to yaml-language-server: %v", err)
	}
}

func (s *yamlls) notify(method string, params any) {
	s.t.Helper()
	raw, _ := json.Marshal(params)
	s.send(lspMessage{Method: method, Params: raw})
}

// call sends a request and returns its result, serving the server's own
// requests and recording its notifications meanwhile.
func (s *yamlls) call(method string, params any) json.RawMessage {
	s.t.Helper()
	s.nextID++
	id := s.nextID
	raw, _ := json.Marshal(params)
	s.send(lspMessage{ID: &id, Method: method, Params: raw})
	var result json.RawMessage
	s.await(method, func(m lspMessage) bool {
		if m.Method == "" && m.ID != nil && *m.ID == id {
			if len(m.Error) > 0 {
				s.t.Fatalf("%s: %s", method, m.Error)
			}
			result = m.Result
			return true
		}
		return false
	})
	return result
}

// await handles messages until done returns true, or fails the test at a
// deadline of 60 s (the server answers in well under a second here).
func (s *yamlls) await(what string, done func(lspMessage) bool) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		select {
		case m, ok := <-s.msgs:
			if !ok {
				s.t.Fatalf("yaml-language-server exited while waiting for %s", what)
			}
			switch {
			case m.Method == "workspace/configuration" && m.ID != nil:
				// The sections yaml, http, [yaml], editor, files, in order.
				result, _ := json.Marshal([]any{s.settings(), map[string]any{}, map[string]any{}, map[string]any{}, map[string]any{}})
				s.send(lspMessage{ID: m.ID, Result: result})
			case m.Method != "" && m.ID != nil:
				// client/registerCapability, window/workDoneProgress/create:
				// accepted with an empty result.
				s.send(lspMessage{ID: m.ID, Result: json.RawMessage("null")})
			case m.Method == "textDocument/publishDiagnostics":
				var p struct {
					URI         string          `json:"uri"`
					Diagnostics []lspDiagnostic `json:"diagnostics"`
				}
				if err := json.Unmarshal(m.Params, &p); err != nil {
					s.t.Fatal(err)
				}
				s.diags[p.URI] = p.Diagnostics
			}
			if done(m) {
				return
			}
		case <-ctx.Done():
			s.t.Fatalf("no %s from yaml-language-server within 60 s", what)
		}
	}
}

// open opens files (paths relative to the workspace) with their text, all
// at once, and returns the diagnostics the server publishes for each.
func (s *yamlls) open(docs map[string]string) map[string][]lspDiagnostic {
	s.t.Helper()
	pending := map[string]string{}
	for name, text := range docs {
		uri := s.uri(name)
		pending[uri] = name
		s.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
			"uri": uri, "languageId": "yaml", "version": 1, "text": text,
		}})
	}
	out := map[string][]lspDiagnostic{}
	s.await(fmt.Sprintf("diagnostics for %d files", len(docs)), func(m lspMessage) bool {
		if m.Method != "textDocument/publishDiagnostics" {
			return false
		}
		var p struct {
			URI string `json:"uri"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			if name, ok := pending[p.URI]; ok {
				out[name] = s.diags[p.URI]
				delete(pending, p.URI)
			}
		}
		return len(pending) == 0
	})
	return out
}

func (s *yamlls) uri(name string) string {
	return fileURI(filepath.Join(s.root, filepath.FromSlash(name)))
}

// lspCompletion is one item the server offers: its label and the
// markdown it shows beside it.
type lspCompletion struct {
	Label         string
	Documentation string
}

// complete returns what the server offers in the open document name (a
// path relative to the workspace) at
// line and character (0-based).
func (s *yamlls) complete(name string, line, character int) []lspCompletion {
	s.t.Helper()
	raw := s.call("textDocument/completion", map[string]any{
		"textDocument": map[string]any{"uri": s.uri(name)},
		"position":     map[string]any{"line": line, "character": character},
	})
	var list struct {
		Items []struct {
			Label string `json:"label"`
			// Documentation is a string or a MarkupContent.
			Documentation json.RawMessage `json:"documentation"`
		} `json:"items"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		s.t.Fatalf("completion result %s: %v", raw, err)
	}
	out := make([]lspCompletion, len(list.Items))
	for i, it := range list.Items {
		out[i] = lspCompletion{Label: it.Label}
		var markup struct {
			Value string `json:"value"`
		}
		if json.Unmarshal(it.Documentation, &out[i].Documentation) != nil && json.Unmarshal(it.Documentation, &markup) == nil {
			out[i].Documentation = markup.Value
		}
	}
	return out
}

// close asks the server to shut down and exit, and reaps it; it kills a
// server that has not exited 30 s later. It fails no test itself beyond an
// error, so the server's stderr is never logged after the test ends.
func (s *yamlls) close() {
	s.nextID++
	id := s.nextID
	s.send(lspMessage{ID: &id, Method: "shutdown"})
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	// exit before the answer to shutdown makes the server exit 1.
	for shutDown := false; !shutDown; {
		select {
		case m, ok := <-s.msgs:
			shutDown = !ok || m.Method == "" && m.ID != nil && *m.ID == id
		case <-deadline.C:
			shutDown = true
		}
	}
	s.send(lspMessage{Method: "exit"})
	s.stdin.Close()
	for {
		select {
		case _, ok := <-s.msgs:
			if ok {
				continue
			}
			if err := s.cmd.Wait(); err != nil {
				s.t.Errorf("yaml-language-server exit: %v", err)
			}
			return
		case <-deadline.C:
			s.cmd.Process.Kill()
			s.cmd.Wait()
			s.t.Errorf("yaml-language-server did not exit within 30 s of exit")
			return
		}
	}
}

// TestSchemaInYAMLLanguageServer feeds Schema() to the real
// yaml-language-server, wired to .argent/flows/**/*.yaml as docs/flows.md
// shows, and checks what an editor shows: no problem in a valid flow, an
// unknown directive named as such with the directives listed (not a
// missing launch), and each directive offered once after "- ".
func TestSchemaInYAMLLanguageServer(t *testing.T) {
	s := startYAMLLS(t, Schema())

	valid := map[string]string{}
	paths := map[string]string{}
	for i, path := range repoFlows(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf(".argent/flows/valid-%d.yaml", i)
		valid[name], paths[name] = string(data), path
	}
	for name, diags := range s.open(valid) {
		if len(diags) > 0 {
			t.Errorf("%s: got diagnostics %v, want none", paths[name], diags)
		}
	}

	kinds := kindNames()
	directiveList := strings.Join(kinds, ", ")
	cases := []struct {
		name, text string
		// want are the diagnostics, as line:column message.
		want []string
	}{
		{"click.yaml", "steps:\n  - launch: https://example.com\n  - click: Go\n",
			[]string{"3:5 Unknown directive (did you mean \"tap\"?). The directives are " + directiveList + "."}},
		{"camel.yaml", "steps:\n  - longPress: Go\n",
			[]string{"2:5 Unknown directive (did you mean \"long-press\"?). The directives are " + directiveList + "."}},
		{"unknown.yaml", "steps:\n  - frobnicate: Go\n",
			[]string{"2:5 Unknown directive. The directives are " + directiveList + "."}},
		{"not-a-map.yaml", "steps:\n  - tap\n",
			[]string{"2:5 A step is a map with one directive, such as - tap: Sign in. The directives are " + directiveList + "."}},
		{"two.yaml", "steps:\n  - tap: Go\n    snapshot: home\n", []string{
			"3:5 A step holds one directive: nothing goes beside tap: (its options go inside its value).",
			"2:5 A step holds one directive: nothing goes beside snapshot: (its options go inside its value).",
		}},
		{"tool-sibling.yaml", "steps:\n  - tool: gesture-swipe\n    delay: 5\n", []string{
			"3:5 Unknown directive (did you mean \"wait\"?). The directives are " + directiveList + ".",
			"3:5 A step holds one directive: beside tool: only args:, delayMs:.",
		}},
		{"option.yaml", "steps:\n  - tap: { on: Go, tims: 2 }\n", []string{"2:20 Property tims is not allowed."}},
	}
	docs := map[string]string{}
	for _, tc := range cases {
		docs[".argent/flows/"+tc.name] = tc.text
	}
	got := s.open(docs)
	for _, tc := range cases {
		var lines []string
		for _, d := range got[".argent/flows/"+tc.name] {
			lines = append(lines, d.String())
		}
		if !slices.Equal(lines, tc.want) {
			t.Errorf("%s: got diagnostics %q, want %q", tc.name, lines, tc.want)
		}
	}

	// Completion on an empty step: each directive once, with its markdown,
	// and no sibling key (steps, args, delayMs) nor a step-<directive> twin.
	s.open(map[string]string{
		".argent/flows/complete.yaml":      "steps:\n  - launch: https://example.com\n  - \n",
		".argent/flows/complete-tool.yaml": "steps:\n  - tool: gesture-swipe\n    \n",
	})
	items := s.complete(".argent/flows/complete.yaml", 2, 4)
	var labels []string
	for _, it := range items {
		labels = append(labels, it.Label)
		if !strings.Contains(it.Documentation, "```yaml\n- "+it.Label+": ") {
			t.Errorf("completion %s: got documentation %q, want the directive's markdown with its example", it.Label, it.Documentation)
		}
	}
	if sorted, want := slices.Sorted(slices.Values(labels)), slices.Sorted(slices.Values(kinds)); !slices.Equal(sorted, want) {
		t.Errorf("completion after \"- \": got %q, want each directive once: %q", labels, want)
	}

	// Beside tool: its siblings are offered.
	var toolLabels []string
	for _, it := range s.complete(".argent/flows/complete-tool.yaml", 2, 4) {
		toolLabels = append(toolLabels, it.Label)
	}
	for _, want := range stepSiblings[KindTool] {
		if !slices.Contains(toolLabels, want) {
			t.Errorf("completion beside tool: got %q, want %s among them", toolLabels, want)
		}
	}
}

// TestSchemaWiringInYAMLLanguageServer: the project config file gets its
// own schema through the same yaml.schemas wiring, a flow in a subfolder of
// .argent/flows is covered, and a flow file outside the folder gets the
// flow schema from its modeline, relative to the file.
func TestSchemaWiringInYAMLLanguageServer(t *testing.T) {
	s := startYAMLLS(t, Schema())
	got := s.open(map[string]string{
		".argent/toolserver.yaml":      "baseURL: http://localhost:5173\nsnapshot:\n  maxMismatch: 0.1\nbaseUrl: x\n",
		"other/click.yaml":             "# yaml-language-server: $schema=../flow.schema.json\nsteps:\n  - click: Go\n",
		".argent/flows/sub/click.yaml": "steps:\n  - click: Go\n",
	})
	for name, want := range map[string][]string{
		".argent/toolserver.yaml": {"4:1 Property baseUrl is not allowed."},
		"other/click.yaml":        {"3:5 Unknown directive (did you mean \"tap\"?). The directives are " + strings.Join(kindNames(), ", ") + "."},
		// * matches across /: the folder's subfolders are covered too.
		".argent/flows/sub/click.yaml": {"2:5 Unknown directive (did you mean \"tap\"?). The directives are " + strings.Join(kindNames(), ", ") + "."},
	} {
		var lines []string
		for _, d := range got[name] {
			lines = append(lines, d.String())
		}
		if !slices.Equal(lines, want) {
			t.Errorf("%s: got diagnostics %q, want %q", name, lines, want)
		}
	}
}

func kindNames() []string {
	names := make([]string, len(allKinds))
	for i, k := range allKinds {
		names[i] = string(k)
	}
	return names
}
