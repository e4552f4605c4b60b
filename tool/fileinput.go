package tool

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/internal/clientfs"
	"github.com/toolserver/toolserver/internal/clientpath"
	"github.com/toolserver/toolserver/wire"
)

// MaxFileBytes is the cap on one file sent with a call (the 32 MiB of
// docs/link-protocol.md, "Client policy").
const MaxFileBytes = wire.MaxFileBytes

// MaxCallBody caps the body of a call (POST /tools/{name}, POST /v1/runs):
// a flow with 256 KiB of inline members and a 32 MiB file argument in
// base64 fit.
const MaxCallBody = 48 << 20

// File is a file-input object as the client sent it.
type File struct {
	Target  string
	Path    string  `json:"path"`
	Size    int64   `json:"size"`
	MtimeMs float64 `json:"mtimeMs"`
	// Content holds the bytes when the client sent them; HasContent tells
	// an empty file from none sent.
	Content    []byte `json:"content"`
	HasContent bool   `json:"-"`
	// LocalPath is where the tool can read the file on this machine: the
	// client's own path when it is the same file here, else a temp file
	// holding Content, else empty.
	LocalPath string `json:"-"`
	// Raw is the whole object, for fields other layers read (members,
	// canonical, spelling, uploadId).
	Raw json.RawMessage `json:"-"`
}

// ParseFile decodes a file-input object; ok is false when raw is not one.
func ParseFile(target string, raw json.RawMessage) (*File, bool, error) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false, nil
	}
	var w wire.FileInputObject
	if err := wire.UnmarshalFileFields(raw, &w); err != nil || !w.ArgentFileInput {
		return nil, false, nil
	}
	f := &File{Target: target, Path: w.Path, Raw: raw}
	if w.Size != nil {
		f.Size = *w.Size
	}
	if w.MtimeMs != nil {
		f.MtimeMs = *w.MtimeMs
	}
	if w.ContentOmitted != "" {
		return nil, true, &fault.Error{Kind: fault.Unprocessed, Field: target,
			Message: fmt.Sprintf("%s: the client did not send %s (%s); files over 32 MiB cannot be sent to the tool-server", target, w.Path, w.ContentOmitted)}
	}
	if w.Content != nil {
		// The bytes are kept under the client's file name for the tool to
		// read, so the path must end in one.
		if _, ok := clientpath.FileName(w.Path); !ok {
			return nil, true, &fault.Error{Kind: fault.Validation, Field: target,
				Message: fmt.Sprintf("%s: %q is not the path of a file: a file sent with its content needs a path that ends in a file name", target, w.Path)}
		}
		b, err := wire.DecodeBase64(*w.Content)
		if errors.Is(err, wire.ErrOverCap) {
			return nil, true, &fault.Error{Kind: fault.Unprocessed, Field: target,
				Message: target + ": " + clientfs.TooLarge(w.Path)}
		}
		if err != nil {
			return nil, true, &fault.Error{Kind: fault.Unprocessed, Field: target,
				Message: fmt.Sprintf("%s: content of %s is not valid base64: %v", target, w.Path, err)}
		}
		if w.Size != nil && int64(len(b)) != *w.Size {
			return nil, true, &fault.Error{Kind: fault.Unprocessed, Field: target,
				Message: fmt.Sprintf("%s: content of %s has %d bytes, size says %d", target, w.Path, len(b), *w.Size)}
		}
		f.Content, f.HasContent = b, true
	}
	return f, true, nil
}

// SameHostFile reports whether path on this machine is the file a client
// described (same size, same mtime to the millisecond), so its bytes can be
// read here instead of the content sent: a client on the same machine.
func SameHostFile(path string, size int64, mtimeMs float64) bool {
	if !filepath.IsAbs(path) {
		return false
	}
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	return st.Size() == size && math.Round(mtimeMs) == math.Round(float64(st.ModTime().UnixNano())/1e6)
}

// unwrapFileInputs replaces each declared file-input object by a path the
// tool can open: the host file when it is the same file, else a temp file
// with the bytes sent, else the client path as written. On a remote
// server a file is only ever the bytes sent.
func unwrapFileInputs(call *Call, tempDir string, remote bool) error {
	for _, spec := range call.Tool.FileInputs {
		raw, ok := call.Args[spec.Target]
		if !ok || string(raw) == "null" {
			continue
		}
		f, isFile, err := ParseFile(spec.Target, raw)
		if err != nil {
			return err
		}
		if remote && spec.Kind == "file" && (!isFile || !f.HasContent) {
			return fault.FieldError(spec.Target, "%s: this tool-server answers other machines, so it reads none of its own files for a caller: send the file's content with the call (a file input with its content, as a linked or remote-routed client does)", spec.Target)
		}
		if !isFile {
			continue
		}
		call.Files[spec.Target] = f
		switch {
		case spec.Kind != "file":
			f.LocalPath = f.Path
		case !remote && SameHostFile(f.Path, f.Size, f.MtimeMs):
			f.LocalPath = f.Path
		case f.HasContent:
			dir, err := os.MkdirTemp(tempDir, "toolserver-input-")
			if err != nil {
				return fmt.Errorf("%s: keep the file sent: %w", spec.Target, err)
			}
			call.OnDone(func() { os.RemoveAll(dir) })
			name, _ := clientpath.FileName(f.Path) // ParseFile checked it
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, f.Content, 0o600); err != nil {
				return fmt.Errorf("%s: keep the file sent: %w", spec.Target, err)
			}
			f.LocalPath = p
		default:
			f.LocalPath = f.Path
		}
		s, _ := json.Marshal(f.LocalPath)
		call.Args[spec.Target] = s
	}
	return nil
}
