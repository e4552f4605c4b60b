package cdptest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"
)

// Clock is the time testdata/pages/clock.html shows: the page reads it
// from the clock's server every 20 ms, so a test moves the time a minute
// without waiting one.
type Clock struct {
	mu  sync.Mutex
	now time.Time
	// Page is the path of the clock page for this clock, relative to
	// Pages: "clock.html?now=<the clock's URL>".
	Page string
}

// NewClock serves a clock at start until the test ends.
func NewClock(t testing.TB, start time.Time) *Clock {
	c := &Clock{now: start}
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	c.Page = "clock.html?now=" + url.QueryEscape(srv.URL)
	return c
}

// ServeHTTP answers the time as the page shows it, to any origin.
func (c *Clock) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w.Header().Set("Access-Control-Allow-Origin", "*")
	fmt.Fprint(w, c.now.Format("15:04:05"))
}

// Advance moves the clock by d and returns the time the page will show.
func (c *Clock) Advance(d time.Duration) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now.Format("15:04:05")
}
