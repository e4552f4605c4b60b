package cdp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"strings"
	"sync"
	"testing"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/device/cdp/cdptest"
)

// forwardProxy is an HTTP proxy that notes the hosts it was asked for.
type forwardProxy struct {
	mu    sync.Mutex
	hosts []string
}

func (p *forwardProxy) asked() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.hosts...)
}

// A launch through a proxy sends its page's requests there, loopback
// ones too (Chromium bypasses a proxy for them unless told), and only
// that launch's browser context: a plain launch after DropProxy never
// touches the proxy.
func TestLaunchViaAProxy(t *testing.T) {
	t.Parallel()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<!doctype html><body><h1 id="h">Through `+r.Host+`</h1><img src="/dot.png"></body>`)
	}))
	defer site.Close()
	fp := &forwardProxy{}
	rp := &httputil.ReverseProxy{Rewrite: func(*httputil.ProxyRequest) {}}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fp.mu.Lock()
		fp.hosts = append(fp.hosts, r.Host+r.URL.Path)
		fp.mu.Unlock()
		if !r.URL.IsAbs() {
			http.Error(w, "not proxy form", http.StatusBadRequest)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()

	d := cdptest.Device(t, "chromium-cdp-871x600")
	ctx := ctxT(t)
	page := strings.Replace(site.URL, "127.0.0.1", "localhost", 1) + "/"
	if err := d.LaunchVia(ctx, page, cdp.Proxy{URL: proxy.URL}); err != nil {
		t.Fatal(err)
	}
	text, err := d.Eval(ctx, `document.getElementById("h").textContent`)
	if err != nil {
		t.Fatal(err)
	}
	var got string
	json.Unmarshal(text, &got)
	if !strings.HasPrefix(got, "Through localhost:") {
		t.Fatalf("the page: %q", got)
	}
	// The launch waited for the load, the image's included.
	if asked := fp.asked(); len(asked) < 2 || !strings.HasPrefix(asked[0], "localhost:") {
		t.Fatalf("the proxy was asked for %v, want the page and its image", asked)
	}

	if err := d.DropProxy(ctx, proxy.URL); err != nil {
		t.Fatal(err)
	}
	if d.URL() != "" {
		t.Errorf("after DropProxy the device is still at %q", d.URL())
	}
	if href, err := d.Eval(ctx, `location.href`); err != nil || string(href) != `"about:blank"` {
		t.Errorf("after DropProxy the page is at %s (%v), want about:blank", href, err)
	}
	before := len(fp.asked())
	if err := d.Launch(ctx, page); err != nil {
		t.Fatal(err)
	}
	if n := len(fp.asked()); n != before {
		t.Errorf("a plain launch asked the proxy: %v", fp.asked()[before:])
	}
	// DropProxy of a page that does not use the proxy leaves it.
	if err := d.DropProxy(ctx, proxy.URL); err != nil || d.URL() != page {
		t.Errorf("DropProxy of another page: %v, now at %q", err, d.URL())
	}
}
