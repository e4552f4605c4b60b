package store

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// KeepArtifacts copies the artifacts a result names (each Artifact handle
// with a HostPath, at any depth) out of the process's temp dir into dir
// and replaces each handle by the copy's absolute path, as the Argent
// client does with a download. A handle whose file cannot be copied
// becomes null; a result that is not JSON comes back as it is.
func KeepArtifacts(res any, dir string) any {
	b, err := json.Marshal(res)
	if err != nil {
		return res
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return res
	}
	return walkArtifacts(v, dir)
}

// walkArtifacts replaces the handles in v, a decoded JSON value.
func walkArtifacts(v any, dir string) any {
	switch x := v.(type) {
	case map[string]any:
		if isArtifact, _ := x["__argentArtifact"].(bool); isArtifact {
			src, _ := x["hostPath"].(string)
			name, _ := x["filename"].(string)
			if src == "" || name == "" {
				return nil
			}
			data, err := os.ReadFile(src)
			if err != nil {
				return nil
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil
			}
			dst := filepath.Join(dir, filepath.Base(name))
			if err := os.WriteFile(dst, data, 0o644); err != nil {
				return nil
			}
			abs, _ := filepath.Abs(dst)
			return abs
		}
		for k, e := range x {
			x[k] = walkArtifacts(e, dir)
		}
	case []any:
		for i, e := range x {
			x[i] = walkArtifacts(e, dir)
		}
	}
	return v
}
