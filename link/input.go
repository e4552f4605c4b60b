package link

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/tool"
)

// inputWire is a file-input object as the client sends it ("The flow file
// input"; the wire reference, §4.1): the file, and for an input with
// collect its canonical, spelling and members. It has the fields of
// FlowInput and those of a plain file input.
type inputWire struct {
	ArgentFileInput bool           `json:"__argentFileInput"`
	Path            string         `json:"path"`
	Size            *int64         `json:"size,omitempty"`
	MtimeMs         *float64       `json:"mtimeMs,omitempty"`
	Content         *string        `json:"content,omitempty"`
	ContentOmitted  string         `json:"contentOmitted,omitempty"`
	ContentHash     string         `json:"contentHash,omitempty"`
	UploadID        string         `json:"uploadId,omitempty"`
	Canonical       string         `json:"canonical,omitempty"`
	Spelling        *flow.Spelling `json:"spelling,omitempty"`
	Members         *[]Member      `json:"members,omitempty"`
}

// pathArg matches ${arg} in a file input's path.
var pathArg = regexp.MustCompile(`\$\{([^}]+)\}`)

// fillInputPath fills the ${arg} of a file input's path from the string
// arguments; ok is false when one is missing, not a string, or empty.
func fillInputPath(tmpl string, args map[string]any) (string, bool) {
	ok := true
	out := pathArg.ReplaceAllStringFunc(tmpl, func(m string) string {
		v, isStr := args[m[2:len(m)-1]].(string)
		if !isStr || v == "" {
			ok = false
		}
		return v
	})
	return out, ok
}

// wrapInputs replaces each declared file input of the call by its
// file-input object, in the tool's order (wire reference §4.1): an input
// whose skipWhenSet argument is present, whose target holds a value that
// is not a string or a string other than its path, or whose path names a
// missing or empty argument, is left alone. Over a link every file input
// is wrapped, also for a tool-server on 127.0.0.1.
func (st *callState) wrapInputs(ctx context.Context) error {
	for _, spec := range st.specs[st.name] {
		if spec.SkipWhenSet != "" {
			if _, set := st.args[spec.SkipWhenSet]; set {
				continue
			}
		}
		cur, has := st.args[spec.Target]
		curStr, isStr := cur.(string)
		if has && !isStr {
			continue
		}
		p, ok := fillInputPath(spec.Path, st.args)
		if !ok || has && curStr != p {
			continue
		}
		w, err := st.wrap(ctx, spec, p)
		if err != nil {
			return err
		}
		st.args[spec.Target] = w
	}
	return nil
}

// wrap builds the file-input object of one input by its kind: a file with
// its bytes (contentOmitted past the 32 MiB cap), a directory or a probe
// by its path, a tar-upload through POST /upload. collect: "flow" on a
// file the client can read adds canonical, spelling and members;
// collect: "step" adds the members of the recorded step. A collect value
// this client does not know sends only the file.
func (st *callState) wrap(ctx context.Context, spec tool.FileInput, p string) (*inputWire, error) {
	w := &inputWire{ArgentFileInput: true, Path: p}
	switch spec.Kind {
	case "file":
		data := fileInput(w, p)
		if spec.Collect == CollectFlow && data != nil {
			if err := st.collectFlow(ctx, w, p, data); err != nil {
				return nil, err
			}
		}
	case "tar-upload":
		if err := st.treeInput(ctx, w, p); err != nil {
			return nil, err
		}
	}
	if spec.Collect == CollectStep && spec.Kind != "file" {
		members, err := st.stepMembers(ctx)
		if err != nil {
			return nil, err
		}
		w.Members = &members
		st.collected = true
	}
	return w, nil
}

// fileInput fills a file input from the file at p: size and mtimeMs when
// it is a regular file, and its bytes within the cap. It returns the
// bytes, nil when there are none to send: the tool-server reports a file
// it did not get.
func fileInput(w *inputWire, p string) []byte {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	size, mt := fi.Size(), mtimeMsOf(fi)
	w.Size, w.MtimeMs = &size, &mt
	if size > MaxFileBytes {
		w.ContentOmitted = "size-limit"
		return nil
	}
	data, mt, why := readMemberFile(p)
	if why != "" {
		return nil
	}
	size = int64(len(data))
	w.Size, w.MtimeMs = &size, &mt
	content := base64.StdEncoding.EncodeToString(data)
	w.Content = &content
	return data
}

// mtimeMsOf is a file's modification time in epoch milliseconds, with
// the fraction, as Node's stat gives it.
func mtimeMsOf(fi fs.FileInfo) float64 { return float64(fi.ModTime().UnixNano()) / 1e6 }

// readMemberFile reads a file within the 32 MiB cap; why is the refusal
// (Node's wording of an OS error, or the cap's) when it cannot.
func readMemberFile(p string) (data []byte, mtimeMs float64, why string) {
	// Opening a FIFO for reading blocks until it has a writer: check the
	// type first, and open without blocking in case it changed since.
	switch fi, err := os.Stat(p); {
	case err != nil:
		return nil, 0, osErrorText(err, "stat", p)
	case fi.IsDir():
		return nil, 0, eisdirText
	case !fi.Mode().IsRegular():
		return nil, 0, p + " is not a regular file"
	}
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, osErrorText(err, "open", p)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, osErrorText(err, "fstat", p)
	}
	if fi.IsDir() {
		return nil, 0, eisdirText
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, p + " is not a regular file"
	}
	if fi.Size() > MaxFileBytes {
		return nil, 0, tooLargeText(p)
	}
	// Read into a buffer of the size fstat gives; a file that grew since
	// is read on, up to the cap.
	var buf bytes.Buffer
	buf.Grow(int(fi.Size()) + bytes.MinRead)
	if _, err := buf.ReadFrom(io.LimitReader(f, MaxFileBytes+1)); err != nil {
		return nil, 0, osErrorText(err, "read", p)
	}
	if buf.Len() > MaxFileBytes {
		return nil, 0, tooLargeText(p)
	}
	data = buf.Bytes()
	return data, mtimeMsOf(fi), ""
}

// tooLargeText is the seed's refusal of a file over the cap.
func tooLargeText(canonical string) string {
	return canonical + " is larger than the 32 MiB cap on a file sent to the tool-server"
}

// treeInput sends a tar-upload input: the file or directory at p as a
// gzipped tar whose entries are prefixed with its base name, streamed to
// POST /upload; the object gets contentHash and uploadId.
func (st *callState) treeInput(ctx context.Context, w *inputWire, p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return nil // the tool-server reports the missing path
	}
	size, mt := fi.Size(), mtimeMsOf(fi)
	w.Size, w.MtimeMs = &size, &mt
	id, hash, err := st.c.uploadTree(ctx, p)
	if err != nil {
		return err
	}
	w.ContentHash, w.UploadID = hash, id
	return nil
}

// uploadTree streams the gzipped tar of p to POST /upload, hashing it on
// the way. The writer goroutine always ends before uploadTree returns.
func (c *Client) uploadTree(ctx context.Context, p string) (id, hash string, err error) {
	pr, pw := io.Pipe()
	h := sha256.New()
	done := make(chan error, 1)
	go func() {
		werr := writeTree(io.MultiWriter(pw, h), p)
		pw.CloseWithError(werr)
		done <- werr
	}()
	id, err = c.upload(ctx, p, pr, -1, "")
	pr.CloseWithError(errors.New("upload ended"))
	werr := <-done
	if err != nil {
		return "", "", err
	}
	if werr != nil {
		return "", "", fmt.Errorf("archive %s: %w", p, werr)
	}
	return id, hex.EncodeToString(h.Sum(nil)), nil
}

// writeTree writes p as a gzipped tar: `tar -czf - -C <dir> <base>`.
func writeTree(w io.Writer, p string) error {
	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	root := filepath.Clean(p)
	base := filepath.Base(root)
	err := filepath.WalkDir(root, func(cur string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, cur)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(filepath.Join(base, rel))
		link := ""
		if info.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(cur); err != nil {
				return err
			}
		} else if !info.Mode().IsRegular() && !info.IsDir() {
			return nil // sockets, devices and pipes have no place in an upload
		}
		hdr, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return err
		}
		hdr.Name = name
		if info.IsDir() {
			hdr.Name += "/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(cur)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// collectFlow adds canonical, spelling and members to the file input of a
// flow the client read (seed, "The flow file input").
func (st *callState) collectFlow(ctx context.Context, w *inputWire, p string, data []byte) error {
	abs := p
	if !filepath.IsAbs(abs) {
		a, err := filepath.Abs(abs)
		if err != nil {
			return err
		}
		abs = a
	}
	canonical, _ := landing(abs)
	sp := flow.SpellingOf(spelledDir(abs), filepath.Base(abs))
	c := st.newCollector(clientRoots(abs, canonical, st.args["project_root"]))
	if fl, err := flow.Parse(canonical, data); err == nil {
		update, _ := st.args["updateBaselines"].(bool)
		root := memberRun{canonical: canonical, fl: fl, name: strings.TrimSuffix(filepath.Base(abs), ".yaml"),
			update: update, platform: callPlatform(st.args)}
		if err := c.walk(ctx, root); err != nil {
			return err
		}
	}
	if err := c.sendBaselines(ctx); err != nil {
		return err
	}
	w.Canonical, w.Spelling, w.Members = canonical, &sp, &c.members
	st.collected = true
	return nil
}
