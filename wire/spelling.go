package wire

// Spelling tells how the directory of a file lists its name
// (docs/link-protocol.md, "Spelling"): listed as written, listed with another
// case, or absent.
type Spelling struct {
	State       string `json:"state"` // "listed", "case_folded" or "absent"
	Actual      string `json:"actual,omitempty"`
	Addressable *bool  `json:"addressable,omitempty"`
}

// The states of a Spelling.
const (
	SpellListed     = "listed"
	SpellCaseFolded = "case_folded"
	SpellAbsent     = "absent"
)
