package client

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolserver/toolserver/flow"
	flowrun "github.com/toolserver/toolserver/flow/run"
	"github.com/toolserver/toolserver/internal/clientfs"
	"github.com/toolserver/toolserver/wire"
)

// wrapInputs replaces each declared file input of the call by its file-input
// object, in the tool's order (docs/argent-client.md, §4.1): an input whose
// skipWhenSet argument is set, whose target holds a value that is not a string
// or a string other than its path, or whose path names a missing or empty
// argument, is left alone. A null argument counts as absent (wire.ArgSet). Over
// a link every file input is wrapped, also for a tool-server on 127.0.0.1.
func (st *callState) wrapInputs(ctx context.Context) error {
	for _, spec := range st.specs[st.name] {
		if spec.SkipWhenSet != "" && wire.ArgSet(st.args, spec.SkipWhenSet) {
			continue
		}
		has := wire.ArgSet(st.args, spec.Target)
		curStr, isStr := st.args[spec.Target].(string)
		if has && !isStr {
			continue
		}
		p, ok := wire.FillPath(spec.Path, st.args)
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
func (st *callState) wrap(ctx context.Context, spec wire.FileInput, p string) (*wire.FileInputObject, error) {
	w := &wire.FileInputObject{ArgentFileInput: true, Path: p}
	switch spec.Kind {
	case "file":
		if fb := st.opts.Flow; fb != nil && spec.Collect == wire.CollectFlow && p == fb.Path {
			return w, st.inlineFlow(ctx, w, fb)
		}
		data := fileInput(w, p)
		if spec.Collect == wire.CollectFlow && data != nil {
			if err := st.collectFlow(ctx, w, p, data); err != nil {
				return nil, err
			}
		}
	case "tar-upload":
		if err := st.treeInput(ctx, w, p); err != nil {
			return nil, err
		}
	}
	if spec.Collect == wire.CollectStep && spec.Kind != "file" {
		members, err := st.stepMembers(ctx)
		if err != nil {
			return nil, err
		}
		w.Members = members
		st.collected = true
	}
	return w, nil
}

// fileInput fills a file input from the file at p: size and mtimeMs when
// it is a regular file, and its bytes within the cap. It returns the
// bytes, nil when there are none to send: the tool-server reports a file
// it did not get.
func fileInput(w *wire.FileInputObject, p string) []byte {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	size, mt := fi.Size(), clientfs.MtimeMs(fi)
	w.Size, w.MtimeMs = &size, &mt
	if wire.OverCap(size) {
		w.ContentOmitted = "size-limit"
		return nil
	}
	data, mt, why := clientfs.ReadRegular(p, wire.MaxFileBytes)
	if why != "" {
		return nil
	}
	size = int64(len(data))
	w.Size, w.MtimeMs = &size, &mt
	content := base64.StdEncoding.EncodeToString(data)
	w.Content = &content
	return data
}

// inlineFlow fills the flow file input of a flow held in memory as
// fileInput and collectFlow fill one on disk: its bytes (within the cap),
// then canonical, spelling (listed: the file stands there) and members.
func (st *callState) inlineFlow(ctx context.Context, w *wire.FileInputObject, fb *FlowBytes) error {
	size, mt := int64(len(fb.Data)), float64(time.Now().UnixMilli())
	w.Size, w.MtimeMs = &size, &mt
	if wire.OverCap(size) {
		w.ContentOmitted = "size-limit"
		return nil
	}
	content := base64.StdEncoding.EncodeToString(fb.Data)
	w.Content = &content
	return st.collectFlowAt(ctx, w, fb.Path, fb.Path, wire.Spelling{State: wire.SpellListed}, fb.Data)
}

// treeInput sends a tar-upload input: the file or directory at p as a
// gzipped tar whose entries are prefixed with its base name, streamed to
// POST /upload; the object gets contentHash and uploadId.
func (st *callState) treeInput(ctx context.Context, w *wire.FileInputObject, p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return nil // the tool-server reports the missing path
	}
	size, mt := fi.Size(), clientfs.MtimeMs(fi)
	w.Size, w.MtimeMs = &size, &mt
	id, hash, err := st.c.uploadTree(ctx, p)
	if err != nil {
		return err
	}
	w.ContentHash, w.UploadID = hash, id
	return nil
}

// collectFlow adds canonical, spelling and members to the file input of a
// flow the client read (docs/link-protocol.md, "The flow file input").
func (st *callState) collectFlow(ctx context.Context, w *wire.FileInputObject, p string, data []byte) error {
	abs := p
	if !filepath.IsAbs(abs) {
		a, err := filepath.Abs(abs)
		if err != nil {
			return err
		}
		abs = a
	}
	return st.collectFlowAt(ctx, w, abs, clientfs.RealPath(abs), flowrun.SpellingAt(abs), data)
}

// collectFlowAt is collectFlow for the flow at abs, whose real path is
// canonical and whose directory lists it as sp.
func (st *callState) collectFlowAt(ctx context.Context, w *wire.FileInputObject, abs, canonical string, sp wire.Spelling, data []byte) error {
	a := wire.StepArgs(st.args)
	pol := clientfs.ClientRoots(abs, canonical, a.ProjectRoot)
	if st.opts.Tunnel != nil {
		// The pages of the run read the files beside the flow through
		// the tunnel, under the same policy as its members.
		st.opts.Tunnel.ServeFiles(pol)
	}
	c := st.newCollector(pol)
	if fl, err := flow.Parse(canonical, data); err == nil {
		update, narrow := a.Update()
		root := memberRun{canonical: canonical, fl: fl, name: strings.TrimSuffix(filepath.Base(abs), ".yaml"),
			update: update, narrow: narrow, platform: callPlatform(a)}
		if err := c.walk(ctx, root); err != nil {
			return err
		}
	}
	if err := c.sendBaselines(ctx); err != nil {
		return err
	}
	w.Canonical, w.Spelling, w.Members = canonical, &sp, c.members
	st.collected = true
	return nil
}
