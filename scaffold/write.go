package scaffold

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolserver/toolserver/internal/atomicfile"
	"github.com/toolserver/toolserver/internal/printable"
)

// A BadFileError is a file of the project init will not read (a
// .gitignore over MaxGitignoreBytes): the user's to fix, not a failure.
type BadFileError struct{ msg string }

func (e *BadFileError) Error() string { return e.msg }

// Write writes files into the existing directory dir and prints a line
// for each on out: wrote, left (exists), appended to, or with dryRun what
// it would do, writing nothing. It never overwrites a file; the one it
// may change is the .gitignore, by appending the lines it lacks. With a
// .gitlab-ci.yml in dir the GitLab job goes to GitLabJob instead, and
// relocated says so. Every file is written through an os.Root of dir, so
// none lands outside it by a symbolic link.
func Write(ctx context.Context, dir string, files []File, dryRun bool, out io.Writer) (relocated bool, err error) {
	w := &writer{dir: dir, dryRun: dryRun, out: out}
	if !dryRun {
		root, err := os.OpenRoot(dir)
		if err != nil {
			return false, err
		}
		defer root.Close()
		w.root = root
	}
	for i, f := range files {
		if f.Name == GitLabFile && w.exists(GitLabFile) {
			// Never change the project's own pipeline: the job goes
			// beside it, and the user includes it.
			files[i].Name, relocated = GitLabJob, true
		}
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return relocated, err
		}
		if f.Name == Gitignore {
			err = w.appendLines(f.Name, f.Data)
		} else {
			err = w.create(f.Name, f.Data)
		}
		if err != nil {
			return relocated, err
		}
	}
	return relocated, nil
}

// writer writes the files under dir, through root, and prints what it
// did.
type writer struct {
	dir    string
	root   *os.Root // nil in a dry run
	dryRun bool
	out    io.Writer
}

// shown is name as the user finds it from the working directory,
// escaped for the terminal.
func (w *writer) shown(name string) string {
	return printable.String(filepath.Join(w.dir, filepath.FromSlash(name)))
}

// exists reports whether name is there, as anything: a file, a
// directory, a link (even a dangling one).
func (w *writer) exists(name string) bool {
	_, err := os.Lstat(filepath.Join(w.dir, filepath.FromSlash(name)))
	return err == nil
}

// create writes name when it does not exist, and leaves it when it does.
func (w *writer) create(name string, data []byte) error {
	if w.exists(name) {
		fmt.Fprintf(w.out, "%s %s (exists)\n", w.verb("left", "would leave"), w.shown(name))
		return nil
	}
	if w.dryRun {
		fmt.Fprintf(w.out, "would write %s\n", w.shown(name))
		return nil
	}
	if dir := path.Dir(name); dir != "." {
		if err := w.root.MkdirAll(filepath.FromSlash(dir), 0o755); err != nil {
			return fmt.Errorf("%s: %w", w.shown(name), err)
		}
	}
	switch err := atomicfile.CreateIn(w.root, filepath.FromSlash(name), data, 0o644); {
	case errors.Is(err, fs.ErrExist):
		// Made by someone else since we looked: theirs stays.
		fmt.Fprintf(w.out, "left %s (exists)\n", w.shown(name))
		return nil
	case err != nil:
		return fmt.Errorf("%s: %w", w.shown(name), err)
	}
	fmt.Fprintf(w.out, "wrote %s\n", w.shown(name))
	return nil
}

// appendLines adds to the .gitignore name the lines of lines it lacks
// (its comment only with them), or writes it when there is none.
func (w *writer) appendLines(name string, lines []byte) error {
	p := filepath.Join(w.dir, filepath.FromSlash(name))
	st, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return w.create(name, lines)
	}
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		fmt.Fprintf(w.out, "%s %s (not a regular file; add %s to it yourself)\n", w.verb("left", "would leave"), w.shown(name), strings.Join(ignoreLines(lines), ", "))
		return nil
	}
	if st.Size() > MaxGitignoreBytes {
		return &BadFileError{msg: fmt.Sprintf("%s is %d bytes; init reads at most %d (1 MiB) of a .gitignore", w.shown(name), st.Size(), MaxGitignoreBytes)}
	}
	old, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	missing := MissingIgnores(old, ignoreLines(lines))
	if len(missing) == 0 {
		fmt.Fprintf(w.out, "%s %s (has %s)\n", w.verb("left", "would leave"), w.shown(name), strings.Join(ignoreLines(lines), ", "))
		return nil
	}
	if w.dryRun {
		fmt.Fprintf(w.out, "would append to %s: %s\n", w.shown(name), strings.Join(missing, ", "))
		return nil
	}
	var add bytes.Buffer
	if len(old) > 0 && !bytes.HasSuffix(old, []byte("\n")) {
		add.WriteByte('\n')
	}
	if len(old) > 0 {
		add.WriteByte('\n')
	}
	for _, l := range strings.Split(strings.TrimRight(string(lines), "\n"), "\n") {
		if strings.HasPrefix(l, "#") || slices.Contains(missing, l) {
			add.WriteString(l + "\n")
		}
	}
	if err := atomicfile.ReplaceIn(w.root, filepath.FromSlash(name), append(old, add.Bytes()...), st.Mode().Perm()); err != nil {
		return fmt.Errorf("%s: %w", w.shown(name), err)
	}
	fmt.Fprintf(w.out, "appended to %s: %s\n", w.shown(name), strings.Join(missing, ", "))
	return nil
}

func (w *writer) verb(done, dry string) string {
	if w.dryRun {
		return dry
	}
	return done
}
