package wire

// FileInput declares an argument that names a file on the client, in the shape
// GET /tools lists it (see docs/link-protocol.md, "collect in GET /tools").
type FileInput struct {
	Target        string `json:"target"`
	Path          string `json:"path"`
	Kind          string `json:"kind"` // file, directory, probe, tar-upload
	Optional      bool   `json:"optional,omitempty"`
	UnwrapWhenSet string `json:"unwrapWhenSet,omitempty"`
	SkipWhenSet   string `json:"skipWhenSet,omitempty"`
	Collect       string `json:"collect,omitempty"`
}

// The collect values of a file input.
const (
	CollectFlow = "flow"
	CollectStep = "step"
)

// IsFileArgument reports whether the input is a file argument
// (docs/link-protocol.md, "Tool files"): of kind file, with a path that is only
// its own argument.
func (in FileInput) IsFileArgument() bool {
	return in.Kind == "file" && in.Path == "${"+in.Target+"}"
}
