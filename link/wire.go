package link

import (
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/clientfs"
)

// The roles of a member.
const (
	RoleFlow     = "flow"
	RoleBaseline = "baseline"
	RoleTool     = "tool"
)

// The states of a member without bytes.
const (
	StateMissing = "missing"
	StateRefused = "refused"
	StateListed  = "listed"
)

// The collect values of a file input.
const (
	CollectFlow = "flow"
	CollectStep = "step"
)

// MaxFileBytes caps one member, and the total of a call's flow members.
const MaxFileBytes = clientfs.MaxFileBytes

// MaxInlineBytes is what the client puts in the call body; other members go
// through POST /upload, one gzipped tar each.
const MaxInlineBytes = 256 << 10

// MaxDepth is the deepest run: chain the client follows.
const MaxDepth = flow.MaxRunDepth

// Member is one file of a linked call, exactly as the seed's table names
// its fields.
type Member struct {
	Role        string         `json:"role"`
	Key         string         `json:"key"`
	Path        string         `json:"path"`
	Canonical   string         `json:"canonical,omitempty"`
	Spelling    *flow.Spelling `json:"spelling,omitempty"`
	Content     *string        `json:"content,omitempty"`
	UploadID    string         `json:"uploadId,omitempty"`
	ContentHash string         `json:"contentHash,omitempty"`
	Size        *int64         `json:"size,omitempty"`
	MtimeMs     *float64       `json:"mtimeMs,omitempty"`
	State       string         `json:"state,omitempty"`
	Error       string         `json:"error,omitempty"`
}

// FlowInput is the file-input object of an input with collect: the flow
// file with its canonical, spelling and members.
type FlowInput struct {
	ArgentFileInput bool           `json:"__argentFileInput"`
	Path            string         `json:"path"`
	Size            *int64         `json:"size,omitempty"`
	MtimeMs         *float64       `json:"mtimeMs,omitempty"`
	Content         *string        `json:"content,omitempty"`
	Canonical       string         `json:"canonical,omitempty"`
	Spelling        *flow.Spelling `json:"spelling,omitempty"`
	Members         []Member       `json:"members"`
}

// Key joins a member key: the real directory of the naming file, a NUL,
// and the target as written.
func Key(dir, target string) string { return dir + "\x00" + target }
