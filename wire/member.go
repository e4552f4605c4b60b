package wire

// The roles of a member.
const (
	RoleFlow     = "flow"
	RoleBaseline = "baseline"
	RoleTool     = "tool"
	// RoleStyle is the role of a stylePath file: this project's extension
	// of the protocol, not the protocol's (see link/client/styles.go).
	RoleStyle = "style"
)

// The states of a member without bytes.
const (
	StateMissing = "missing"
	StateRefused = "refused"
	StateListed  = "listed"
)

// Member is one file of a linked call, exactly as the table of
// docs/link-protocol.md ("Members") names its fields.
type Member struct {
	Role        string    `json:"role"`
	Key         string    `json:"key"`
	Path        string    `json:"path"`
	Canonical   string    `json:"canonical,omitempty"`
	Spelling    *Spelling `json:"spelling,omitempty"`
	Content     *string   `json:"content,omitempty"`
	UploadID    string    `json:"uploadId,omitempty"`
	ContentHash string    `json:"contentHash,omitempty"`
	Size        *int64    `json:"size,omitempty"`
	MtimeMs     *float64  `json:"mtimeMs,omitempty"`
	State       string    `json:"state,omitempty"`
	Error       string    `json:"error,omitempty"`
}

// Key joins a member key: the real directory of the naming file, a NUL,
// and the target as written.
func Key(dir, target string) string { return dir + "\x00" + target }
