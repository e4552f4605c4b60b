package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/toolserver/toolserver/fault"
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

// toolError turns any error of a call into a wire error: a *fault.Error
// keeps its kind and message, a body over the cap is too_large, and
// everything else is an internal fault (see internalError).
func (s *Server) toolError(r *http.Request, name string, err error) *fault.Error {
	te := fault.AsError(err)
	if !te.Internal() {
		return te
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return &fault.Error{Kind: fault.TooLarge,
			Message: fmt.Sprintf("request body over %d bytes: send large files through POST /upload", mbe.Limit)}
	}
	return s.internalError(r, name, err)
}

// jsonBody refuses a request whose body is not declared JSON, a tool call
// or a /v1 run's start alike: a web page can send a text/plain or form
// POST to a loopback server without a preflight, never an
// application/json one. Every client sends it (the published Argent
// client and runs/v1.Client included).
func jsonBody(r *http.Request) *fault.Error {
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && mt == "application/json" {
		return nil
	}
	got := "no Content-Type"
	switch {
	case err == nil:
		got = "Content-Type " + mt
	case ct != "":
		got = "a Content-Type that does not parse"
	}
	return &fault.Error{Kind: fault.UnsupportedMedia,
		Message: fmt.Sprintf("POST %s takes its body as JSON with Content-Type: application/json, got %s", r.URL.Path, got)}
}

// slowBody is the answer to a request whose body did not arrive within
// Config.ReadTimeout.
func (s *Server) slowBody(r *http.Request) *fault.Error {
	return &fault.Error{Kind: fault.Timeout,
		Message: fmt.Sprintf("%s %s: the request did not arrive within %s: the link is too slow for its size", r.Method, r.URL.Path, s.cfg.ReadTimeout)}
}

// bodyError gives a call whose body could not be read its kind.
func (s *Server) bodyError(r *http.Request, name string, err error) *fault.Error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return s.slowBody(r)
	}
	return s.toolError(r, name, err)
}

// readChunk is the most readBody allocates ahead of the bytes a client
// has sent.
const readChunk = 1 << 20

// readBody reads a request body of at most limit bytes whole. A longer one
// is read on to the cap (the client is not cut off mid-send, so it reads
// the answer) and refused with *http.MaxBytesError; one that says it is
// over the cap is never buffered. A body goes into chunks of readChunk as
// its bytes arrive, joined once at the end: a client that claims a length
// it does not send holds at most readChunk more than it sent, and a large
// body is copied once, not at every doubling of a growing buffer.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, limit)
	if r.ContentLength > limit {
		if _, err := io.Copy(io.Discard, body); err != nil {
			return nil, err
		}
		return nil, &http.MaxBytesError{Limit: limit}
	}
	var chunks [][]byte
	c := make([]byte, 0, min(max(r.ContentLength, 512), readChunk))
	for {
		n, err := body.Read(c[len(c):cap(c)])
		c = c[:len(c)+n]
		if len(c) == cap(c) {
			chunks, c = append(chunks, c), make([]byte, 0, readChunk)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if len(chunks) == 0 {
		return c, nil
	}
	return bytes.Join(append(chunks, c), nil), nil
}

func (s *Server) callTool(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "name")
	if _, ok := s.cfg.Tools.Get(name); !ok {
		refuse(w, r, &fault.Error{Kind: fault.NotFound, Code: "TOOL_NOT_FOUND", Message: fmt.Sprintf("unknown tool %q; GET /tools lists the tools", name)})
		return
	}
	if err := jsonBody(r); err != nil {
		refuse(w, r, err)
		return
	}
	body, err := readBody(w, r, tool.MaxCallBody)
	if err != nil {
		writeError(w, s.bodyError(r, name, err))
		return
	}
	opts := tool.Options{Linked: r.Header.Get("X-Argent-Linked") == "1", TempDir: s.cfg.TempDir}
	if !wantsStream(r) {
		res, err := s.cfg.Tools.Invoke(r.Context(), name, body, opts)
		if err != nil {
			writeError(w, s.toolError(r, name, err))
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"data": res})
		return
	}
	st := newStream(w)
	defer st.close()
	opts.Progress = func(v any) { st.send(map[string]any{"event": streamEvent(v), "data": v}) }
	res, err := s.cfg.Tools.Invoke(r.Context(), name, body, opts)
	if err != nil {
		te := s.toolError(r, name, err)
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

// streamEvent names the stream line of a progress value: "progress" (the data
// is a step report, docs/link-protocol.md, "The call"), or the event a value
// names itself, such as tool.Waiting's "waiting", which clients that do not
// know it skip.
func streamEvent(v any) string {
	if e, ok := v.(interface{ StreamEvent() string }); ok {
		return e.StreamEvent()
	}
	return "progress"
}

func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Uploads == nil {
		writeError(w, &fault.Error{Kind: fault.NotFound, Message: "uploads are off"})
		return
	}
	u, err := s.cfg.Uploads.Receive(r.Context(), r.Body)
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			writeError(w, s.slowBody(r))
			return
		}
		if r.Context().Err() != nil {
			return // the client went away
		}
		writeError(w, s.uploadError(r, err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"uploadId": u.ID, "contentHash": u.SHA256, "size": u.Size})
}

// uploadError gives a failed upload its kind: over the cap, over the
// pending total, not a gzipped tar, or a body that broke off are the
// client's; a file the store could not write is an internal fault.
func (s *Server) uploadError(r *http.Request, err error) *fault.Error {
	var pe *fs.PathError
	switch {
	case errors.Is(err, store.ErrUploadTooLarge):
		return &fault.Error{Kind: fault.TooLarge, Message: fmt.Sprintf("%v: an upload may have at most %d bytes", err, s.cfg.Uploads.MaxUpload())}
	case errors.Is(err, store.ErrUploadSpace):
		return &fault.Error{Kind: fault.InsufficientStorage, Message: err.Error()}
	case errors.Is(err, store.ErrNotGzip), errors.Is(err, store.ErrEmptyUpload):
		return &fault.Error{Kind: fault.Validation, Message: fmt.Sprintf("%v: POST /upload takes a gzipped tar (Content-Type: application/gzip)", err)}
	case errors.As(err, &pe):
		// The upload directory: creating, writing or closing its file.
		return s.internalError(r, "upload", err)
	}
	return &fault.Error{Kind: fault.Validation, Message: err.Error()}
}

func (s *Server) artifact(w http.ResponseWriter, r *http.Request) {
	h, path, err := s.cfg.Artifacts.Get(chi.URLParam(r, "id"))
	if err != nil {
		if errors.Is(err, store.ErrNoArtifact) {
			writeError(w, &fault.Error{Kind: fault.NotFound, Message: err.Error()})
			return
		}
		writeError(w, s.toolError(r, "artifacts", err))
		return
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		writeError(w, &fault.Error{Kind: fault.NotFound, Message: fmt.Sprintf("artifact %s is gone from the tool-server's store", h.ID)})
		return
	}
	if err != nil {
		writeError(w, s.toolError(r, "artifacts", err))
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		writeError(w, s.toolError(r, "artifacts", err))
		return
	}
	w.Header().Set("Content-Type", h.MimeType)
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename=%q`, h.Filename))
	http.ServeContent(w, r, h.Filename, st.ModTime(), f)
}
