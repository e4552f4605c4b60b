package main

import (
	"bytes"
	"strings"
	"sync"
)

// syncBuffer is a goroutine-safe writer that closes started when the
// server says it is listening.
type syncBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	started chan struct{}
	once    sync.Once
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	if b.started != nil && strings.Contains(b.buf.String(), "listening on") {
		b.once.Do(func() { close(b.started) })
	}
	return n, err
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
