package local

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/suite"
)

// failPool gives no device: its error is err.
type failPool struct {
	err    error
	called int
}

func (p *failPool) Instance(context.Context, string, int) (*cdp.Device, error) {
	p.called++
	return nil, p.err
}

// noPrinter fails the test if the run shows anything: it never started.
type noPrinter struct{ t *testing.T }

func (p noPrinter) Start(name, device string) {
	p.t.Errorf("Start(%q, %q): the flow never had a device", name, device)
}
func (p noPrinter) Progress(s flow.StepReport) { p.t.Errorf("Progress(%v)", s) }

const okFlow = "steps:\n  - wait: 1\n"

// TestFlowDeviceErrors: a device id the pool refuses is the caller's
// (*DeviceError, not the machinery's); any other pool failure is the
// machinery's.
func TestFlowDeviceErrors(t *testing.T) {
	target := suite.Target{Name: "home", Path: "home.yaml", Data: []byte(okFlow)}
	bad := fmt.Errorf("chromium-cdp-0x0: %w", cdp.ErrBadID)
	pool := &failPool{err: bad}
	_, _, err := Flow(context.Background(), pool, target, 0, Options{Device: "chromium-cdp-0x0"}, noPrinter{t})
	var de *DeviceError
	if !errors.As(err, &de) || !errors.Is(err, cdp.ErrBadID) || fault.IsInfrastructure(err) || err.Error() != bad.Error() {
		t.Errorf("a bad id: got %v, want a DeviceError of %v", err, bad)
	}

	pool = &failPool{err: errors.New("no Chromium")}
	_, _, err = Flow(context.Background(), pool, target, 0, Options{}, noPrinter{t})
	if !fault.IsInfrastructure(err) || errors.As(err, &de) {
		t.Errorf("no Chromium: got %v, want the machinery's failure", err)
	}
}

// TestFlowBadFile: a flow that does not parse never asks for a device.
func TestFlowBadFile(t *testing.T) {
	pool := &failPool{err: errors.New("unreachable")}
	_, _, err := Flow(context.Background(), pool, suite.Target{Name: "bad", Path: "bad.yaml", Data: []byte("steps: [\n")}, 0, Options{}, noPrinter{t})
	if err == nil || fault.IsInfrastructure(err) || pool.called != 0 {
		t.Errorf("got %v after %d devices, want the parse error and no device", err, pool.called)
	}
}
