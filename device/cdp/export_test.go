package cdp

// PID returns the process id of the device's browser, for the tests that
// tell a fresh browser from the one that crashed.
func (d *Device) PID() int { return d.pid() }
