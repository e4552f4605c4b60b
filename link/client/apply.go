package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/atomicfile"
	"github.com/toolserver/toolserver/internal/clientfs"
	"github.com/toolserver/toolserver/internal/clientpath"
	"github.com/toolserver/toolserver/wire"
)

// clientPNGMagic starts every PNG file.
var clientPNGMagic = []byte("\x89PNG\r\n\x1a\n")

// DirectiveError is a result with a client-file directive that the call
// could not have asked for: a recording's file (a utf8 directive) in the
// result of a call that records no flow, or for another file than the
// recording the call names. A tool-server that sends one breaks the
// protocol, so the client applies nothing of that result, and the error
// is marked as the machinery's failure (fault.Infrastructure).
type DirectiveError struct {
	Tool string
	// Path is the file the directive names; Reason why it is refused.
	Path, Reason string
}

func (e *DirectiveError) Error() string {
	return fmt.Sprintf("%s: the tool-server's result asks to write a file this call did not ask for (%s); the client refused the result and wrote nothing of it", e.Tool, e.Reason)
}

// apply applies the client-file directives of a result (docs/link-protocol.md,
// "Baselines in the result"; docs/argent-client.md, §5.3) and returns the
// result with each replaced: a baseline by the path written or {"path",
// "error"}, a recording by its path or null. A result without directives comes
// back as it arrived. A result with a recording's directive the call did not
// ask for (recordingRefusal) is refused whole: nothing of it is written, and
// the error is a *DirectiveError.
func (st *callState) apply(data json.RawMessage) (json.RawMessage, error) {
	if !bytes.Contains(data, []byte(`"`+wire.ClientFileMarker+`"`)) {
		return data, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return data, nil
	}
	if err := st.checkDirectives(v); err != nil {
		return nil, err
	}
	v = st.applyIn(v)
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return data, nil
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}

// directiveOf returns the client-file directive v is, as docs/argent-client.md,
// §5.3 finds one: an object marked __argentClientFile with a string path and
// content.
func directiveOf(v any) (p, content, encoding string, ok bool) {
	x, isMap := v.(map[string]any)
	if !isMap {
		return "", "", "", false
	}
	if marker, _ := x[wire.ClientFileMarker].(bool); !marker {
		return "", "", "", false
	}
	p, okPath := x["path"].(string)
	content, okContent := x["content"].(string)
	encoding, _ = x["encoding"].(string)
	return p, content, encoding, okPath && okContent
}

// checkDirectives looks at every directive of a result before any is
// applied, and returns a *DirectiveError for the first that the call did
// not ask for.
func (st *callState) checkDirectives(v any) error {
	if p, _, enc, ok := directiveOf(v); ok {
		if enc == "" || enc == "utf8" {
			if why := st.recordingRefusal(p); why != "" {
				return fault.Infrastructure(&DirectiveError{Tool: st.name, Path: p, Reason: why})
			}
		}
		return nil
	}
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if err := st.checkDirectives(e); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range x {
			if err := st.checkDirectives(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// recordingRefusal tells why a recording's directive for p is not one the call
// asked for, or "" when it is: only a call of a recorder tool that names a
// recording (a valid name and an absolute project_root) takes one, and only for
// that file, <project_root>/.argent/flows/<name>.yaml, the path the recorder
// answers for a file it keeps on the client (docs/link-protocol.md, "The
// x-argent-linked header"). The wording follows the refusal of a baseline
// outside the baseline directories of the call.
func (st *callState) recordingRefusal(p string) string {
	switch {
	case !wire.RecorderTool(st.name):
		return fmt.Sprintf("%s is not the recording of this call: %s records no flow", p, st.name)
	case st.recording == "":
		return fmt.Sprintf("%s is not the recording of this call: the call names none (no valid name and absolute project_root)", p)
	case filepath.Clean(p) != filepath.Clean(st.recording):
		return fmt.Sprintf("%s is not the recording of this call (%s)", p, st.recording)
	}
	return ""
}

func (st *callState) applyIn(v any) any {
	if p, content, enc, ok := directiveOf(v); ok {
		return st.applyDirective(p, content, enc)
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = st.applyIn(e)
		}
	case []any:
		for i, e := range x {
			x[i] = st.applyIn(e)
		}
	}
	return v
}

func (st *callState) applyDirective(p, content, encoding string) any {
	switch encoding {
	case "base64":
		if st.opts.DryRun {
			return st.planBaseline(p, content)
		}
		written, why := st.writeBaseline(p, content)
		if why != "" {
			return map[string]any{"path": p, "error": why}
		}
		st.log(writtenLogLine(written))
		return written
	case "", "utf8":
		if err := st.writeRecording(p, content); err != nil {
			return nil
		}
		return p
	}
	return map[string]any{"path": p, "error": fmt.Sprintf("unknown encoding %q", encoding)}
}

// writeBaseline writes a baseline of the result: a .png path without a
// ".." segment, directly in the baseline directory of a run of this call
// that updates baselines, with PNG bytes within the cap, through a temp
// file and one rename. why is the refusal.
func (st *callState) writeBaseline(p, content string) (written, why string) {
	png, policy, why := st.checkBaseline(p, content)
	if why != "" {
		return "", why
	}
	target, why := directiveTarget(p, policy, ".png", "a PNG file")
	if why != "" {
		return "", why
	}
	if err := atomicfile.WriteFile(target, png); err != nil {
		return "", err.Error()
	}
	return p, ""
}

// checkBaseline applies the rules of a baseline directive that need no
// look at the disk: it returns the PNG bytes and the policy of the
// baseline directory, or why the directive is refused.
func (st *callState) checkBaseline(p, content string) (png []byte, policy *clientfs.Policy, why string) {
	switch {
	case !strings.HasSuffix(p, ".png"):
		return nil, nil, p + " does not end in .png"
	case !filepath.IsAbs(p) || clientpath.HasDotDot(p):
		return nil, nil, p + ` is not an absolute path without ".." segments`
	}
	policy, ok := st.writable[filepath.Dir(p)]
	if !ok {
		return nil, nil, p + " is not in the baseline directory of a run of this call that updates baselines"
	}
	png, err := wire.DecodeBase64(content)
	if errors.Is(err, wire.ErrOverCap) {
		return nil, nil, p + " is larger than the 32 MiB cap on a baseline"
	}
	if err != nil {
		return nil, nil, fmt.Sprintf("the content of %s is not valid base64: %v", p, err)
	}
	if !bytes.HasPrefix(png, clientPNGMagic) {
		return nil, nil, fmt.Sprintf("the content of %s is not a PNG image", p)
	}
	return png, policy, ""
}

// writeRecording applies a recording's savedTo directive, one the call asked
// for (checkDirectives), with the rules of docs/argent-client.md, §5.3: an
// absolute path without "..", a flow file name, in a .argent/flows directory.
// The same link checks as for a baseline apply.
func (st *callState) writeRecording(p, content string) error {
	dir := filepath.Dir(p)
	switch {
	case !filepath.IsAbs(p) || clientpath.HasDotDot(p):
		return errors.New(`not an absolute path without ".." segments`)
	case !flow.ValidFileName(filepath.Base(p)):
		return errors.New("not a flow file name")
	case !clientpath.IsFlowsDir(dir):
		return errors.New("not in .argent/flows")
	case wire.OverCap(int64(len(content))):
		return errors.New("over the cap")
	}
	target, why := directiveTarget(p, nil, ".yaml", "a YAML file")
	if why != "" {
		return errors.New(why)
	}
	return atomicfile.WriteFile(target, []byte(content))
}

// directiveTarget decides where a directive for p writes: p itself in its
// real directory, or the file a link at p names when that is a regular
// file with the same ending in the same directory. It refuses a link to
// nothing, a link out of the directory, a link to another kind of file, a
// file that is not a regular file, and (with a policy) a directory whose
// real location is under no root. The directory is created when missing.
func directiveTarget(p string, policy *clientfs.Policy, ext, kind string) (target, why string) {
	dir := filepath.Dir(p)
	if policy != nil {
		if !policy.Serves(clientfs.RealPath(dir)) {
			return "", policy.Outside(p)
		}
	}
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", clientfs.ErrorText(err, "mkdir", dir)
		}
	case err != nil:
		return "", clientfs.ErrorText(err, "lstat", p)
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", clientfs.ErrorText(err, "realpath", dir)
	}
	if policy != nil && !policy.Serves(realDir) {
		return "", policy.Outside(p)
	}
	switch {
	case fi == nil:
		return filepath.Join(realDir, filepath.Base(p)), ""
	case fi.Mode()&fs.ModeSymlink != 0:
		real, err := filepath.EvalSymlinks(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return "", clientfs.LinkToMissing(p)
		case err != nil:
			return "", clientfs.ErrorText(err, "realpath", p)
		case filepath.Dir(real) != realDir:
			return "", fmt.Sprintf("%s links out of its directory (to %s)", p, real)
		case !strings.HasSuffix(strings.ToLower(real), ext):
			return "", clientfs.LinksToOther(p, kind)
		}
		if rfi, err := os.Stat(real); err != nil || !rfi.Mode().IsRegular() {
			return "", clientfs.NotRegular(p)
		}
		return real, ""
	case !fi.Mode().IsRegular():
		return "", clientfs.NotRegular(p)
	}
	return filepath.Join(realDir, filepath.Base(p)), ""
}
