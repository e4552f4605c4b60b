// Package atomicfile writes files so that a reader, or a crash, never sees
// half of one: baselines, recordings, JUnit files and reports all go
// through it, which is why it is a leaf of its own.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile writes data to path so that path holds either its old
// content or all of data, never a part: it writes a temporary file in the
// same directory, syncs it, and renames it over path (then syncs the
// directory). The temporary file is removed on every error. The file gets
// mode 0644.
func WriteFile(path string, data []byte) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	// Make the rename itself durable; not every platform can sync a
	// directory, and the file is already complete, so this is best effort.
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// WriteFileIn is WriteFile for name inside root, every step confined to
// it: neither the file nor its temporary file can land outside root by a
// symbolic link or "..". The parent directory must exist. The file is
// created with mode 0644 under the umask.
func WriteFileIn(root *os.Root, name string, data []byte) error {
	if err := replaceIn(root, name, data, 0o644, false); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// ReplaceIn is WriteFileIn with the mode perm, past the umask (a file
// rewritten keeps the mode it had), and os.Root's errors as they are
// (each names the file).
func ReplaceIn(root *os.Root, name string, data []byte, perm fs.FileMode) error {
	return replaceIn(root, name, data, perm, true)
}

// replaceIn writes a temporary file beside name in root and renames it
// over name; exact sets perm past the umask.
func replaceIn(root *os.Root, name string, data []byte, perm fs.FileMode, exact bool) error {
	tmp, err := tempIn(root, name, data, perm, exact)
	if err != nil {
		return err
	}
	if err := root.Rename(tmp, name); err != nil {
		root.Remove(tmp)
		return err
	}
	return nil
}

// CreateIn writes name inside root only when it does not exist, and
// atomically: a temporary file beside it, synced, then hard-linked to
// name, which fails with an error matching fs.ErrExist rather than
// replace a file that appeared meanwhile. The file gets the mode perm,
// past the umask; the errors are os.Root's, as ReplaceIn's.
func CreateIn(root *os.Root, name string, data []byte, perm fs.FileMode) error {
	tmp, err := tempIn(root, name, data, perm, true)
	if err != nil {
		return err
	}
	defer root.Remove(tmp)
	return root.Link(tmp, name)
}

// tempIn writes data to a new temporary file beside name inside root,
// syncs it and returns its name; on an error it leaves none. The file is
// created with mode perm under the umask; exact sets perm past it.
func tempIn(root *os.Root, name string, data []byte, perm fs.FileMode, exact bool) (tmp string, err error) {
	dir, base := filepath.Split(name)
	var f *os.File
	for i := 0; ; i++ {
		tmp = filepath.Join(dir, fmt.Sprintf(".%s.tmp-%d-%d", base, os.Getpid(), i))
		f, err = root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err == nil || !errors.Is(err, fs.ErrExist) || i == 100 {
			break
		}
	}
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if err == nil && exact {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		root.Remove(tmp)
		return "", err
	}
	return tmp, nil
}
