package cdp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/device/cdp/cdptest"
)

// navSite serves a page with a link to a page whose response the server
// holds until released: a wait or a locate that starts on the first page
// is still running when the second document replaces it.
func navSite(t *testing.T) (url string, release chan struct{}) {
	t.Helper()
	release = make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<!doctype html><body style="margin:0"><a id="go" href="/next" style="position:absolute;left:10px;top:10px;width:100px;height:30px;display:block">Next page</a></body>`))
	})
	mux.HandleFunc("/next", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<!doctype html><body><button id="arrived" style="margin:40px">Arrived</button></body>`))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/", release
}

// A wait, a locate and an idle wait that a navigation interrupts go on in
// the new document with the time left: a tap that follows a link,
// then an await of the next page, is the commonest flow there is.
func TestWaitsSurviveNavigation(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		id   string
		wait func(d *cdp.Device) (bool, error)
	}{
		{"chromium-cdp-866x600", func(d *cdp.Device) (bool, error) {
			res, err := d.Wait(ctxT(t), cdp.Condition{Selector: cdp.Selector{Text: "Arrived"}, State: "visible"}, 10*time.Second)
			return res.OK, err
		}},
		{"chromium-cdp-867x600", func(d *cdp.Device) (bool, error) {
			el, err := d.Locate(ctxT(t), cdp.Selector{ID: "arrived"}, 10*time.Second)
			return el != nil, err
		}},
	} {
		t.Run(c.id, func(t *testing.T) {
			t.Parallel()
			url, release := navSite(t)
			d := cdptest.Device(t, c.id)
			if err := d.Launch(ctxT(t), url); err != nil {
				t.Fatal(err)
			}
			if err := d.TapNormalized(ctxT(t), 50.0/866, 25.0/600, 0); err != nil {
				t.Fatal(err)
			}
			type result struct {
				ok  bool
				err error
			}
			done := make(chan result, 1)
			go func() { ok, err := c.wait(d); done <- result{ok, err} }()
			// The second document arrives a moment later, most likely
			// while the wait runs on the first page. This orders nothing
			// the test checks: a wait that began after the document
			// arrived passes too, so the delay can weaken the test on a
			// slow machine but never fail it.
			time.AfterFunc(300*time.Millisecond, func() { close(release) })
			r := <-done
			if r.err != nil || !r.ok {
				t.Fatalf("across the navigation: ok %v, %v", r.ok, r.err)
			}
		})
	}
}

// A page that replaces itself twelve times in a row, a few milliseconds
// apart, before it shows what the wait looks for: calls land on documents
// that are going, coming and gone, and each wait still ends on the last.
func TestWaitsSurviveNavigationChain(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/hop", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Type", "text/html")
		if n >= 12 {
			w.Write([]byte(`<!doctype html><body><button id="arrived">Arrived</button></body>`))
			return
		}
		fmt.Fprintf(w, `<!doctype html><body>hop %d<script>setTimeout(() => location.replace("/hop?n=%d"), 3)</script></body>`, n, n+1)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	d := cdptest.Device(t, "chromium-cdp-868x600")
	for i := range 3 {
		if err := d.Launch(ctxT(t), srv.URL+"/hop?n=0"); err != nil {
			t.Fatal(err)
		}
		for range i {
			// Calls at other moments of the chain.
			if _, err := d.Describe(ctxT(t)); err != nil {
				t.Fatalf("describe during the hops: %v", err)
			}
		}
		// Generous: a loaded machine takes a while over twelve loads.
		res, err := d.Wait(ctxT(t), cdp.Condition{Selector: cdp.Selector{Text: "Arrived"}, State: "visible"}, 40*time.Second)
		if err != nil || !res.OK {
			t.Fatalf("round %d: ok %v, %v", i, res.OK, err)
		}
	}
}

// An element below the fold is scrolled into view at once, not after the
// locate's whole timeout: the locate here may wait a minute, the call
// gets ten seconds.
func TestLocateBelowTheFold(t *testing.T) {
	t.Parallel()
	d := cdptest.Device(t, "chromium-cdp-869x600")
	if err := d.Launch(ctxT(t), cdptest.Pages(t)+"/app.html"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctxT(t), 10*time.Second)
	defer cancel()
	el, err := d.Locate(ctx, cdp.Selector{Text: "far below"}, time.Minute)
	if err != nil || el == nil || !el.Visible {
		t.Fatalf("far below: %+v, %v", el, err)
	}
	if el.Frame.Y < 0 || el.Frame.Y+el.Frame.Height > 1 {
		t.Fatalf("not scrolled into view: %+v", el.Frame)
	}
}
