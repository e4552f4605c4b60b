package mcp

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxImageBytes caps the image bytes one result carries, all its images
// together: a 4096×4096 screenshot fits; a failed run's every baseline,
// capture and diff may not, and what is left out is named in a text
// content instead (its handle stays in the JSON).
const MaxImageBytes = 32 << 20

// handle is what images reads of an artifact handle in a result.
type handle struct {
	ID       string
	Filename string
}

// images returns the image content of the image artifacts the result
// JSON names (a screenshot's, a diff's, a failed snapshot's), read from
// the artifact store by id (never from the handle's hostPath, which is
// the tool's word only), in the order the JSON names them.
func (s *Server) images(result []byte) []sdk.Content {
	if s.cfg.Artifacts == nil {
		return nil
	}
	var v any
	if err := json.Unmarshal(result, &v); err != nil {
		return nil
	}
	var hs []handle
	collectHandles(v, &hs, map[string]bool{})
	var out []sdk.Content
	budget := int64(MaxImageBytes)
	for _, h := range hs {
		a, path, err := s.cfg.Artifacts.Get(h.ID)
		if err != nil {
			out = append(out, &sdk.TextContent{Text: fmt.Sprintf("artifact %s (%s) is no longer in the store", h.ID, h.Filename)})
			continue
		}
		if !strings.HasPrefix(a.MimeType, "image/") {
			continue
		}
		if a.Size > budget {
			out = append(out, &sdk.TextContent{Text: fmt.Sprintf("image %s (%s, %d bytes) is not attached: a result carries at most %d bytes of images", a.ID, a.Filename, a.Size, MaxImageBytes)})
			continue
		}
		data, err := readCapped(path, budget)
		if err != nil {
			s.cfg.Log.Error("artifact unreadable", "artifact", a.ID, "err", err)
			out = append(out, &sdk.TextContent{Text: fmt.Sprintf("image %s (%s) could not be read; see the tool-server's log", a.ID, a.Filename)})
			continue
		}
		budget -= int64(len(data))
		out = append(out, &sdk.ImageContent{Data: data, MIMEType: a.MimeType})
	}
	return out
}

// readCapped reads the file at path, refusing one over max bytes (the
// store's size is a record; the file is what is sent).
func readCapped(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: over %d bytes", path, max)
	}
	return data, nil
}

// collectHandles appends the artifact handles in v ({"__argentArtifact":
// true, "id": …}), each id once, objects' keys in sorted order so that
// the images come in the same order on every call.
func collectHandles(v any, out *[]handle, seen map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		if isArtifact, _ := v["__argentArtifact"].(bool); isArtifact {
			id, _ := v["id"].(string)
			name, _ := v["filename"].(string)
			if id != "" && !seen[id] {
				seen[id] = true
				*out = append(*out, handle{ID: id, Filename: name})
			}
			return
		}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			collectHandles(v[k], out, seen)
		}
	case []any:
		for _, e := range v {
			collectHandles(e, out, seen)
		}
	}
}
