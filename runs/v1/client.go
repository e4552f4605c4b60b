// Package v1 is the HTTP client of a tool-server's /v1 control plane
// (Client, a runs.Service), apart from the run store: the runs commands
// and flow run --detach use it. Its wire (the envelope, the requests and
// answers) is runs' (api.go), which the server's end, package server,
// reads as well; the two ends never import each other.
package v1

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/toolserver/toolserver/runs"
)

// Client is a client of a tool-server's /v1 control plane: the runs of
// that tool-server, as a runs.Service.
type Client struct {
	base, token string
	hc          *http.Client
	// Reconnects bounds how often Follow reconnects a dropped stream in
	// a row (default 10); Backoff is the first wait (doubling, at most 5 s).
	Reconnects int
	Backoff    time.Duration
	// OnDrop, when set, hears of each reconnect of FollowEvents.
	OnDrop func(error)
}

var _ runs.Service = (*Client)(nil)

// NewClient returns a client of the tool-server at baseURL, sending
// token as a bearer token when it is not empty.
func NewClient(baseURL, token string) *Client {
	return &Client{base: strings.TrimRight(baseURL, "/"), token: token, hc: &http.Client{}, Reconnects: 10, Backoff: 200 * time.Millisecond}
}

// APIError is an error answer of /v1.
type APIError struct {
	Status  int
	Code    string
	Message string
	// RetryAfter is the answer's Retry-After, when it gave one in
	// seconds (a busy server: 503 unavailable).
	RetryAfter time.Duration
}

// maxRetryAfter bounds how long Follow waits on a server's Retry-After.
const maxRetryAfter = time.Minute

func (e *APIError) Error() string { return fmt.Sprintf("%s (%d %s)", e.Message, e.Status, e.Code) }

// Unwrap is the run error the answer stands for (runs.Rebuild): a
// caller branches alike, with errors.Is and on the kind, on a local
// store and a remote one. Nil for a code the run errors' table does not
// have.
func (e *APIError) Unwrap() error {
	if fe := runs.Rebuild(e.Code, e.Message); fe != nil {
		return fe
	}
	return nil
}

func (c *Client) request(ctx context.Context, method, path string, body any, hdr map[string]string) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		var env runs.ErrorBody
		ae := &APIError{Status: resp.StatusCode}
		if json.Unmarshal(b, &env) != nil || env.Error.Code == "" {
			ae.Message = fmt.Sprintf("%s %s: %s", method, path, strings.TrimSpace(string(b)))
		} else {
			ae.Code, ae.Message = env.Error.Code, env.Error.Message
		}
		if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && n > 0 {
			ae.RetryAfter = min(time.Duration(n)*time.Second, maxRetryAfter)
		}
		return nil, ae
	}
	return resp, nil
}

func (c *Client) getJSON(ctx context.Context, method, path string, body, out any) error {
	resp, err := c.request(ctx, method, path, body, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(out)
}

// Start starts a run of flow-execute with args (members included).
func (c *Client) Start(ctx context.Context, req runs.StartRequest) (runs.Started, error) {
	var out runs.Started
	err := c.getJSON(ctx, http.MethodPost, "/v1/runs", req, &out)
	return out, err
}

// List lists a page of runs, newest first, with the cursor of the
// next page when the server has one.
func (c *Client) List(ctx context.Context, f runs.Filter) (runs.Page, error) {
	q := url.Values{}
	if f.Status != "" {
		q.Set("status", f.Status)
	}
	if f.Outcome != "" {
		q.Set("outcome", f.Outcome)
	}
	for k, v := range f.Labels {
		q.Add("label", k+":"+v)
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	if f.Before != "" {
		q.Set("before", f.Before)
	}
	var out runs.Page
	err := c.getJSON(ctx, http.MethodGet, "/v1/runs?"+q.Encode(), nil, &out)
	return out, err
}

// Get returns a run with its steps and snapshots.
func (c *Client) Get(ctx context.Context, id string) (*runs.Detail, error) {
	var out runs.Detail
	if err := c.getJSON(ctx, http.MethodGet, "/v1/runs/"+url.PathEscape(id), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Abandon retires a run that is not terminal, with reason when it is
// not empty.
func (c *Client) Abandon(ctx context.Context, id, reason string) (runs.Receipt, error) {
	var out runs.Receipt
	err := c.getJSON(ctx, http.MethodPost, "/v1/runs/"+url.PathEscape(id)+"/abandon", runs.AbandonRequest{Reason: reason}, &out)
	return out, err
}

// Resume re-drives a run no driver runs (outcome driving), or reports a
// finished one (outcome its state).
func (c *Client) Resume(ctx context.Context, id string) (runs.Resumed, error) {
	var out runs.Resumed
	err := c.getJSON(ctx, http.MethodPost, "/v1/runs/"+url.PathEscape(id)+"/resume", nil, &out)
	return out, err
}

// Run is a run as a list shows it: over /v1 the run of its detail (GET
// /v1/runs/{id}), which is the one answer that names a run alone.
func (c *Client) Run(ctx context.Context, id string) (runs.Run, error) {
	d, err := c.Get(ctx, id)
	if err != nil {
		return runs.Run{}, err
	}
	return d.Run, nil
}

// Events are a run's events from seq from on, as recorded when it is
// asked: its stream, read up to the run's event count of then.
func (c *Client) Events(ctx context.Context, id string, from int64) ([]runs.Event, error) {
	d, err := c.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	var evs []runs.Event
	if from >= d.EventCount {
		return evs, nil
	}
	// The stream is cut once it has brought the last of them.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	enough := errors.New("read up to the event count")
	_, err = c.Follow(ctx, d.ID, from, func(e runs.Event) error {
		evs = append(evs, e)
		if e.Seq+1 >= d.EventCount {
			return enough
		}
		return nil
	}, nil)
	if err != nil && !errors.Is(err, enough) {
		return nil, err
	}
	return evs, nil
}

// FollowEvents is Follow, with OnDrop hearing of each reconnect.
func (c *Client) FollowEvents(ctx context.Context, id string, from int64, each func(runs.Event) error) (runs.EndFrame, error) {
	return c.Follow(ctx, id, from, each, c.OnDrop)
}

// Replay is the pure fold of a run's log.
func (c *Client) Replay(ctx context.Context, id string) (runs.Replay, error) {
	var out runs.Replay
	err := c.getJSON(ctx, http.MethodGet, "/v1/runs/"+url.PathEscape(id)+"/replay", nil, &out)
	return out, err
}

// Follow streams a run's events from seq from on to each, then returns
// the stream's end frame: the run's final status, or detached when no
// driver runs it. A dropped connection is reconnected with its
// cursor (Last-Event-ID), so each event arrives once and in order, and a
// server at its cap of streams (503 with Retry-After) is asked again when
// it says; onDrop, when set, hears of each reconnect.
func (c *Client) Follow(ctx context.Context, id string, from int64, each func(runs.Event) error, onDrop func(error)) (runs.EndFrame, error) {
	next := from
	fails := 0
	wait := c.Backoff
	for {
		hdr := map[string]string{"Accept": "text/event-stream"}
		path := "/v1/runs/" + url.PathEscape(id) + "/events"
		if next > 0 {
			hdr["Last-Event-ID"] = strconv.FormatInt(next-1, 10)
		}
		status, got, err := c.followOnce(ctx, path, hdr, &next, each)
		switch {
		case err == nil:
			return status, nil
		case ctx.Err() != nil:
			return runs.EndFrame{}, ctx.Err()
		}
		var api *APIError
		busy := errors.As(err, &api) && api.Status == http.StatusServiceUnavailable && api.RetryAfter > 0
		if api != nil && !busy {
			return runs.EndFrame{}, err
		}
		var cb *callbackError
		if errors.As(err, &cb) {
			return runs.EndFrame{}, cb.err
		}
		if got {
			fails, wait = 0, c.Backoff
		}
		fails++
		if fails > c.Reconnects {
			return runs.EndFrame{}, fmt.Errorf("the event stream of run %s: %w (gave up after %d reconnects)", id, err, c.Reconnects)
		}
		if onDrop != nil {
			onDrop(err)
		}
		pause := wait
		if busy {
			// A server at its cap of streams says when to come back.
			pause = api.RetryAfter
		}
		select {
		case <-ctx.Done():
			return runs.EndFrame{}, ctx.Err()
		case <-time.After(pause):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// callbackError is an error of Follow's callback: it ends the follow.
type callbackError struct{ err error }

func (e *callbackError) Error() string { return e.err.Error() }

// followOnce reads one connection of a run's stream; got tells whether
// it brought any event.
func (c *Client) followOnce(ctx context.Context, path string, hdr map[string]string, next *int64, each func(runs.Event) error) (end runs.EndFrame, got bool, err error) {
	resp, err := c.request(ctx, http.MethodGet, path, nil, hdr)
	if err != nil {
		return runs.EndFrame{}, false, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	var event, data string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		case line == "" && data != "":
			if event == "end" {
				if err := json.Unmarshal([]byte(data), &end); err != nil || end.Status.State == "" {
					return runs.EndFrame{}, got, fmt.Errorf("the stream's end frame is not a status: %.200s", data)
				}
				return end, got, nil
			}
			var e runs.Event
			if err := json.Unmarshal([]byte(data), &e); err != nil {
				return runs.EndFrame{}, got, fmt.Errorf("a frame of the stream is not an event: %w", err)
			}
			if e.Seq == *next {
				if err := each(e); err != nil {
					return runs.EndFrame{}, got, &callbackError{err}
				}
				*next = e.Seq + 1
				got = true
			}
			event, data = "", ""
		}
	}
	if err := sc.Err(); err != nil {
		return runs.EndFrame{}, got, err
	}
	return runs.EndFrame{}, got, io.ErrUnexpectedEOF
}
