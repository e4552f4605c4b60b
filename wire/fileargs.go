package wire

import (
	"regexp"
	"strings"
	"sync"

	"github.com/toolserver/toolserver/internal/clientpath"
)

// The file-input rules, owned here and called by both ends: the client wrapping
// a call's file inputs (docs/argent-client.md, §4.1) and collecting the file
// arguments of tool: steps (docs/link-protocol.md, "Tool files"), and the
// tool-server deciding what such a client sends (pre-validation, the
// older-client refusals, the recorder, the lookup of a tool step's files).

// templateRef matches one ${arg} in a file input's path.
var templateRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{([^}]+)\}`) })

// ArgSet reports whether args sets k. A null argument is not set, like
// an omitted one: JSON has no undefined, and a tool-server reads a null
// optional argument as absent (tool.Call.Has), so a client that counted
// it as set would skip or keep an input the tool-server then looks for.
func ArgSet(args map[string]any, k string) bool {
	v, ok := args[k]
	return ok && v != nil
}

// FillPath fills the ${arg} of a file input's path from the string
// arguments; ok is false when one is missing, not a string, or empty.
func FillPath(tmpl string, args map[string]any) (string, bool) {
	ok := true
	out := templateRef().ReplaceAllStringFunc(tmpl, func(m string) string {
		v, isStr := args[m[2:len(m)-1]].(string)
		if !isStr || v == "" {
			ok = false
		}
		return v
	})
	return out, ok
}

// SentToolExts are the endings of a file a client sends for a tool: step
// ("Tool files"), in any case.
var SentToolExts = []string{".png", ".yaml"}

// HasSentToolExt reports whether p ends in one of SentToolExts, in any
// case.
func HasSentToolExt(p string) bool {
	l := strings.ToLower(p)
	for _, e := range SentToolExts {
		if strings.HasSuffix(l, e) {
			return true
		}
	}
	return false
}

// SetInput is a file input that a call's arguments set. Problem says why
// it is not a file a client can send with a replay over a link (an
// absolute .png or .yaml path that one argument names); it is "" when it
// is: a file argument.
type SetInput struct {
	Target  string
	Problem string
}

// SetFileInputs returns the file inputs args set, in declared order, as a
// client decides it: an input whose skipWhenSet or unwrapWhenSet argument
// is set is not read, and a path built from arguments counts only when all
// of them are set.
func SetFileInputs(inputs []FileInput, args map[string]any) []SetInput {
	var out []SetInput
	for _, in := range inputs {
		if in.SkipWhenSet != "" && ArgSet(args, in.SkipWhenSet) || in.UnwrapWhenSet != "" && ArgSet(args, in.UnwrapWhenSet) {
			continue
		}
		single := in.Path == "${"+in.Target+"}"
		if single && !ArgSet(args, in.Target) {
			continue
		}
		if !single {
			if _, ok := FillPath(in.Path, args); !ok || !templateRef().MatchString(in.Path) {
				continue
			}
		}
		v, isStr := args[in.Target].(string)
		var why string
		switch {
		case !single:
			why = "a path the tool builds from other arguments (" + in.Path + ")"
		case in.Kind == "directory":
			why = "a directory"
		case in.Kind == "tar-upload":
			why = "an app or directory sent as an upload"
		case in.Kind == "probe":
			why = "an output directory or a path the tool probes"
		case in.Kind != "file":
			why = "a " + in.Kind + " input"
		case !isStr:
			why = "not a path"
		case !clientpath.IsAbs(v):
			why = "a relative path"
		case !HasSentToolExt(v):
			why = "a file that does not end in .png or .yaml"
		}
		out = append(out, SetInput{Target: in.Target, Problem: why})
	}
	return out
}

// FileArguments returns the targets of the file arguments args sets
// (docs/link-protocol.md, "Tool files"): the inputs SetFileInputs finds no
// problem with. Their values are absolute .png or .yaml paths.
func FileArguments(inputs []FileInput, args map[string]any) []string {
	var out []string
	for _, in := range SetFileInputs(inputs, args) {
		if in.Problem == "" {
			out = append(out, in.Target)
		}
	}
	return out
}
