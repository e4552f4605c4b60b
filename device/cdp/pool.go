package cdp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
)

// DefaultMaxDevices bounds the devices booted at once unless Options says
// otherwise.
const DefaultMaxDevices = 4

// Errors callers branch on.
var (
	// ErrNoChromium means no Chromium binary was found.
	ErrNoChromium = errors.New("chromium not found")
	// ErrTooManyDevices means the pool already holds MaxDevices devices.
	ErrTooManyDevices = errors.New("too many devices")
	// ErrCrashed means the device's browser exited or lost its connection
	// while the call ran; the next call boots a fresh one.
	ErrCrashed = errors.New("chromium exited")
	// ErrClosed means the pool was closed.
	ErrClosed = errors.New("device pool closed")
	// ErrFileURL means a file: URL was refused (Options.DenyFileURLs).
	ErrFileURL = errors.New("file: URLs are off on this tool-server")
	// ErrNotBooted means a device that was never booted was asked for.
	ErrNotBooted = errors.New("device not booted")
)

// Options configure a Pool.
type Options struct {
	// ExecPath is the Chromium binary. Empty: $CHROMIUM_PATH, then chromium,
	// chromium-browser and google-chrome on PATH.
	ExecPath string
	// MaxDevices bounds the devices booted at once (DefaultMaxDevices if 0).
	MaxDevices int
	// Log receives one-off notices, such as the sandbox fallback. May be nil.
	Log io.Writer
	// DenyFileURLs refuses to open file: URLs, so a remote caller cannot
	// look at the tool-server's own files through a screenshot.
	DenyFileURLs bool
}

// Pool holds the booted devices, at most one per id.
type Pool struct {
	execPath  string
	max       int
	log       io.Writer
	noSandbox bool
	denyFiles bool

	mu      sync.Mutex
	devices map[string]*Device
	closed  bool
	notices map[string]bool
}

// FindChromium returns the Chromium binary to use: explicit, then
// $CHROMIUM_PATH, then the usual names on PATH.
func FindChromium(explicit string) (string, error) {
	if explicit != "" {
		return lookExec(explicit)
	}
	if p := os.Getenv("CHROMIUM_PATH"); p != "" {
		return lookExec(p)
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: set CHROMIUM_PATH or install Debian's chromium (apt-get install chromium fonts-liberation)", ErrNoChromium)
}

func lookExec(p string) (string, error) {
	found, err := exec.LookPath(p)
	if err != nil {
		return "", fmt.Errorf("%w at %q: %v; point CHROMIUM_PATH at a Chromium binary or install Debian's chromium (apt-get install chromium fonts-liberation)", ErrNoChromium, p, err)
	}
	return found, nil
}

// NewPool finds Chromium and returns an empty pool. No browser starts until
// a device is first used.
func NewPool(opts Options) (*Pool, error) {
	path, err := FindChromium(opts.ExecPath)
	if err != nil {
		return nil, err
	}
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
		max:      max,
		log:      log,
		// Root cannot use Chromium's sandbox at all.
		noSandbox: os.Getuid() == 0 || os.Getenv("TOOLSERVER_NO_SANDBOX") == "1",
		denyFiles: opts.DenyFileURLs,
		devices:   make(map[string]*Device),
		notices:   make(map[string]bool),
	}, nil
}

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

// ExecPath returns the Chromium binary the pool starts.
func (p *Pool) ExecPath() string { return p.execPath }

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

// Device returns the device id, booting it on first use, or booting a fresh
// one when its browser died.
func (p *Pool) Device(ctx context.Context, id string) (*Device, error) {
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
		delete(p.devices, id)
		go d.close()
		d = nil
	}
	if d == nil {
		if len(p.devices) >= p.max {
			ids := p.idsLocked()
			p.mu.Unlock()
			return nil, fmt.Errorf("%w: %d devices are booted (%v), the limit is %d; stop one with stop-device or raise --max-devices", ErrTooManyDevices, len(ids), ids, p.max)
		}
		d = newDevice(id, w, h)
		d.denyFiles = p.denyFiles
		p.devices[id] = d
	}
	p.mu.Unlock()

	if err := d.boot(ctx, p); err != nil {
		p.mu.Lock()
		if p.devices[id] == d {
			delete(p.devices, id)
		}
		p.mu.Unlock()
		return nil, err
	}
	return d, nil
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
		out = append(out, Info{ID: id, Platform: "chromium", Width: d.width, Height: d.height, State: state, URL: d.lastURL()})
	}
	return out
}

// Stop closes the device's browser. Stopping a device that is not booted
// returns ErrNotBooted.
func (p *Pool) Stop(id string) error {
	if _, _, err := ParseID(id); err != nil {
		return err
	}
	p.mu.Lock()
	d := p.devices[id]
	delete(p.devices, id)
	p.mu.Unlock()
	if d == nil {
		return fmt.Errorf("%w: %s", ErrNotBooted, id)
	}
	d.close()
	return nil
}

// Close stops every device and refuses new ones.
func (p *Pool) Close() error {
	p.mu.Lock()
	p.closed = true
	devs := make([]*Device, 0, len(p.devices))
	for _, d := range p.devices {
		devs = append(devs, d)
	}
	p.devices = map[string]*Device{}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, d := range devs {
		wg.Go(d.close)
	}
	wg.Wait()
	return nil
}
