package runs_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/runs"
)

// ended starts a run with b, ends it with err and returns it as the store
// lists it, with its events' payloads by kind.
func ended(t *testing.T, st *runs.Store, b runs.Begin, err error) (runs.Run, map[string]string) {
	t.Helper()
	rec, serr := st.Start(context.Background(), b)
	if serr != nil {
		t.Fatal(serr)
	}
	if eerr := rec.End(nil, err, nil); eerr != nil {
		t.Fatal(eerr)
	}
	d, gerr := st.Get(context.Background(), rec.ID())
	if gerr != nil {
		t.Fatal(gerr)
	}
	evs, gerr := st.Events(context.Background(), rec.ID(), 0)
	if gerr != nil {
		t.Fatal(gerr)
	}
	payloads := map[string]string{}
	for _, e := range evs {
		payloads[e.Event.Kind] = string(e.Event.Payload)
	}
	return d.Run, payloads
}

// TestRecordBounds: a run's flow, device and reason are bounded whatever
// brings them (here the store's own caller, past every argument cap): a
// megabyte of each is kept as its first bytes and "…", in the list and in
// the events alike, and a cut never splits a character.
func TestRecordBounds(t *testing.T) {
	forEachStore(t, 0, func(t *testing.T, st *runs.Store) {
		long := strings.Repeat("é", 1<<19) // 1 MiB, two bytes a character
		r, ev := ended(t, st, runs.Begin{Flow: long, Device: long, Source: "v1"},
			&fault.Error{Kind: fault.Validation, Field: "device", Message: `bad device id "` + long + `"`})
		for what, s := range map[string]string{"flow": r.Flow, "device": r.Device, "reason": r.Status.Error} {
			limit := runs.MaxNameBytes
			if what == "reason" {
				limit = runs.MaxReasonBytes
			}
			if len(s) > limit || !strings.HasSuffix(s, "…") || !utf8.ValidString(s) {
				t.Errorf("%s: %d bytes ending %q, want at most %d ending in …", what, len(s), s[max(0, len(s)-8):], limit)
			}
		}
		if !strings.HasPrefix(r.Status.Error, `bad device id "éé`) {
			t.Errorf("reason %.40q…: want the error's first bytes", r.Status.Error)
		}
		for kind, p := range ev {
			if len(p) > 2*runs.MaxReasonBytes {
				t.Errorf("the %s event holds %d bytes", kind, len(p))
			}
		}
	})
}

// TestInternalReason: a run an internal fault ended records the stable
// text, never the fault's own (a server path here); a client's mistake
// keeps its message.
func TestInternalReason(t *testing.T) {
	forEachStore(t, 0, func(t *testing.T, st *runs.Store) {
		secret := "open /srv/toolserver/state/tmp/x: permission denied"
		for _, tc := range []struct {
			name string
			err  error
			want string
		}{
			{"an internal fault", &fault.Error{Kind: fault.Internal, Message: secret}, runs.InternalReason},
			{"an error of no kind", errors.New(secret), runs.InternalReason},
			{"a marked one", fault.Infrastructure(errors.New(secret)), runs.InternalReason},
			{"a client's mistake", &fault.Error{Kind: fault.Validation, Message: "name: required"}, "name: required"},
		} {
			r, ev := ended(t, st, runs.Begin{Flow: "home", Source: "tools"}, tc.err)
			if r.Status.State != runs.Failed || r.Status.Error != tc.want || strings.Contains(ev[runs.KindRunFailed], "/srv/") {
				t.Errorf("%s: %+v, RunFailed %s; want failed with %q", tc.name, r.Status, ev[runs.KindRunFailed], tc.want)
			}
		}
	})
}

// TestRunStartedOmitsWhatIsUnknown: RunStarted carries no device before
// the run has one, and no labels when it has none, rather than "" and
// null; the device recorded later is the run's.
func TestRunStartedOmitsWhatIsUnknown(t *testing.T) {
	forEachStore(t, 0, func(t *testing.T, st *runs.Store) {
		rec, err := st.Start(context.Background(), runs.Begin{Flow: "home", Source: "v1"})
		if err != nil {
			t.Fatal(err)
		}
		if err := rec.SetDevice("chromium-cdp-640x480"); err != nil {
			t.Fatal(err)
		}
		rec.End(nil, nil, nil)
		evs, err := st.Events(context.Background(), rec.ID(), 0)
		if err != nil {
			t.Fatal(err)
		}
		var started map[string]any
		if err := json.Unmarshal(evs[0].Event.Payload, &started); err != nil || evs[0].Event.Kind != runs.KindRunStarted {
			t.Fatalf("the first event: %s %s", evs[0].Event.Kind, evs[0].Event.Payload)
		}
		_, device := started["device"]
		_, labels := started["labels"]
		if device || labels || started["flow"] != "home" || started["source"] != "v1" || started["linked"] != false {
			t.Errorf("RunStarted: %s; want flow, linked and source only", evs[0].Event.Payload)
		}
		d, err := st.Get(context.Background(), rec.ID())
		if err != nil || d.Device != "chromium-cdp-640x480" {
			t.Errorf("the run's device: %q (%v), want the one recorded", d.Device, err)
		}
	})
}
