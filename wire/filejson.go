package wire

import (
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// fileInputJSON keeps encoding/json's leniency on a file-input object:
// names matched in any case (but '_' and '-' as written), the last of a
// repeated name kept, invalid UTF-8 replaced.
var fileInputJSON = jsonv2.JoinOptions(
	jsonv2.MatchCaseInsensitiveNames(true),
	jsonv1.MatchCaseSensitiveDelimiter(true),
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
)

// UnmarshalFileInput decodes a file-input object (a plain one, or a
// flow's with its members) into v, as encoding/json would. It is the v2
// decoder: one pass that validates as it decodes, where encoding/json
// scans the whole text before it decodes it, so an object carrying 32 MiB
// of base64 decodes three to five times faster.
func UnmarshalFileInput(raw []byte, v any) error {
	return jsonv2.Unmarshal(raw, v, fileInputJSON)
}

// skipCollected skips the members and the spelling of a file-input object
// (UnmarshalFileFields).
var skipCollected = jsonv2.WithUnmarshalers(jsonv2.JoinUnmarshalers(
	jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, _ *[]Member) error { return dec.SkipValue() }),
	jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, _ **Spelling) error { return dec.SkipValue() }),
))

// UnmarshalFileFields decodes a file-input object into in as
// UnmarshalFileInput does, but skips its members and spelling, as text
// and without decoding them: the registry reads neither (the link's
// server decodes them, once), and the members are most of the bytes of a
// linked call.
func UnmarshalFileFields(raw []byte, in *FileInputObject) error {
	return jsonv2.Unmarshal(raw, in, fileInputJSON, skipCollected)
}
