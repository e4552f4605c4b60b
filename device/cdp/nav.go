package cdp

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/chromedp/cdproto"
	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Launch replaces the current page with a fresh browser context and page
// (no cookies, no storage) and navigates it to url, waiting for the load.
// A URL a device does not open (see Navigate) is refused before the page
// changes.
func (d *Device) Launch(ctx context.Context, url string) error {
	u, err := d.urls.check(url)
	if err != nil {
		return err
	}
	return d.do(ctx, "launch", true, func(tab context.Context) error {
		return d.navigate(tab, u)
	})
}

// Proxy sends the requests of a launch's browser context through an HTTP
// proxy: a run's tunnel (link/server).
type Proxy struct {
	// URL is the proxy, such as http://127.0.0.1:40123.
	URL string
	// Takes reports whether the proxy carries a host itself (to another
	// machine): the pool's allowed hosts do not bind those, and the
	// proxy checks the others with Pool.CheckHost.
	Takes func(host string) bool
}

// LaunchVia is Launch in a browser context whose every request, loopback
// ones too, goes through p. The page stays the device's until the next
// launch or DropProxy.
func (d *Device) LaunchVia(ctx context.Context, url string, p Proxy) error {
	u, err := d.urls.checkVia(url, p.Takes)
	if err != nil {
		return err
	}
	return d.send(ctx, "launch", request{fresh: true, proxy: p.URL}, func(tab context.Context) error {
		return d.navigate(tab, u)
	})
}

// DropProxy replaces the device's page with a plain one when its browser
// context uses proxyURL: once a run's tunnel is over, no later call on
// the device reaches it, even through a proxy that took its port.
func (d *Device) DropProxy(ctx context.Context, proxyURL string) error {
	if proxyURL == "" {
		return nil
	}
	return d.send(ctx, "drop the run's proxy", request{drop: proxyURL}, func(context.Context) error { return nil })
}

// Navigate loads url in the current page and waits for the load event. It
// refuses, before the page changes, a URL whose scheme is not http, https,
// data, about:blank or (unless the pool denies them) file (ErrBadURL,
// ErrFileURL), and one whose host the pool does not allow
// (ErrHostNotAllowed); a page that does not load answers ErrPageLoad.
func (d *Device) Navigate(ctx context.Context, url string) error {
	u, err := d.urls.check(url)
	if err != nil {
		return err
	}
	return d.call(ctx, "open-url", func(tab context.Context) error {
		return d.navigate(tab, u)
	})
}

// navigate loads url, a URL the policy passed, and waits for the load.
func (d *Device) navigate(tab context.Context, url string) error {
	var trail *docTrail
	if d.urls.hosts != nil {
		tr, stop, err := followDocument(tab)
		if err != nil {
			return fmt.Errorf("navigate to %s: %w", url, err)
		}
		defer stop()
		trail = tr
	}
	err := chromedp.Do(tab, chromedp.Navigate(url))
	if err == nil {
		d.setURL(url)
		return nil
	}
	var load *chromedp.LoadError
	var refused *cdproto.Error
	switch {
	case errors.As(err, &load):
		return d.loadError(url, load.ErrorText, trail)
	case errors.As(err, &refused):
		// Page.navigate answers an error of its own only for a URL the
		// browser cannot parse.
		return fmt.Errorf("open %q: %w: the browser cannot parse it (%s)", url, ErrBadURL, refused.Message)
	}
	return fmt.Errorf("navigate to %s: %w", url, err)
}

// noNetwork are the load errors that say this machine's network failed,
// not the page's URL (Chromium's net/base/net_error_list.h).
var noNetwork = map[string]bool{
	"net::ERR_INTERNET_DISCONNECTED":  true,
	"net::ERR_NETWORK_CHANGED":        true,
	"net::ERR_NETWORK_IO_SUSPENDED":   true,
	"net::ERR_INSUFFICIENT_RESOURCES": true,
	"net::ERR_OUT_OF_MEMORY":          true,
}

// loadError is the error of a page that did not load, with the browser's
// net::ERR_ text. With allowed hosts, a redirect to a host off the list
// fails as a host that does not resolve: the trail of the page's document
// names where it went, and the error says so.
func (d *Device) loadError(url, text string, trail *docTrail) error {
	if at := trail.last(); at != "" {
		if scheme, rest, ok := splitScheme(at); ok && (scheme == "http" || scheme == "https") {
			if host, err := urlHost(rest); err == nil {
				if err := d.urls.hosts.check(host); err != nil {
					return fmt.Errorf("open %s: it went on to %s: %w", url, at, err)
				}
			}
		}
	}
	if noNetwork[text] {
		return fmt.Errorf("open %s: %w (%s)", url, ErrNoNetwork, text)
	}
	return fmt.Errorf("open %s: %w: %s", url, ErrPageLoad, text)
}

// docTrail is where a navigation's document went: the URL it asked for,
// then the URL of each redirect.
type docTrail struct {
	mu  sync.Mutex
	url string
}

// last returns the last URL the document was asked at; "" for a nil trail.
func (t *docTrail) last() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.url
}

// followDocument records the URLs the page's main frame requests its
// document at until stop is called. A redirect's request is reported
// before the failure that ends the navigation, on the same reading loop,
// so the trail is complete when Navigate returns.
func followDocument(tab context.Context) (*docTrail, context.CancelFunc, error) {
	tree, err := chromedp.Run(tab, func(ctx context.Context, t *chromedp.Target) (page.GetFrameTreeResult, error) {
		return proto.Call(ctx, t, page.GetFrameTree, proto.Empty{})
	})
	if err != nil {
		return nil, nil, err
	}
	if tree.FrameTree == nil || tree.FrameTree.Frame == nil {
		return nil, nil, errors.New("the page has no main frame")
	}
	main := tree.FrameTree.Frame.ID
	trail := &docTrail{}
	lctx, stop := context.WithCancel(tab)
	err = chromedp.Listen(lctx, func(ev any) {
		if ev, ok := ev.(*network.EventRequestWillBeSent); ok && ev.FrameID == main && ev.Type == network.ResourceTypeDocument && ev.Request != nil {
			trail.mu.Lock()
			trail.url = ev.Request.URL
			trail.mu.Unlock()
		}
	})
	if err != nil {
		stop()
		return nil, nil, err
	}
	return trail, stop, nil
}
