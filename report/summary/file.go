package summary

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/toolserver/toolserver/internal/atomicfile"
)

// WriteFile writes a summary to path, replacing the file atomically and
// making its directory when it does not exist (--summary FILE).
func WriteFile(path string, md []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, md)
}

// AppendFile appends a summary to the file at path in one write, after a
// blank line when the file does not end with one, so the summary starts
// a block of its own after what an earlier step wrote (GitHub Actions'
// $GITHUB_STEP_SUMMARY, which a job's steps share). The file is created
// when it does not exist; its directory must.
func AppendFile(path string, md []byte) (err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if n := min(st.Size(), 2); n > 0 {
		end := make([]byte, n)
		if _, err := f.ReadAt(end, st.Size()-n); err != nil {
			return err
		}
		switch {
		case end[n-1] != '\n':
			md = append([]byte("\n\n"), md...)
		case n == 2 && end[0] != '\n':
			md = append([]byte("\n"), md...)
		}
	}
	_, err = f.Write(md)
	return err
}
