package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/runs"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/tool/flowtool/flowargs"
)

// The control plane under /v1: runs started over HTTP that go on without
// the connection, their event logs as server-sent events with a resume
// cursor, and one error envelope with stable codes.

// v1Error is an error of the /v1 surface: its status and code.
type v1Error struct {
	Status  int
	Code    string
	Message string
}

// writeV1Error answers a /v1 error in its envelope.
func writeV1Error(w http.ResponseWriter, e v1Error) {
	writeJSON(w, e.Status, runs.ErrorBody{Error: runs.ErrorDetail{Code: e.Code, Message: e.Message}})
}

// v1Of is a fault.Error of the middleware (auth, Host guard, routes) in
// the /v1 envelope: the status and the /v1 code of its kind (status.go).
func v1Of(e *fault.Error) v1Error {
	return v1Error{Status: Status(e.Kind), Code: v1Code(e.Kind), Message: e.Message}
}

// v1Err is a /v1 error with code, answered with the code's status.
func v1Err(code, message string) v1Error {
	return v1Error{Status: v1Status(code), Code: code, Message: message}
}

// isV1 reports whether r is a request of the /v1 surface.
func isV1(r *http.Request) bool {
	return r.URL.Path == "/v1" || strings.HasPrefix(r.URL.Path, "/v1/")
}

// v1Routes mounts the control plane on r.
func (s *Server) v1Routes(r chi.Router) {
	r.Get("/capabilities", s.v1Capabilities)
	r.Post("/runs", s.v1StartRun)
	r.Get("/runs", s.v1ListRuns)
	r.Get("/runs/{id}", s.v1GetRun)
	r.Get("/runs/{id}/events", s.v1RunEvents)
	r.Post("/runs/{id}/cancel", s.v1CancelRun)
	r.Get("/runs/{id}/files/{name}", s.v1RunFile)
	r.Get("/events", s.v1Changes)
}

// Capabilities is GET /v1/capabilities.
type Capabilities struct {
	Capabilities struct {
		Runs      bool `json:"runs"`
		Events    bool `json:"events"`
		Dashboard bool `json:"dashboard"`
		MCP       bool `json:"mcp"`
	} `json:"capabilities"`
	Server struct {
		Version string `json:"version"`
		Commit  string `json:"commit,omitempty"`
	} `json:"server"`
}

func (s *Server) v1Capabilities(w http.ResponseWriter, r *http.Request) {
	var c Capabilities
	c.Capabilities.Runs = s.cfg.Runs != nil
	c.Capabilities.Events = s.cfg.Runs != nil
	c.Capabilities.Dashboard = s.cfg.Dashboard != nil
	c.Capabilities.MCP = s.cfg.MCP != nil
	c.Server.Version, c.Server.Commit = s.cfg.Version, s.cfg.Commit
	writeJSON(w, http.StatusOK, c)
}

// store answers 404 when the server keeps no runs.
func (s *Server) store(w http.ResponseWriter) *runs.Store {
	if s.cfg.Runs == nil {
		writeV1Error(w, v1Err(runs.CodeNotFound, "this tool-server keeps no runs (serve --state-dir)"))
	}
	return s.cfg.Runs
}

// runError answers an error of the run store.
func (s *Server) runError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, runs.ErrUnknownRun):
		writeV1Error(w, v1Err(runs.CodeUnknownRun, err.Error()))
	case errors.Is(err, runs.ErrRunExists):
		writeV1Error(w, v1Err(runs.CodeRunExists, err.Error()))
	case errors.Is(err, runs.ErrWrongState):
		writeV1Error(w, v1Err(runs.CodeWrongState, err.Error()))
	default:
		writeV1Error(w, v1Of(s.internalError(r, "runs", err)))
	}
}

func (s *Server) v1StartRun(w http.ResponseWriter, r *http.Request) {
	st := s.store(w)
	if st == nil {
		return
	}
	if err := jsonBody(r); err != nil {
		refuse(w, r, err)
		return
	}
	body, err := readBody(w, r, tool.MaxCallBody)
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		writeV1Error(w, v1Of(s.toolError(r, flow.ToolFlowExecute, err)))
		return
	case err != nil:
		writeV1Error(w, v1Err(runs.CodeBadRequest, "reading the body: "+err.Error()))
		return
	}
	var req runs.StartRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeV1Error(w, v1Err(runs.CodeBadRequest, "the body is not a run request ({\"tool_args\": {…}, \"labels\"?: {…}, \"run_id\"?: \"<uuid>\"}): "+fmt.Sprintf("%.300s", err.Error())))
		return
	}
	var args map[string]json.RawMessage
	if err := json.Unmarshal(req.ToolArgs, &args); err != nil || args == nil {
		writeV1Error(w, v1Err(runs.CodeBadRequest, "tool_args must be an object: flow-execute's arguments"))
		return
	}
	if err := runs.CheckLabels(req.Labels); err != nil {
		writeV1Error(w, v1Err(runs.CodeBadRequest, "labels: "+err.Error()))
		return
	}
	if req.RunID != "" && !runs.ValidID(req.RunID) {
		writeV1Error(w, v1Err(runs.CodeBadRequest, fmt.Sprintf("run_id %.64q is not a UUID", req.RunID)))
		return
	}
	// What the run records is checked here, before it exists, by the
	// tool's own caps: a refused argument creates no run.
	b, err := flowargs.Begin(args)
	if err != nil {
		writeV1Error(w, v1Err(runs.CodeBadRequest, "tool_args: "+err.Error()))
		return
	}
	b.ID, b.Labels, b.Source = req.RunID, req.Labels, "v1"
	// The run goes on without the connection, counted in flight: a
	// stopping server's drain waits for it.
	if !s.drain.enter() {
		writeV1Error(w, v1Err(runs.CodeUnavailable, "this tool-server is stopping and starts no run; send it to another replica"))
		return
	}
	rec, err := st.Start(r.Context(), b)
	if err != nil {
		s.drain.leave()
		s.runError(w, r, err)
		return
	}
	s.runsWG.Add(1)
	go func() {
		defer s.runsWG.Done()
		defer s.drain.leave()
		ctx := runs.WithRecorder(s.base(), rec)
		_, err := s.cfg.Tools.Invoke(ctx, flow.ToolFlowExecute, req.ToolArgs, tool.Options{Linked: b.Linked, TempDir: s.cfg.TempDir})
		// A call refused before the flow ran (bad arguments) ends here;
		// one that ran has ended already, and End keeps its first end.
		// The record shows an internal fault as runs.InternalReason; its
		// detail goes to the log, by the run's id.
		if err != nil && fault.AsError(err).Internal() {
			s.cfg.Log.Error("internal error in a run", "run", rec.ID(), "err", err)
		}
		rec.End(nil, err, nil)
	}()
	writeJSON(w, http.StatusCreated, runs.Started{Run: rec.ID(), Status: runs.Running})
}

func (s *Server) v1ListRuns(w http.ResponseWriter, r *http.Request) {
	st := s.store(w)
	if st == nil {
		return
	}
	q := r.URL.Query()
	f := runs.Filter{Status: q.Get("status"), Before: q.Get("before")}
	if f.Status != "" && !slices.Contains(runs.Statuses, f.Status) {
		writeV1Error(w, v1Err(runs.CodeBadRequest, fmt.Sprintf("status %q: want one of %s", f.Status, strings.Join(runs.Statuses, ", "))))
		return
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			writeV1Error(w, v1Err(runs.CodeBadRequest, fmt.Sprintf("limit %q: want a number from 1 to 500", v)))
			return
		}
		f.Limit = n
	}
	labels, err := runs.ParseLabels(q["label"])
	if err != nil {
		writeV1Error(w, v1Err(runs.CodeBadRequest, "label "+err.Error()))
		return
	}
	f.Labels = labels
	list, err := st.List(r.Context(), f)
	if err != nil {
		s.runError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"runs": list})
}

func (s *Server) v1GetRun(w http.ResponseWriter, r *http.Request) {
	st := s.store(w)
	if st == nil {
		return
	}
	d, err := st.Get(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.runError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (s *Server) v1CancelRun(w http.ResponseWriter, r *http.Request) {
	st := s.store(w)
	if st == nil {
		return
	}
	id := chi.URLParam(r, "id")
	if err := st.Cancel(r.Context(), id); err != nil {
		s.runError(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"run": id, "status": "cancelling"})
}

func (s *Server) v1RunFile(w http.ResponseWriter, r *http.Request) {
	st := s.store(w)
	if st == nil {
		return
	}
	f, err := st.File(chi.URLParam(r, "id"), chi.URLParam(r, "name"))
	if err != nil {
		s.runError(w, r, err)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		s.runError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "private, max-age=86400")
	http.ServeContent(w, r, "", fi.ModTime(), f)
}

// eventPoll bounds how long a stream waits for a change before it looks
// again (a change wakes it at once; this only bounds a missed wake-up).
const eventPoll = 2 * time.Second

// sseHeartbeat is how often an idle stream sends a comment, so proxies
// keep it open.
const sseHeartbeat = 15 * time.Second

// v1RunEvents streams a run's events: every event from the cursor on,
// then the live tail, then an end frame with the final status. The cursor
// is Last-Event-ID plus one (it wins) or ?from_seq=n, else 0.
func (s *Server) v1RunEvents(w http.ResponseWriter, r *http.Request) {
	st := s.store(w)
	if st == nil {
		return
	}
	id := chi.URLParam(r, "id")
	from := int64(0)
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeV1Error(w, v1Err(runs.CodeBadRequest, fmt.Sprintf("Last-Event-ID %q is not a sequence number", v)))
			return
		}
		from = n + 1
	} else if v := r.URL.Query().Get("from_seq"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeV1Error(w, v1Err(runs.CodeBadRequest, fmt.Sprintf("from_seq %q is not a sequence number", v)))
			return
		}
		from = n
	}
	if _, err := st.Status(r.Context(), id); err != nil {
		s.runError(w, r, err)
		return
	}
	sse := newSSE(w)
	for {
		changed := st.Changed()
		status, err := st.Status(r.Context(), id)
		if err != nil {
			return
		}
		evs, err := st.Events(r.Context(), id, from)
		if err != nil {
			return
		}
		for _, e := range evs {
			if !sse.frame("", strconv.FormatInt(e.Seq, 10), e) {
				return
			}
			from = e.Seq + 1
		}
		if runs.Terminal(status) {
			sse.frame("end", "", runs.EndFrame{Status: status})
			return
		}
		if !sse.wait(r.Context(), changed, s.stopping) {
			return
		}
	}
}

// v1Changes streams every change of the run list, for a dashboard: a
// frame with the changed runs (newest first) each time one starts,
// records an event or ends. It never ends on its own.
func (s *Server) v1Changes(w http.ResponseWriter, r *http.Request) {
	st := s.store(w)
	if st == nil {
		return
	}
	sse := newSSE(w)
	seen := map[string]int64{}
	for {
		changed := st.Changed()
		list, err := st.List(r.Context(), runs.Filter{Limit: 100})
		if err != nil {
			return
		}
		var out []runs.Run
		for _, run := range list {
			if n, ok := seen[run.ID]; !ok || n != run.EventCount {
				out = append(out, run)
				seen[run.ID] = run.EventCount
			}
		}
		if len(out) > 0 && !sse.frame("", "", map[string]any{"runs": out}) {
			return
		}
		if !sse.wait(r.Context(), changed, s.stopping) {
			return
		}
	}
}

// sseWriter writes server-sent events.
type sseWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func newSSE(w http.ResponseWriter) *sseWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	s := &sseWriter{w: w, rc: http.NewResponseController(w)}
	s.rc.Flush()
	return s
}

// frame writes one frame: its event name (none for an event of the
// log), its id, its data as JSON; false when the client is gone.
func (s *sseWriter) frame(event, id string, v any) bool {
	b, err := json.Marshal(v)
	if err != nil {
		return false
	}
	var out strings.Builder
	if event != "" {
		out.WriteString("event: " + event + "\n")
	}
	if id != "" {
		out.WriteString("id: " + id + "\n")
	}
	out.WriteString("data: ")
	out.Write(b)
	out.WriteString("\n\n")
	if _, err := io.WriteString(s.w, out.String()); err != nil {
		return false
	}
	return s.rc.Flush() == nil
}

// wait waits for a change, sending heartbeats; false when the client is
// gone or the server stops (a client reconnects with its cursor).
func (s *sseWriter) wait(ctx context.Context, changed, stopping <-chan struct{}) bool {
	poll := time.NewTimer(eventPoll)
	defer poll.Stop()
	beat := time.NewTicker(sseHeartbeat)
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-stopping:
			return false
		case <-changed:
			return true
		case <-poll.C:
			return true
		case <-beat.C:
			if _, err := io.WriteString(s.w, ": keep-alive\n\n"); err != nil || s.rc.Flush() != nil {
				return false
			}
		}
	}
}
