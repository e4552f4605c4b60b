package server_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toolserver/toolserver/runs"
	"github.com/toolserver/toolserver/runs/runstest"
	v1 "github.com/toolserver/toolserver/runs/v1"
	"github.com/toolserver/toolserver/server"
)

// TestRunErrorsTableOverHTTP walks every row of the run errors' table
// over /v1: the server answers the row's error with the status of its
// kind and the row's code, and the /v1 client gets back an error that is
// the row's sentinel (errors.Is), with that status and code.
func TestRunErrorsTableOverHTTP(t *testing.T) {
	t.Parallel()
	const id = "11111111-2222-4333-8444-555555555555"
	for _, row := range runs.Errors {
		t.Run(row.Err.Code, func(t *testing.T) {
			t.Parallel()
			err := fmt.Errorf("%w: run %s, as the test has it", row.Err, id)
			hs := httptest.NewServer(server.New(server.Config{Addr: "127.0.0.1:0", Plane: runstest.Failing{Err: err}}).Handler())
			defer hs.Close()
			status := server.Status(row.Err.Kind)

			resp, herr := http.Get(hs.URL + "/v1/runs/" + id)
			if herr != nil {
				t.Fatal(herr)
			}
			var env runs.ErrorBody
			json.NewDecoder(resp.Body).Decode(&env)
			resp.Body.Close()
			if resp.StatusCode != status || env.Error.Code != row.Wire || env.Error.Message != err.Error() {
				t.Errorf("GET answered %d %+v, want %d %s %q", resp.StatusCode, env.Error, status, row.Wire, err.Error())
			}

			c := v1.NewClient(hs.URL, "")
			for verb, call := range map[string]func() error{
				"get":    func() error { _, err := c.Get(t.Context(), id); return err },
				"list":   func() error { _, err := c.List(t.Context(), runs.Filter{}); return err },
				"replay": func() error { _, err := c.Replay(t.Context(), id); return err },
				"start": func() error {
					_, err := c.Start(t.Context(), runs.StartRequest{ToolArgs: json.RawMessage(`{}`)})
					return err
				},
				"abandon": func() error { _, err := c.Abandon(t.Context(), id, ""); return err },
				"resume":  func() error { _, err := c.Resume(t.Context(), id); return err },
			} {
				got := call()
				api, ok := errors.AsType[*v1.APIError](got)
				if !ok || api.Status != status || api.Code != row.Wire || api.Message != err.Error() {
					t.Errorf("%s: got %v, want %d %s", verb, got, status, row.Wire)
				}
				if !errors.Is(got, row.Err) {
					t.Errorf("%s: %v is not %s", verb, got, row.Err.Code)
				}
				if back, ok := runs.ErrorOf(got); !ok || back.Err != row.Err {
					t.Errorf("%s: the row of %v is %+v, want %s", verb, got, back, row.Err.Code)
				}
			}
		})
	}
}
