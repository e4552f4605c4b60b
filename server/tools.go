package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/toolserver/toolserver/store"
	"github.com/toolserver/toolserver/tool"
)

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "version": s.cfg.Version})
}

func (s *Server) listTools(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"tools": s.cfg.Tools.List()})
}

// wantsStream reports whether the client asked for NDJSON.
func wantsStream(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(v, ",") {
			mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
			if strings.EqualFold(mt, "application/x-ndjson") {
				return true
			}
		}
	}
	return false
}

// toolError turns any error into a wire error; an error that is not a
// *tool.Error is an internal fault: a generic message on the wire, the
// detail in the log.
func (s *Server) toolError(name string, err error) *tool.Error {
	var te *tool.Error
	if errors.As(err, &te) {
		return te
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return &tool.Error{Kind: tool.KindValidation, Status: http.StatusRequestEntityTooLarge,
			Message: fmt.Sprintf("request body over %d bytes: send large files through POST /upload", mbe.Limit)}
	}
	s.cfg.Log.Error("tool failed", "tool", name, "err", err)
	return &tool.Error{Kind: tool.KindInternal, Message: fmt.Sprintf("%s failed: %v", name, err)}
}

func (s *Server) callTool(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "name")
	if _, ok := s.cfg.Tools.Get(name); !ok {
		writeError(w, &tool.Error{Kind: tool.KindNotFound, Code: "TOOL_NOT_FOUND", Message: fmt.Sprintf("unknown tool %q; GET /tools lists the tools", name)})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxCallBody))
	if err != nil {
		writeError(w, s.toolError(name, err))
		return
	}
	opts := tool.Options{Linked: r.Header.Get("X-Argent-Linked") == "1", TempDir: s.cfg.TempDir}
	if !wantsStream(r) {
		res, err := s.cfg.Tools.Invoke(r.Context(), name, body, opts)
		if err != nil {
			writeError(w, s.toolError(name, err))
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"data": res})
		return
	}
	st := newStream(w)
	defer st.close()
	opts.Progress = func(v any) { st.send(map[string]any{"event": "progress", "data": v}) }
	res, err := s.cfg.Tools.Invoke(r.Context(), name, body, opts)
	if err != nil {
		te := s.toolError(name, err)
		if !st.hasStarted() {
			// Nothing was streamed yet: answer with the error's own status.
			writeError(w, te)
			return
		}
		st.send(struct {
			Event string `json:"event"`
			errorBody
		}{"error", envelope(te)})
		return
	}
	st.send(map[string]any{"event": "result", "data": res})
}

func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Uploads == nil {
		writeError(w, &tool.Error{Kind: tool.KindNotFound, Message: "uploads are off"})
		return
	}
	u, err := s.cfg.Uploads.Receive(r.Context(), r.Body)
	if err != nil {
		status := http.StatusBadRequest
		switch {
		case errors.Is(err, store.ErrUploadTooLarge):
			status = http.StatusRequestEntityTooLarge
			err = fmt.Errorf("%w: an upload may have at most %d bytes", err, s.cfg.Uploads.MaxUpload())
		case errors.Is(err, store.ErrUploadSpace):
			status = http.StatusInsufficientStorage
		case errors.Is(err, store.ErrNotGzip), errors.Is(err, store.ErrEmptyUpload):
			err = fmt.Errorf("%w: POST /upload takes a gzipped tar (Content-Type: application/gzip)", err)
		default:
			if r.Context().Err() != nil {
				return // the client went away
			}
		}
		writeError(w, &tool.Error{Kind: tool.KindValidation, Status: status, Message: err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"uploadId": u.ID, "contentHash": u.SHA256, "size": u.Size})
}

func (s *Server) artifact(w http.ResponseWriter, r *http.Request) {
	h, path, err := s.cfg.Artifacts.Get(chi.URLParam(r, "id"))
	if err != nil {
		if errors.Is(err, store.ErrNoArtifact) {
			writeError(w, &tool.Error{Kind: tool.KindNotFound, Message: err.Error()})
			return
		}
		writeError(w, s.toolError("artifacts", err))
		return
	}
	f, err := os.Open(path)
	if err != nil {
		writeError(w, &tool.Error{Kind: tool.KindNotFound, Message: fmt.Sprintf("artifact %s is gone: %v", h.ID, err)})
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		writeError(w, s.toolError("artifacts", err))
		return
	}
	w.Header().Set("Content-Type", h.MimeType)
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename=%q`, h.Filename))
	http.ServeContent(w, r, h.Filename, st.ModTime(), f)
}
