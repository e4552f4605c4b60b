package wire

import (
	"encoding/base64"
)

// DecodeBase64 decodes a file's content as a client sends it: standard
// base64 with or without padding, as Node's Buffer.toString("base64") and
// other clients produce it. Content whose bytes would be over the 32 MiB
// cap is refused with ErrOverCap before it is decoded.
func DecodeBase64(s string) ([]byte, error) {
	if OverCap(Base64Size(s)) {
		return nil, ErrOverCap
	}
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	return base64.RawStdEncoding.DecodeString(s)
}
