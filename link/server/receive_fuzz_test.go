package server_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolserver/toolserver/link/server"
	"github.com/toolserver/toolserver/store"
	"github.com/toolserver/toolserver/wire"
)

// FuzzReceive feeds the tool-server's member decoder a flow file input as
// any client could send it, with one upload archive: the archive goes
// through the upload store as POST /upload takes it, and "$UPLOAD" and
// "$HASH" in the input stand for its id and digest. Whatever arrives,
// Receive must not panic, must keep within the caps (members, bytes of
// one member, bytes of the flow members), must delete every upload the
// call names, and nothing may appear outside the store's directory.
func FuzzReceive(f *testing.F) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	flowMember := `{"role":"flow","key":"/p/.argent/flows\u0000frag.yaml","path":"/p/.argent/flows/frag.yaml","canonical":"/p/.argent/flows/frag.yaml","spelling":{"state":"listed"},"size":11,"mtimeMs":1791300000000,"content":"` + b64("steps: []\n\n") + `"}`
	uploaded := `{"role":"baseline","key":"/p/b.png","path":"/p/b.png","uploadId":"$UPLOAD","contentHash":"$HASH"}`
	input := func(members ...string) string {
		return `{"__argentFileInput":true,"path":"/p/.argent/flows/main.yaml","content":"` + b64("steps:\n  - run: frag\n") +
			`","canonical":"/p/.argent/flows/main.yaml","spelling":{"state":"listed"},"members":[` + strings.Join(members, ",") + `]}`
	}
	one := fuzzArchive(f, tarEntry{name: "b.png", body: "\x89PNG\r\n\x1a\n"})
	for _, seed := range []struct {
		input   string
		archive []byte
	}{
		{input(flowMember), nil},
		{input(flowMember, uploaded), one},
		{input(uploaded), fuzzArchive(f, tarEntry{name: "b.png/", dir: true}, tarEntry{name: "b.png/x", body: "x"})},
		{input(uploaded), fuzzArchive(f, tarEntry{name: "a", body: "1"}, tarEntry{name: "b", body: "2"})},
		{input(uploaded), fuzzArchive(f, tarEntry{name: "../escape", body: "x"})},
		{input(uploaded), fuzzArchive(f, tarEntry{name: "/abs", body: "x"})},
		{input(uploaded), fuzzArchive(f, tarEntry{name: "link", link: "/etc/passwd"})},
		{input(uploaded), fuzzArchive(f, tarEntry{name: "zeros", body: strings.Repeat("\x00", 1<<20)})},
		{input(uploaded), one[:len(one)/2]},
		{input(uploaded), []byte("not gzip")},
		{input(`{"role":"baseline","key":"/p/b.png","path":"/p/b.png","uploadId":"$UPLOAD","contentHash":"00"}`), one},
		{input(`{"role":"flow","key":"k","path":"p","canonical":"relative","spelling":{"state":"listed"},"content":""}`), nil},
		{input(`{"role":"flow","key":"k","path":"p","canonical":"/c","spelling":{"state":"case_folded"},"content":""}`), nil},
		{input(`{"role":"flow","key":"/p\u0000nospell.yaml","path":"/p/nospell.yaml","canonical":"/p/nospell.yaml","state":"refused","error":"EACCES"}`), nil},
		{input(`{"role":"flow","key":"/p\u0000both.yaml","path":"/p/both.yaml","canonical":"/p/both.yaml","spelling":{"state":"listed"},"state":"refused","content":"` + b64("steps: []\n") + `"}`), nil},
		{input(`{"role":"tool","key":"/p/x.png","path":"/p/x.png","size":3,"content":"` + b64("ab") + `"}`), nil},
		{input(`{"role":"tool","key":"/p/x.png","path":"/p/x.png","content":"!!"}`), nil},
		{input(`{"role":"weird","key":"w"}`, `{"role":"tool","key":"/p/x.png","path":"/p/x.png","state":"refused"}`, `{"role":"tool","key":"/p/x.png","path":"/p/x.png"}`), nil},
		{input(`{"role":"baseline","key":"/p/b.png","path":"/p/b.png","uploadId":"unknown","contentHash":"$HASH"}`), one},
		{`{"__argentFileInput":true,"path":"/p/main.yaml","members":null}`, nil},
		{`[]`, nil},
	} {
		f.Add(seed.input, seed.archive)
	}
	f.Fuzz(func(t *testing.T, input string, archive []byte) {
		root := t.TempDir()
		dir := filepath.Join(root, "uploads")
		ups, err := store.NewUploads(store.UploadConfig{Dir: dir, MaxUpload: 1 << 20, MaxPending: 2 << 20, TTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		uploadID := ""
		if len(archive) > 0 {
			if u, err := ups.Receive(ctx, bytes.NewReader(archive)); err == nil {
				uploadID = u.ID
				input = strings.NewReplacer("$UPLOAD", u.ID, "$HASH", u.SHA256).Replace(input)
			}
		}
		in, _, ok := server.ParseInput([]byte(input))
		if !ok {
			return
		}
		named := false
		for _, mem := range in.Members {
			named = named || uploadID != "" && mem.UploadID == uploadID
		}
		m, err := server.Receive(ctx, in.Members, ups)

		// The upload is gone when the call names it, whatever happened,
		// and the store holds it otherwise; nothing else is written.
		wantPending := 0
		if uploadID != "" && !named {
			wantPending = 1
		}
		var files []string
		if err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() {
				files = append(files, p)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for _, p := range files {
			if filepath.Dir(p) != dir {
				t.Errorf("%s: got a file outside the upload store, want none", p)
			}
		}
		if len(files) != wantPending {
			t.Errorf("files in the store: got %d, want %d (named by the call: %v)", len(files), wantPending, named)
		}
		// The store's own book agrees: an upload the call named is gone
		// from it, one it did not name is still there to take once.
		if uploadID != "" {
			u, terr := ups.Take(uploadID)
			switch {
			case named && !errors.Is(terr, store.ErrNoUpload):
				t.Errorf("taking the named upload again: got %v, want %v", terr, store.ErrNoUpload)
			case !named && terr != nil:
				t.Errorf("taking the upload the call did not name: got %v, want it", terr)
			case !named:
				ups.Remove(u)
			}
		}
		if err != nil {
			return
		}
		// The caps hold on what was kept.
		if m.Len() > wire.MaxMembers || m.Len() > len(in.Members) {
			t.Errorf("members kept: got %d of %d, want at most %d", m.Len(), len(in.Members), wire.MaxMembers)
		}
		var flowBytes int
		seen := map[string]bool{}
		for _, mem := range in.Members {
			r := m.Get(mem.Key)
			if r == nil || seen[mem.Key] {
				continue
			}
			seen[mem.Key] = true
			if len(r.Data) > wire.MaxFileBytes {
				t.Errorf("member %q: got %d bytes, want at most the cap", mem.Key, len(r.Data))
			}
			if r.HasData && r.Role == wire.RoleFlow {
				flowBytes += len(r.Data)
			}
			if r.State == wire.StateRefused && (r.HasData || r.Error == "") {
				t.Errorf("member %q: refused with bytes %v and reason %q, want no bytes and a reason", mem.Key, r.HasData, r.Error)
			}
			if r.Role == wire.RoleFlow && r.State != wire.StateRefused && (r.Spelling == nil || r.Spelling.State == "") {
				t.Errorf("member %q: got a flow member with no valid spelling kept, want it refused", mem.Key)
			}
		}
		if flowBytes > wire.MaxFileBytes {
			t.Errorf("flow members: got %d bytes, want at most the cap", flowBytes)
		}
		// What was kept reads through the source without a panic.
		src := server.NewSource(m)
		for _, mem := range in.Members {
			if dir, target, ok := strings.Cut(mem.Key, "\x00"); ok {
				if _, err := src.Open(dir, target); err != nil {
					t.Errorf("Open(%q, %q): %v", dir, target, err)
				}
			}
			_, _ = src.ReadBaseline(mem.Path)
			_, _ = src.ToolFile(mem.Path, "arg", "tool")
		}
	})
}

// tarEntry is one entry of a fuzz seed archive.
type tarEntry struct {
	name, body, link string
	dir              bool
}

// fuzzArchive is a gzipped tar of entries, as a client's upload.
func fuzzArchive(f *testing.F, entries ...tarEntry) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.body)), Typeflag: tar.TypeReg}
		switch {
		case e.dir:
			hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeDir, 0o755, 0
		case e.link != "":
			hdr.Typeflag, hdr.Linkname, hdr.Size = tar.TypeSymlink, e.link, 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			f.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
			f.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		f.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		f.Fatal(err)
	}
	return buf.Bytes()
}
