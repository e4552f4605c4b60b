package drain

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestCounter: work counts in and out; the drain refuses new work and its
// channel closes when the last piece leaves, at once when none is in
// flight, and a second Start returns the same channel.
func TestCounter(t *testing.T) {
	var d Counter
	for range 2 {
		if !d.Enter() {
			t.Fatal("a counter not draining refused work")
		}
	}
	if n := d.InFlight(); n != 2 {
		t.Fatalf("two pieces in: got %d in flight", n)
	}
	idle := d.Start()
	if !d.Draining() || d.Enter() {
		t.Fatal("a draining counter took new work")
	}
	d.Leave()
	select {
	case <-idle:
		t.Fatal("idle with one piece in flight")
	default:
	}
	d.Leave()
	select {
	case <-idle:
	default:
		t.Fatal("not idle once the last piece left")
	}
	if again := d.Start(); again != idle {
		t.Error("a second Start gave another channel")
	}

	var empty Counter
	select {
	case <-empty.Start():
	default:
		t.Error("a drain with nothing in flight is not idle at once")
	}
}
