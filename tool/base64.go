package tool

import "encoding/base64"

// DecodeBase64 accepts standard base64 with or without padding, as Node's
// Buffer.toString("base64") and other clients produce it.
func DecodeBase64(s string) ([]byte, error) {
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	return base64.RawStdEncoding.DecodeString(s)
}
