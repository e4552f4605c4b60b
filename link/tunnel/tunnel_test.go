package tunnel

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
)

func TestFrames(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteFrame(&buf, Open{Host: "localhost", Port: 5173}); err != nil {
		t.Fatal(err)
	}
	if err := WriteFrame(&buf, Answer{Error: "no"}); err != nil {
		t.Fatal(err)
	}
	var o Open
	var a Answer
	if err := ReadFrame(&buf, &o); err != nil || o != (Open{Host: "localhost", Port: 5173}) {
		t.Fatalf("Open: %+v %v", o, err)
	}
	if err := ReadFrame(&buf, &a); err != nil || a.Error != "no" {
		t.Fatalf("Answer: %+v %v", a, err)
	}
	if err := WriteFrame(io.Discard, Answer{Error: strings.Repeat("x", maxFrame)}); err == nil {
		t.Error("a frame past maxFrame was written")
	}
	if err := ReadFrame(bytes.NewReader([]byte{0xff, 0xff}), &a); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("a frame past maxFrame was read: %v", err)
	}
}

func TestCountedStopsAtTheBudget(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	released := 0
	budget := &Budget{Max: 10}
	c := Counted(a, budget, func() { released++ })
	go io.Copy(io.Discard, b)
	if _, err := c.Write([]byte("12345678")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("123")); !errors.Is(err, ErrCap) {
		t.Fatalf("past the budget: %v", err)
	}
	c.Close()
	c.Close()
	if released != 1 || budget.Used() != 11 {
		t.Errorf("released %d times, used %d", released, budget.Used())
	}
}

func TestPipeCarriesBothWaysAndHalfCloses(t *testing.T) {
	// Two TCP pairs joined by Pipe: what one end writes the other reads,
	// and an end of file passes through as a half-close.
	pair := func() (net.Conn, net.Conn) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		return c, s
	}
	left, mid1 := pair()
	mid2, right := pair()
	done := make(chan struct{})
	go func() { Pipe(mid1, mid2); close(done) }()
	if _, err := left.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	left.(*net.TCPConn).CloseWrite()
	got, err := io.ReadAll(right)
	if err != nil || string(got) != "ping" {
		t.Fatalf("right read %q, %v", got, err)
	}
	if _, err := right.Write([]byte("pong")); err != nil {
		t.Fatal(err)
	}
	right.Close()
	got, err = io.ReadAll(left)
	if err != nil || string(got) != "pong" {
		t.Fatalf("left read %q, %v", got, err)
	}
	<-done
	left.Close()
}
