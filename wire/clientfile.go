package wire

// ClientFileMarker marks a client-file directive: an object of a result
// that asks the client to write a file of its project
// (docs/link-protocol.md, "Baselines in the result"; docs/argent-client.md,
// §5.3).
const ClientFileMarker = "__argentClientFile"

// ClientFile is a client-file directive as the tool-server sends it: the
// client's path of the file and its content, base64 when Encoding says so
// (a baseline), else the text itself (a recording).
type ClientFile struct {
	ArgentClientFile bool    `json:"__argentClientFile"`
	Path             string  `json:"path"`
	Content          *string `json:"content"`
	Encoding         string  `json:"encoding,omitempty"`
}
