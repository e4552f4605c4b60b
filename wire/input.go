package wire

// FileInputObject is the one shape of a file-input object ("__argentFileInput";
// docs/link-protocol.md, "The flow file input", and docs/argent-client.md,
// §4.1), as the client sends it and as the registry and the link's server read
// it: the file by its path, size and mtimeMs, with its bytes (content, or
// contentOmitted past the cap) or, for a tar-upload input, the contentHash and
// uploadId of its archive; an input with collect adds canonical, spelling and
// members. Members is nil when the object has no members field (absent or null)
// and a list, empty too, when it has one: a client sends "members": [] for a
// flow that reaches no file.
type FileInputObject struct {
	ArgentFileInput bool      `json:"__argentFileInput"`
	Path            string    `json:"path"`
	Size            *int64    `json:"size,omitempty"`
	MtimeMs         *float64  `json:"mtimeMs,omitempty"`
	Content         *string   `json:"content,omitempty"`
	ContentOmitted  string    `json:"contentOmitted,omitempty"`
	ContentHash     string    `json:"contentHash,omitempty"`
	UploadID        string    `json:"uploadId,omitempty"`
	Canonical       string    `json:"canonical,omitempty"`
	Spelling        *Spelling `json:"spelling,omitempty"`
	Members         []Member  `json:"members,omitzero"`
}
