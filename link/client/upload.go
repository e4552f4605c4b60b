package client

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/wire"
)

// POST /upload: where the bytes go that do not ride in the call body, one
// gzipped tar each: a member past the inline budget (docs/link-protocol.md,
// "Members"), and a tar-upload input, streamed.

// memberSender places the bytes of members: in the call body while they total
// at most wire.MaxInlineBytes (decoded, in collection order, each member that
// still fits), else each through POST /upload as its own gzipped tar.
type memberSender struct {
	c      *Client
	inline int
}

// place puts data into m and returns the tail of its [flow-files] line.
func (s *memberSender) place(ctx context.Context, m *wire.Member, name string, data []byte, mtimeMs float64) (string, error) {
	size := int64(len(data))
	m.Size, m.MtimeMs = &size, &mtimeMs
	if s.inline+len(data) <= wire.MaxInlineBytes {
		s.inline += len(data)
		content := base64.StdEncoding.EncodeToString(data)
		m.Content = &content
		return sentInline(len(data)), nil
	}
	archive, err := tarOneFile(filepath.Base(name), data, mtimeMs)
	if err != nil {
		return "", fmt.Errorf("archive %s: %w", name, err)
	}
	sum := sha256.Sum256(archive)
	hash := hex.EncodeToString(sum[:])
	id, err := s.c.upload(ctx, m.Path, bytes.NewReader(archive), int64(len(archive)), hash)
	if err != nil {
		return "", err
	}
	m.UploadID, m.ContentHash = id, hash
	return sentUpload(len(data)), nil
}

// storedWriters and fastWriters reuse the compressors of member archives
// (each holds about a megabyte of tables). A PNG is deflated already:
// deflating it again gains nothing and costs as much as the rest of its
// upload, so it is stored (gzip's stored blocks, a copy both ways).
// Anything else gets the fastest level.
var (
	storedWriters = gzipWriters(gzip.NoCompression)
	fastWriters   = gzipWriters(gzip.BestSpeed)
)

func gzipWriters(level int) *sync.Pool {
	return &sync.Pool{New: func() any {
		zw, _ := gzip.NewWriterLevel(nil, level)
		return zw
	}}
}

// tarOneFile is a gzipped tar of one regular file named name: the shape
// of an upload the tool-server reads for a member.
func tarOneFile(name string, data []byte, mtimeMs float64) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(data) + 2048)
	pool := fastWriters
	if bytes.HasPrefix(data, clientPNGMagic) {
		pool = storedWriters
	}
	zw := pool.Get().(*gzip.Writer)
	defer pool.Put(zw)
	zw.Reset(&buf)
	tw := tar.NewWriter(zw)
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(data)),
		ModTime: time.UnixMilli(int64(mtimeMs))}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, err
	}
	if _, err := tw.Write(data); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// upload posts one gzipped tar to POST /upload and returns its uploadId.
// size is -1 for a streamed body. hash, when known, is checked against
// the contentHash the tool-server answers.
func (c *Client) upload(ctx context.Context, what string, body io.Reader, size int64, hash string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/upload", body)
	if err != nil {
		return "", err
	}
	if size >= 0 {
		req.ContentLength = size
	}
	req.Header.Set("Content-Type", "application/gzip")
	c.auth(req)
	// A failed upload is the link's failure: the server or a proxy refused
	// or lost bytes the client read fine.
	resp, err := c.hc.Do(req)
	if err != nil {
		return "", fault.Infrastructure(fmt.Errorf("upload of %s to %s/upload failed: %w", what, c.base, err))
	}
	defer resp.Body.Close()
	answer, err := readAnswerCapped(resp.Body, maxSmallAnswer, "the POST /upload answer")
	if err != nil {
		return "", fault.Infrastructure(fmt.Errorf("upload of %s to %s/upload failed: %w", what, c.base, err))
	}
	if resp.StatusCode == http.StatusRequestEntityTooLarge {
		// The proxy's cap is the link's configuration, not the flow's
		// fault: the machinery's failure.
		return "", fault.Infrastructure(&UploadTooLargeError{File: what, Size: size})
	}
	if resp.StatusCode/100 != 2 {
		ce, _ := answerError("upload", resp, answer)
		return "", fault.Infrastructure(fmt.Errorf("upload of %s to %s/upload failed: %s", what, c.base, ce.Message))
	}
	var u struct {
		UploadID    string `json:"uploadId"`
		ContentHash string `json:"contentHash"`
	}
	if err := json.Unmarshal(answer, &u); err != nil || u.UploadID == "" {
		return "", fault.Infrastructure(fmt.Errorf("upload of %s to %s/upload: the answer has no uploadId: %s", what, c.base, bytes.TrimSpace(answer)))
	}
	if hash != "" && u.ContentHash != "" && !strings.EqualFold(hash, u.ContentHash) {
		return "", fault.Infrastructure(fmt.Errorf("upload of %s: the tool-server received sha256 %s, the client sent %s", what, u.ContentHash, hash))
	}
	return u.UploadID, nil
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
