package flow

import (
	"bytes"
	_ "embed"
)

// schemaJSON is kept as a file rather than built in Go so editors and
// reviewers read it directly; schema_test.go keeps its directive, option and
// selector lists and its "did you mean" hints equal to the parser's and
// validates the repository's flows against it, and schema_lsp_test.go
// checks what yaml-language-server reports with it.
//
//go:embed schema.json
var schemaJSON []byte

// Schema returns the JSON Schema (draft 2020-12) of a flow file, indented,
// with a trailing newline: what `toolserver flow schema` prints for editors
// (for example as yaml.schemas in VS Code's YAML extension). It describes
// every directive, option and selector shape; a few rules only the parser
// checks (a regex that compiles, a valid {{secret:NAME}}, the idle timeout
// floor, the scope count) are in the descriptions instead. A step is one
// object whose properties are the directives, not a oneOf of one per
// directive: a language server then completes each directive once and
// reports an unknown key as such, not as a missing launch. Beside draft
// 2020-12 it carries markdownDescription and errorMessage, the keywords
// yaml-language-server shows; other validators ignore them.
func Schema() []byte {
	out := bytes.TrimRight(bytes.Clone(schemaJSON), "\n")
	return append(out, '\n')
}
