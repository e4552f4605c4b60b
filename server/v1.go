package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/runs"
	"github.com/toolserver/toolserver/tool"
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
	writeJSON(w, e.Status, runs.ErrorBody{Error: runs.ErrorDetail{Code: e.Code, Message: fault.Clip(e.Message, fault.MaxMessageBytes)}})
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
	r.Get("/runs/{id}/replay", s.v1Replay)
	r.Post("/runs/{id}/abandon", s.v1Abandon(""))
	r.Post("/runs/{id}/cancel", s.v1Abandon("cancelled (POST /v1/runs/{id}/cancel)"))
	r.Post("/runs/{id}/resume", s.v1ResumeRun)
	r.Get("/runs/{id}/files/{name}", s.v1RunFile)
	r.Get("/events", s.v1Changes)
}

// Capabilities is GET /v1/capabilities.
type Capabilities struct {
	Capabilities struct {
		Runs      bool `json:"runs"`
		Events    bool `json:"events"`
		Replay    bool `json:"replay"`
		Abandon   bool `json:"abandon"`
		Resume    bool `json:"resume"`
		Dashboard bool `json:"dashboard"`
		MCP       bool `json:"mcp"`
		// Tunnel is this project's: GET /tunnels opens the tunnel of
		// flow run --expose.
		Tunnel bool `json:"tunnel"`
	} `json:"capabilities"`
	Server struct {
		Version string `json:"version"`
		Commit  string `json:"commit,omitempty"`
	} `json:"server"`
}

func (s *Server) v1Capabilities(w http.ResponseWriter, r *http.Request) {
	var c Capabilities
	c.Capabilities.Runs = s.cfg.Plane != nil
	c.Capabilities.Events = s.cfg.Plane != nil
	c.Capabilities.Replay = s.cfg.Plane != nil
	c.Capabilities.Abandon = s.cfg.Plane != nil
	c.Capabilities.Resume = s.cfg.Plane != nil
	c.Capabilities.Dashboard = s.cfg.Dashboard != nil
	c.Capabilities.MCP = s.cfg.MCP != nil
	c.Capabilities.Tunnel = s.cfg.Tunnels != nil
	c.Server.Version, c.Server.Commit = s.cfg.Version, s.cfg.Commit
	writeJSON(w, http.StatusOK, c)
}

// noRuns is the answer of a server that keeps no runs.
func noRuns(w http.ResponseWriter) {
	writeV1Error(w, v1Err(runs.CodeNotFound, "this tool-server keeps no runs (serve --state-dir)"))
}

// service is the runs the /v1 verbs and reads go to; it answers 404 when
// the server keeps none.
func (s *Server) service(w http.ResponseWriter) runs.Service {
	if s.cfg.Plane == nil {
		noRuns(w)
		return nil
	}
	return s.cfg.Plane
}

// store is the run store the streams and files read; it answers 404
// when the server keeps none.
func (s *Server) store(w http.ResponseWriter) *runs.Store {
	if s.cfg.Runs == nil {
		noRuns(w)
	}
	return s.cfg.Runs
}

// runError answers an error of the runs: a run error with the code of
// its row of the table (runs.Errors) and the status of its kind, any
// other as an internal fault.
func (s *Server) runError(w http.ResponseWriter, r *http.Request, err error) {
	if row, ok := runs.ErrorOf(err); ok {
		writeV1Error(w, v1Error{Status: Status(row.Err.Kind), Code: row.Wire, Message: err.Error()})
		return
	}
	writeV1Error(w, v1Of(s.internalError(r, "runs", err)))
}

func (s *Server) v1StartRun(w http.ResponseWriter, r *http.Request) {
	svc := s.service(w)
	if svc == nil {
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
	started, err := svc.Start(r.Context(), req)
	if err != nil {
		s.runError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, started)
}

func (s *Server) v1ListRuns(w http.ResponseWriter, r *http.Request) {
	svc := s.service(w)
	if svc == nil {
		return
	}
	q := r.URL.Query()
	limit := 0
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			writeV1Error(w, v1Err(runs.CodeBadRequest, fmt.Sprintf("limit %.64q: want a number from 1 to %d", v, runs.MaxListLimit)))
			return
		}
		limit = n
	}
	f, err := runs.ParseFilter(q.Get("status"), q.Get("outcome"), q["label"], limit, q.Get("before"))
	if err != nil {
		writeV1Error(w, v1Err(runs.CodeBadRequest, err.Error()))
		return
	}
	page, err := svc.List(r.Context(), f)
	if err != nil {
		s.runError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, page)
}

// pathRunID is the run id of r's path, canonical (runs.CanonicalID); a
// malformed one is answered 400, as no run could have it
// (docs/control-plane.md, "Run ids").
func pathRunID(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := chi.URLParam(r, "id")
	if !runs.ValidID(id) {
		writeV1Error(w, v1Err(runs.CodeBadRequest, fmt.Sprintf("run id %.64q in the path is not a UUID", id)))
		return "", false
	}
	return runs.CanonicalID(id), true
}

// storeAndRun is the store and the run id in the path of a request about
// one run's stream or files; false when either answered an error.
func (s *Server) storeAndRun(w http.ResponseWriter, r *http.Request) (*runs.Store, string, bool) {
	st := s.store(w)
	if st == nil {
		return nil, "", false
	}
	id, ok := pathRunID(w, r)
	return st, id, ok
}

// serviceAndRun is the runs and the run id in the path of a request
// about one run; false when either answered an error.
func (s *Server) serviceAndRun(w http.ResponseWriter, r *http.Request) (runs.Service, string, bool) {
	svc := s.service(w)
	if svc == nil {
		return nil, "", false
	}
	id, ok := pathRunID(w, r)
	return svc, id, ok
}

func (s *Server) v1GetRun(w http.ResponseWriter, r *http.Request) {
	s.readRun(w, r, func(ctx context.Context, svc runs.Service, id string) (any, error) { return svc.Get(ctx, id) })
}

func (s *Server) v1Replay(w http.ResponseWriter, r *http.Request) {
	s.readRun(w, r, func(ctx context.Context, svc runs.Service, id string) (any, error) { return svc.Replay(ctx, id) })
}

// readRun answers a read of the run in the path: what read returns, or
// its error.
func (s *Server) readRun(w http.ResponseWriter, r *http.Request, read func(context.Context, runs.Service, string) (any, error)) {
	svc, id, ok := s.serviceAndRun(w, r)
	if !ok {
		return
	}
	v, err := read(r.Context(), svc, id)
	if err != nil {
		s.runError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// v1Abandon abandons a run, with defaultReason when the body gives none
// (POST .../cancel, the alias, names itself).
func (s *Server) v1Abandon(defaultReason string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { s.abandonRun(w, r, defaultReason) }
}

func (s *Server) abandonRun(w http.ResponseWriter, r *http.Request, defaultReason string) {
	svc, id, ok := s.serviceAndRun(w, r)
	if !ok {
		return
	}
	var req runs.AbandonRequest
	body, err := readBody(w, r, 64<<10)
	if err != nil {
		writeV1Error(w, v1Err(runs.CodeBadRequest, "reading the body: "+err.Error()))
		return
	}
	if len(bytes.TrimSpace(body)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			writeV1Error(w, v1Err(runs.CodeBadRequest, fmt.Sprintf("the body is not an abandonment ({\"reason\"?: \"…\"}): %.300s", err.Error())))
			return
		}
	}
	if req.Reason == "" {
		req.Reason = defaultReason
	}
	rc, err := svc.Abandon(r.Context(), id, req.Reason)
	if err != nil {
		s.runError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rc)
}

func (s *Server) v1ResumeRun(w http.ResponseWriter, r *http.Request) {
	svc, id, ok := s.serviceAndRun(w, r)
	if !ok {
		return
	}
	out, err := svc.Resume(r.Context(), id)
	switch {
	case err != nil:
		s.runError(w, r, err)
	case out.Outcome == runs.ResumeDriving:
		writeJSON(w, http.StatusAccepted, out)
	default:
		writeJSON(w, http.StatusOK, out)
	}
}

func (s *Server) v1RunFile(w http.ResponseWriter, r *http.Request) {
	st, id, ok := s.storeAndRun(w, r)
	if !ok {
		return
	}
	f, err := st.File(r.Context(), id, chi.URLParam(r, "name"))
	if err != nil {
		s.runError(w, r, err)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "private, max-age=86400")
	http.ServeContent(w, r, "", f.ModTime(), f)
}

// eventPoll bounds how long a stream waits for a change before it looks
// again (a change wakes it at once; this only bounds a missed wake-up).
const eventPoll = 2 * time.Second

// sseHeartbeat is how often an idle stream sends a comment, so proxies
// keep it open.
const sseHeartbeat = 15 * time.Second

// streamRetryAfter is the Retry-After, in seconds, of a stream refused
// at the cap.
const streamRetryAfter = 5

// openStream takes one of the server's MaxStreams event streams, or
// answers 503 when all are taken.
func (s *Server) openStream(w http.ResponseWriter) bool {
	if s.streams.Add(1) > int64(s.cfg.MaxStreams) {
		s.streams.Add(-1)
		w.Header().Set("Retry-After", strconv.Itoa(streamRetryAfter))
		writeV1Error(w, v1Err(runs.CodeUnavailable, fmt.Sprintf("this tool-server has %d event streams open, as many as it keeps; retry in %d s", s.cfg.MaxStreams, streamRetryAfter)))
		return false
	}
	return true
}

func (s *Server) closeStream() { s.streams.Add(-1) }

// eventCursor is the first sequence number a run's stream sends: the
// Last-Event-ID plus one (it wins), or ?from_seq=n, else 0. The largest
// Last-Event-ID names the last event any log could have, so its cursor
// is past the end, not a wrap to the start.
func eventCursor(r *http.Request) (int64, error) {
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("Last-Event-ID %q is not a sequence number", v)
		}
		if n == math.MaxInt64 {
			return n, nil
		}
		return n + 1, nil
	}
	if v := r.URL.Query().Get("from_seq"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("from_seq %q is not a sequence number", v)
		}
		return n, nil
	}
	return 0, nil
}

// v1RunEvents streams a run's events: every event from the cursor on,
// then the live tail, then an end frame with the final status. The events
// recorded before the stream began come from the store, the rest from
// the run's tail (runs.Tail), so a run never waits for its followers.
func (s *Server) v1RunEvents(w http.ResponseWriter, r *http.Request) {
	st, id, ok := s.storeAndRun(w, r)
	if !ok {
		return
	}
	from, err := eventCursor(r)
	if err != nil {
		writeV1Error(w, v1Err(runs.CodeBadRequest, err.Error()))
		return
	}
	if _, err := st.Run(r.Context(), id); err != nil {
		s.runError(w, r, err)
		return
	}
	if !s.openStream(w) {
		return
	}
	defer s.closeStream()
	sse := s.newSSE(w, r)
	defer sse.close()
	for more := true; more; {
		from, more = s.followRun(r.Context(), sse, st, id, from)
	}
}

// followRun sends the events of run id from seq from on and returns the
// cursor after them. More is false when the stream is over: the run
// ended (the end frame went out), the client left or was dropped, the
// server stops. Else look again: the follower fell off the run's tail, or
// the run is running but not (yet) recorded by this process.
func (s *Server) followRun(ctx context.Context, sse *sseWriter, st *runs.Store, id string, from int64) (next int64, more bool) {
	changed := st.Changed()
	tail := st.Follow(id)
	var run runs.Run
	if tail == nil {
		var err error
		if run, err = st.Run(ctx, id); err != nil {
			return from, false
		}
	} else {
		defer tail.Close()
	}
	evs, err := st.Events(ctx, id, from)
	if err != nil {
		return from, false
	}
	for _, e := range evs {
		if tail != nil && e.Seq >= tail.From {
			break
		}
		b, _ := json.Marshal(e)
		sse.put("", strconv.FormatInt(e.Seq, 10), b)
		from = e.Seq + 1
	}
	if !sse.flush() {
		return from, false
	}
	if tail == nil {
		// Not driven here: terminal, or running with no driver (the end
		// frame says detached once every event is out), or about to be.
		if runs.Terminal(run.Status.State) || (st.Stalled(run) && from >= run.EventCount) {
			sse.frame("end", "", run.End())
			return from, false
		}
		return from, sse.wait(ctx, changed, s.stopping)
	}
	beat := time.NewTicker(sseHeartbeat)
	defer beat.Stop()
	for {
		select {
		case e, ok := <-tail.C:
			if ok {
				from, ok = putQueued(sse, tail, e, from)
			}
			if !sse.flush() {
				return from, false
			}
			if !ok {
				if end, ended := tail.Ended(); ended {
					sse.frame("end", "", end)
					return from, false
				}
				return from, true
			}
			if !s.pause(ctx, streamPace) {
				return from, false
			}
		case <-beat.C:
			if !sse.heartbeat() {
				return from, false
			}
		case <-ctx.Done():
			return from, false
		case <-s.stopping:
			return from, false
		}
	}
}

// streamPace is the least time between two writes of a run's stream
// while its events come faster: the events of a burst (a run of quick
// steps) wait in the tail and go out together, one write for many, not
// one wake-up and one write per event per follower.
const streamPace = 25 * time.Millisecond

// pause waits d; false when the client left or the server stops.
func (s *Server) pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.stopping:
		return false
	}
}

// putQueued puts e and every event queued behind it on the tail, for one
// flush, and returns the cursor after them; false when the tail closed.
func putQueued(sse *sseWriter, tail *runs.Tail, e *runs.Recorded, from int64) (int64, bool) {
	for {
		if e.Seq >= from {
			sse.put("", strconv.FormatInt(e.Seq, 10), e.JSON())
			from = e.Seq + 1
		}
		var ok bool
		select {
		case e, ok = <-tail.C:
			if !ok {
				return from, false
			}
		default:
			return from, true
		}
	}
}

// v1Changes streams every change of the run list, for a dashboard: a
// frame with the changed runs (newest first) each time one starts,
// records an event or ends. Every follower reads the same views of the
// list (runs.View), listed once per change. It never ends on its own.
func (s *Server) v1Changes(w http.ResponseWriter, r *http.Request) {
	st := s.store(w)
	if st == nil {
		return
	}
	if !s.openStream(w) {
		return
	}
	defer s.closeStream()
	view, unwatch := st.Watch()
	defer unwatch()
	sse := s.newSSE(w, r)
	defer sse.close()
	seen := map[string]int64{}
	for {
		if view.Err != nil {
			return
		}
		if view.Listed() {
			var out []runs.Run
			now := make(map[string]int64, len(view.Runs))
			for _, run := range view.Runs {
				if n, ok := seen[run.ID]; !ok || n != run.EventCount {
					out = append(out, run)
				}
				now[run.ID] = run.EventCount
			}
			seen = now
			if len(out) > 0 && !sse.frame("", "", map[string]any{"runs": out}) {
				return
			}
		}
		if !s.waitView(r.Context(), sse, view) {
			return
		}
		view = view.Next()
	}
}

// waitView waits for the view after view; false when the stream is over.
func (s *Server) waitView(ctx context.Context, sse *sseWriter, view *runs.View) bool {
	for {
		if !sse.wait(ctx, view.Changed(), s.stopping) {
			return false
		}
		select {
		case <-view.Changed():
			return true
		default: // the poll: nothing newer yet
		}
	}
}
