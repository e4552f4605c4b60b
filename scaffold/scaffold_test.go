package scaffold

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/flow"
)

func names(files []File) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Name)
	}
	return out
}

// TestPlan: the files of each option set, the image and the URL filled
// in; the example flow parses.
func TestPlan(t *testing.T) {
	got := Plan(Options{Image: DefaultImage})
	if want := []string{FlowFile, PageFile, flow.ConfigFile, Gitignore}; !slices.Equal(names(got), want) {
		t.Errorf("no CI: got %v, want %v", names(got), want)
	}
	if _, err := flow.Parse(FlowFile, got[0].Data); err != nil {
		t.Errorf("the example flow: %v", err)
	}
	got = Plan(Options{CI: GitHub, URL: "http://localhost:5173/a b", Image: "reg.example.com/ts:1.4"})
	if want := []string{FlowFile, flow.ConfigFile, Gitignore, GitHubFile}; !slices.Equal(names(got), want) {
		t.Errorf("--url --ci github: got %v, want %v", names(got), want)
	}
	if !bytes.Contains(got[0].Data, []byte("http://localhost:5173/a b")) || bytes.Contains(got[0].Data, []byte("{{")) {
		t.Errorf("the URL flow:\n%s", got[0].Data)
	}
	if !bytes.Contains(got[3].Data, []byte("reg.example.com/ts:1.4")) || bytes.Contains(got[3].Data, []byte("{{IMAGE}}")) {
		t.Errorf("the workflow does not name the image:\n%s", got[3].Data)
	}
	if got := Plan(Options{CI: GitLab, Image: DefaultImage}); got[len(got)-1].Name != GitLabFile {
		t.Errorf("--ci gitlab: got %v", names(got))
	}
}

// TestChecks: the image and CI refusals, as init prints them after its
// flag's name.
func TestChecks(t *testing.T) {
	if err := CheckImage("registry.example.com/toolserver:1.4"); err != nil {
		t.Error(err)
	}
	if err := CheckImage("a b"); err == nil || err.Error() != `"a b" is not an image reference (registry.example.com/toolserver:1.4)` {
		t.Errorf("got %v", err)
	}
	if err := CheckImage(strings.Repeat("a", 256)); err == nil {
		t.Error("an image over 255 bytes: accepted")
	}
	for _, ok := range []string{"", GitHub, GitLab} {
		if err := CheckCI(ok); err != nil {
			t.Error(err)
		}
	}
	if err := CheckCI("jenkins"); err == nil || err.Error() != `"jenkins": want github or gitlab` {
		t.Errorf("got %v", err)
	}
}

// TestMissingIgnores: any spelling of a pattern counts.
func TestMissingIgnores(t *testing.T) {
	old := []byte("node_modules\n/toolserver-report/\n")
	if got := MissingIgnores(old, []string{"toolserver-report/", "flow-artifacts/"}); !slices.Equal(got, []string{"flow-artifacts/"}) {
		t.Errorf("got %v", got)
	}
}

// TestWrite: new files written, existing ones left, the .gitignore
// appended to with its mode kept, the GitLab job beside a project's own
// pipeline; a dry run writes nothing and says what it would.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{PageFile: "<p>mine</p>\n", Gitignore: "node_modules", GitLabFile: "stages: [build]\n"} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	files := Plan(Options{CI: GitLab, Image: DefaultImage})
	var dry bytes.Buffer
	if _, err := Write(context.Background(), dir, slices.Clone(files), true, &dry); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(FlowFile))); err == nil {
		t.Error("a dry run wrote the flow")
	}
	var out bytes.Buffer
	relocated, err := Write(context.Background(), dir, files, false, &out)
	if err != nil {
		t.Fatal(err)
	}
	if !relocated {
		t.Error("the GitLab job: not relocated beside .gitlab-ci.yml")
	}
	at := func(name string) string { return filepath.Join(dir, filepath.FromSlash(name)) }
	want := "wrote " + at(FlowFile) + "\n" +
		"left " + at(PageFile) + " (exists)\n" +
		"wrote " + at(flow.ConfigFile) + "\n" +
		"appended to " + at(Gitignore) + ": /toolserver-report/\n" +
		"wrote " + at(GitLabJob) + "\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
	if dryWant := strings.NewReplacer("wrote ", "would write ", "left ", "would leave ", "appended to ", "would append to ").Replace(want); dry.String() != dryWant {
		t.Errorf("dry run: got\n%s\nwant\n%s", dry.String(), dryWant)
	}
	gi, _ := os.ReadFile(at(Gitignore))
	st, _ := os.Stat(at(Gitignore))
	if !strings.HasPrefix(string(gi), "node_modules\n\n") || len(MissingIgnores(gi, []string{"toolserver-report/"})) > 0 || st.Mode().Perm() != 0o600 {
		t.Errorf("the .gitignore: got %q, mode %v", gi, st.Mode().Perm())
	}
	if b, _ := os.ReadFile(at(GitLabFile)); string(b) != "stages: [build]\n" {
		t.Errorf("the project's pipeline changed: %q", b)
	}
	out.Reset()
	if _, err := Write(context.Background(), dir, Plan(Options{Image: DefaultImage}), false, &out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "wrote") {
		t.Errorf("a second run wrote:\n%s", out.String())
	}
}

// TestWriteRefuses: a .gitignore over the cap is a BadFileError; a link
// out of the project is left, never followed.
func TestWriteRefuses(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, Gitignore), bytes.Repeat([]byte("x\n"), MaxGitignoreBytes/2+1), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Write(context.Background(), dir, []File{{Gitignore, []byte("toolserver-report/\n")}}, false, &bytes.Buffer{})
	var bad *BadFileError
	if !errors.As(err, &bad) || !strings.HasSuffix(err.Error(), "init reads at most 1048576 (1 MiB) of a .gitignore") {
		t.Errorf("a large .gitignore: got %v", err)
	}
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "site")); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(context.Background(), dir, []File{{PageFile, []byte("x")}}, false, &bytes.Buffer{}); err == nil {
		t.Error("a page through a link out of the project: got no error")
	}
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Errorf("wrote outside the project: %v", entries)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Write(ctx, dir, []File{{FlowFile, []byte("x")}}, false, &bytes.Buffer{}); !errors.Is(err, context.Canceled) {
		t.Errorf("an ended context: got %v", err)
	}
}
