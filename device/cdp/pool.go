package cdp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultMaxDevices bounds the devices booted at once unless Options says
// otherwise.
const DefaultMaxDevices = 4

// Errors callers branch on.
var (
	// ErrNoChromium means no Chromium binary was found: Pool.Device answers
	// it, wrapped in a message naming CHROMIUM_PATH.
	ErrNoChromium = errors.New("chromium not found")
	// ErrTooManyDevices means the pool already holds MaxDevices devices.
	ErrTooManyDevices = errors.New("too many devices")
	// ErrCrashed means the device's browser exited or lost its connection
	// while the call ran; the next call boots a fresh one. A crash of the
	// page alone (ErrPageCrashed) matches it too.
	ErrCrashed = errors.New("chromium exited")
	// ErrClosed means the pool was closed.
	ErrClosed = errors.New("device pool closed")
	// ErrFileURL means a file: URL was refused (Options.DenyFileURLs).
	ErrFileURL = errors.New("file: URLs are off on this tool-server")
	// ErrBadURL means a URL was refused before the page changed: it is not
	// an absolute URL, or its scheme is not one a device opens (http,
	// https, data, about:blank, and file unless Options.DenyFileURLs).
	ErrBadURL = errors.New("URL refused")
	// ErrHostNotAllowed means a URL names a host, or the page redirected
	// to one, that Options.AllowHosts does not list.
	ErrHostNotAllowed = errors.New("host not allowed")
	// ErrPageLoad means the browser could not load the page of a URL: the
	// host does not resolve or refuses the connection, the certificate is
	// bad, too many redirects, and the like. The error names the browser's
	// net::ERR_ code.
	ErrPageLoad = errors.New("the page did not load")
	// ErrNoNetwork means a page did not load because this machine's
	// network failed (net::ERR_INTERNET_DISCONNECTED and the like), not
	// because of its URL.
	ErrNoNetwork = errors.New("this machine's network failed")
	// ErrPageCrashed means the device's page crashed (its renderer died)
	// or its target closed while the call ran; the next call gets a fresh
	// page in the same browser. It matches ErrCrashed
	// under errors.Is, since for a caller both mean the device failed
	// under the call.
	ErrPageCrashed error = pageCrashed{}
	// ErrNotBooted means a device that was never booted was asked for.
	ErrNotBooted = errors.New("device not booted")
)

// pageCrashed is ErrPageCrashed.
type pageCrashed struct{}

func (pageCrashed) Error() string { return "the page crashed" }

// Is makes a page crash match ErrCrashed.
func (pageCrashed) Is(target error) bool { return target == ErrCrashed }

// errStopped ends the life of a device that Pool.Stop stopped; a call
// still queued on it answers ErrNotBooted.
var errStopped = fmt.Errorf("%w (stopped)", ErrNotBooted)

// Options configure a Pool.
type Options struct {
	// ExecPath is the Chromium binary. Empty: $CHROMIUM_PATH, then
	// Browsers on PATH.
	ExecPath string
	// MaxDevices bounds the devices booted at once (DefaultMaxDevices if 0).
	MaxDevices int
	// Log receives one-off notices, such as the sandbox fallback. May be nil.
	Log io.Writer
	// DenyFileURLs refuses to open file: URLs, so a remote caller cannot
	// look at the tool-server's own files through a screenshot.
	DenyFileURLs bool
	// AllowHosts, when set, is every host a page may come from: Launch
	// and Navigate refuse a URL whose host it does not list
	// (ErrHostNotAllowed), and the browser itself fails every other
	// connection of its pages (redirects, frames, fetches, workers) as a
	// host that does not resolve. The browser then connects directly,
	// never through a proxy, so that it resolves every host itself. Nil
	// allows every host.
	AllowHosts *HostList
	// SharedBrowser runs every device of the pool in one browser process,
	// each device in its own browser context (its own cookies, storage and
	// cache), instead of one process per device. It saves a process start
	// (about a second of CPU) per device, which is what a test binary
	// wants; the price is that a crash of that process takes every device
	// down at once (each call in flight answers ErrCrashed, and the next
	// call boots a fresh process). A tool-server keeps the default: one
	// device's crash never touches another.
	SharedBrowser bool
	// Evict makes the pool a server's (queue.go): when it is full, the
	// least recently used idle device (one no call uses, see Acquire)
	// stops to make room for the one a call asks for, and a call that
	// finds every device in use waits its turn in a FIFO queue of at most
	// Queue calls, refused with ErrQueueFull past it. Without Evict a
	// full pool refuses at once with ErrTooManyDevices, busy or not: a
	// command that runs on devices of its own wants them kept. A device
	// got through Device or Instance counts as idle.
	Evict bool
	// Queue bounds the calls waiting for a device when Evict is set; 0
	// refuses at once with ErrQueueFull when every device is in use.
	Queue int
	// NoSparePage turns off the page a device prepares in the background
	// for its next launch (a browser context and a renderer process of
	// its own): every launch after the first then makes its page while
	// the caller waits (about 45 ms more on a small page), but a device that launches once
	// never pays for a page it does not use. For pools whose devices live
	// for a launch or two, such as a test binary's.
	NoSparePage bool
}

// Pool holds the booted devices, at most one per id. It owns the goroutine
// of every browser it starts, and Close waits for them.
type Pool struct {
	execPath string
	missing  error // why no Chromium was found; nil when execPath is set
	max      int
	log      io.Writer
	shared   bool
	urls     urlPolicy
	evict    bool // Options.Evict
	queueMax int  // Options.Queue
	noSpare  bool // Options.NoSparePage

	wg sync.WaitGroup // the goroutines of the browsers (browser.run)

	mu        sync.Mutex
	noSandbox bool
	devices   map[string]*Device
	browser   *browser // the process of a SharedBrowser pool; nil until needed
	closed    bool
	notices   map[string]bool
	// queue holds the calls waiting for a device to free up, oldest
	// first; busyAvg is the running mean of how long a device stays in
	// use, from which a refused call learns when to come back (queue.go).
	queue   []*waiter
	busyAvg time.Duration
}

// Browsers are the names a Chromium binary is looked for on PATH when
// neither Options.ExecPath nor $CHROMIUM_PATH names one, first found
// first. chromium-headless-shell comes first: the same Chromium built
// without the browser's windows, so a fresh browser context (every
// launch) costs about a quarter of the CPU it costs the full browser
// in its headless mode, and renders the same pixels.
var Browsers = []string{"chromium-headless-shell", "chromium", "chromium-browser", "google-chrome"}

// InstallHint says how to get a Chromium on Debian.
const InstallHint = "apt-get install chromium-headless-shell fonts-liberation"

// findChromium returns the Chromium binary to use: explicit, then
// $CHROMIUM_PATH, then the first of Browsers on PATH.
func findChromium(explicit string) (string, error) {
	if explicit != "" {
		return lookExec(explicit)
	}
	if p := os.Getenv("CHROMIUM_PATH"); p != "" {
		return lookExec(p)
	}
	for _, name := range Browsers {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: set CHROMIUM_PATH or install Debian's Chromium (%s)", ErrNoChromium, InstallHint)
}

func lookExec(p string) (string, error) {
	found, err := exec.LookPath(p)
	if err != nil {
		return "", fmt.Errorf("%w at %q: %v; point CHROMIUM_PATH at a Chromium binary or install Debian's Chromium (%s)", ErrNoChromium, p, err, InstallHint)
	}
	return found, nil
}

// NewPool returns an empty pool. No browser starts until a device is first
// used. When no Chromium is found the pool still works as a pool (List is
// empty) and every Device call answers the reason, which wraps
// ErrNoChromium; Err tells it up front.
func NewPool(opts Options) *Pool {
	path, missing := findChromium(opts.ExecPath)
	max := opts.MaxDevices
	if max <= 0 {
		max = DefaultMaxDevices
	}
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	return &Pool{
		execPath: path,
		missing:  missing,
		max:      max,
		log:      log,
		shared:   opts.SharedBrowser,
		evict:    opts.Evict,
		queueMax: opts.Queue,
		noSpare:  opts.NoSparePage,
		urls:     urlPolicy{denyFiles: opts.DenyFileURLs, hosts: opts.AllowHosts},
		// Root cannot use Chromium's sandbox at all.
		noSandbox: os.Getuid() == 0 || os.Getenv("TOOLSERVER_NO_SANDBOX") == "1",
		devices:   make(map[string]*Device),
		notices:   make(map[string]bool),
	}
}

// Err returns why the pool cannot boot devices (an error wrapping
// ErrNoChromium), or nil when it found Chromium.
func (p *Pool) Err() error { return p.missing }

func (p *Pool) sandboxOff() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.noSandbox
}

func (p *Pool) disableSandbox() {
	p.mu.Lock()
	p.noSandbox = true
	p.mu.Unlock()
}

// notice prints msg once per pool.
func (p *Pool) notice(msg string) {
	p.mu.Lock()
	seen := p.notices[msg]
	p.notices[msg] = true
	p.mu.Unlock()
	if !seen {
		fmt.Fprintln(p.log, msg)
	}
}

// browserLocked returns the browser a new device of size w×h runs in: the
// shared one (started afresh when it died or never ran), or a process of
// its own. p.mu is held.
func (p *Pool) browserLocked(w, h int) *browser {
	if !p.shared {
		return p.startBrowser(w, h)
	}
	if p.browser == nil || p.browser.Dead() {
		// The window size only sets the first page; every device's page
		// gets its own viewport (newPage).
		p.browser = p.startBrowser(w, h)
	}
	return p.browser
}

// Device returns the device id, booting it on first use, or booting a fresh
// one when its browser died.
func (p *Pool) Device(ctx context.Context, id string) (*Device, error) {
	return p.device(ctx, id)
}

// Instance returns instance n of device id: n 0 is Device(id); any other
// is the device id#n, with the same viewport and a page and browser
// contexts of its own, for runs of several flows at once that must not
// share a page. Its id names it to the tools (a flow's tool: steps reach
// it, not id's page). It counts against MaxDevices like any device.
func (p *Pool) Instance(ctx context.Context, id string, n int) (*Device, error) {
	if n == 0 {
		return p.device(ctx, id)
	}
	return p.device(ctx, fmt.Sprintf("%s#%d", id, n))
}

// device returns the device id (or id#n for an instance), booting it on
// first use.
func (p *Pool) device(ctx context.Context, id string) (*Device, error) {
	if p.missing != nil {
		return nil, p.missing
	}
	w, h, err := ParseID(id)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	d := p.devices[id]
	if d != nil && d.Dead() {
		p.dropLocked(d)
		d = nil
	}
	if d != nil {
		p.mu.Unlock()
		if err := d.awaitBoot(ctx); err != nil {
			return nil, err
		}
		return d, nil
	}
	if len(p.devices) >= p.max {
		err := p.tooManyLocked()
		p.mu.Unlock()
		return nil, err
	}
	d, life := newDevice(id, w, h, p.urls, p.browserLocked(w, h))
	p.devices[id] = d
	p.mu.Unlock()

	err = d.boot(ctx, life)
	if err != nil {
		p.mu.Lock()
		p.dropLocked(d)
		p.mu.Unlock()
		return nil, fmt.Errorf("boot %s: %w", id, err)
	}
	return d, nil
}

// dropLocked takes d, dead or failed to boot, out of the pool (unless a
// fresh device already took its id), lets it go and gives its room to
// the next call in the queue. p.mu is held.
func (p *Pool) dropLocked(d *Device) {
	if p.devices[d.id] == d {
		delete(p.devices, d.id)
	}
	p.releaseLocked(d)
	p.dispatchLocked()
}

// releaseLocked lets a device that left the pool go: a browser of its own
// closes with it. p.mu is held; nothing here waits.
func (p *Pool) releaseLocked(d *Device) {
	d.kill(errStopped)
	if d.b != p.browser {
		d.b.close()
	}
}

// CheckURL returns the error Launch and Navigate would refuse url with
// (ErrBadURL, ErrFileURL, ErrHostNotAllowed) before any page changes, or
// nil: a caller can refuse a URL before a browser starts.
func (p *Pool) CheckURL(url string) error {
	_, err := p.urls.check(url)
	return err
}

// CheckHost says why a page of this pool may not reach host (an entry
// of AllowHosts' form), or nil: what a proxy that connects on the
// browser's behalf (Proxy) applies to the hosts it reaches directly.
func (p *Pool) CheckHost(host string) error {
	if p.urls.hosts == nil {
		return nil
	}
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		host = "[" + host + "]"
	}
	return p.urls.hosts.check(host)
}

// Lookup returns a booted, live device without booting one.
func (p *Pool) Lookup(id string) (*Device, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := p.devices[id]
	if d == nil || d.Dead() || !d.booted() {
		return nil, false
	}
	return d, true
}

func (p *Pool) idsLocked() []string {
	ids := make([]string, 0, len(p.devices))
	for id := range p.devices {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Info describes a device for list-devices.
type Info struct {
	ID       string `json:"id"`
	Platform string `json:"platform"`
	Width    int    `json:"width"`
	Height   int    `json:"height"`
	State    string `json:"state"`
	URL      string `json:"url,omitempty"`
}

// List returns the devices of the pool, sorted by id.
func (p *Pool) List() []Info {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Info, 0, len(p.devices))
	for _, id := range p.idsLocked() {
		d := p.devices[id]
		state := "booted"
		switch {
		case d.Dead():
			state = "crashed"
		case !d.booted():
			state = "booting"
		}
		out = append(out, Info{ID: id, Platform: "chromium", Width: d.width, Height: d.height, State: state, URL: d.URL()})
	}
	return out
}

// Stop closes the device's pages (and its browser, unless the pool shares
// one) and waits until they are gone. Stopping a device that is not booted
// returns ErrNotBooted. Its instances (Instance) stop with it.
func (p *Pool) Stop(id string) error {
	if p.missing != nil {
		return p.missing
	}
	if _, _, err := ParseID(id); err != nil {
		return err
	}
	p.mu.Lock()
	var gone []*Device
	for key, d := range p.devices {
		if key == id || strings.HasPrefix(key, id+"#") {
			delete(p.devices, key)
			p.releaseLocked(d)
			gone = append(gone, d)
		}
	}
	p.dispatchLocked()
	p.mu.Unlock()
	if len(gone) == 0 {
		return fmt.Errorf("%w: %s", ErrNotBooted, id)
	}
	for _, d := range gone {
		d.wait()
	}
	return nil
}

// Close stops every device and browser, refuses new ones, and returns when
// every goroutine the pool started has ended.
func (p *Pool) Close() error {
	p.mu.Lock()
	p.closed = true
	for _, d := range p.devices {
		d.kill(ErrClosed)
		d.b.close()
	}
	p.devices = map[string]*Device{}
	for _, w := range p.queue {
		w.grant(nil, nil, ErrClosed)
	}
	p.queue = nil
	if p.browser != nil {
		p.browser.close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return nil
}
