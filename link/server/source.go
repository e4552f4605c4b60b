package server

import (
	"encoding/base64"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"

	"github.com/toolserver/toolserver/flow"
	flowrun "github.com/toolserver/toolserver/flow/run"
	"github.com/toolserver/toolserver/wire"
)

// Source is the flow source of a linked run: it answers from the members
// by key and never opens a path on this machine; a canonical path is a key
// and a message, nothing more.
type Source struct {
	// ClientFiles says the client serves the files a page asks for
	// through the call's tunnel (flow run --expose): a launch: with a
	// relative path then passes pre-validation.
	ClientFiles bool

	m *Members
	// byPath finds baseline and tool members by their client path.
	byPath map[string]*Received

	mu      sync.Mutex
	written map[string][]byte
	order   []string
}

var _ flowrun.Source = (*Source)(nil)

// NewSource returns the source over a call's members.
func NewSource(m *Members) *Source {
	s := &Source{m: m, byPath: map[string]*Received{}, written: map[string][]byte{}}
	if m != nil {
		for _, k := range m.order {
			r := m.byKey[k]
			if r.Role == wire.RoleBaseline || r.Role == wire.RoleTool {
				if _, dup := s.byPath[r.Path]; !dup {
					s.byPath[r.Path] = r
				}
			}
		}
	}
	return s
}

// notExist is a missing member, rendered as the client's OS would.
func notExist(path string) error { return &flow.OpenError{Path: path, Err: fs.ErrNotExist} }

// Open implements flowrun.Source: the member with key dir NUL target.
func (s *Source) Open(dir, target string) (*flow.File, error) {
	r := s.m.Get(wire.Key(dir, target))
	if r == nil || r.Role != wire.RoleFlow {
		p := strings.TrimRight(dir, `/\`) + "/" + target
		return &flow.File{Path: p, Canonical: p, Spelling: wire.Spelling{State: wire.SpellListed}, Err: notExist(p)}, nil
	}
	// A member refused on arrival may have no spelling; "listed" is what
	// a client sends when it cannot tell (docs/link-protocol.md, "Spelling").
	sp := wire.Spelling{State: wire.SpellListed}
	if r.Spelling != nil {
		sp = *r.Spelling
	}
	f := &flow.File{Path: r.Path, Canonical: r.Canonical, Spelling: sp}
	switch {
	case r.State == wire.StateRefused:
		f.Err = &flow.RefusedError{Reason: r.Error}
	case r.HasData:
		f.Data = r.Data
	default:
		f.Err = notExist(r.Canonical)
	}
	return f, nil
}

// lookup returns the bytes the call has for a client path: a baseline
// written earlier in the call, else the member with that path. ok is false
// when there are none; a refused member is an error.
func (s *Source) lookup(path string) (data []byte, ok bool, err error) {
	s.mu.Lock()
	b, written := s.written[path]
	s.mu.Unlock()
	if written {
		return b, true, nil
	}
	r := s.byPath[path]
	switch {
	case r == nil:
		return nil, false, nil
	case r.State == wire.StateRefused:
		return nil, false, &flow.RefusedError{Reason: r.Error}
	}
	return r.Data, r.HasData, nil
}

// ReadBaseline implements flowrun.Source: a baseline written earlier in the
// call, else the member with that path.
func (s *Source) ReadBaseline(path string) ([]byte, error) {
	b, ok, err := s.lookup(path)
	if err == nil && !ok {
		err = notExist(path)
	}
	return b, err
}

// WriteBaseline implements flowrun.Source: the baseline is kept for the
// result; updated when a member or an earlier step has the path.
func (s *Source) WriteBaseline(path string, png []byte) (bool, error) {
	r := s.byPath[path]
	if r != nil && r.State == wire.StateRefused {
		return false, &flow.RefusedError{Reason: r.Error}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, before := s.written[path]
	if !before {
		s.order = append(s.order, path)
	}
	s.written[path] = png
	return before || (r != nil && r.State != wire.StateMissing), nil
}

// ToolFile returns the bytes of a tool's file argument by the path as
// written: a baseline written earlier in the call first, then the members.
func (s *Source) ToolFile(path, arg, toolName string) ([]byte, error) {
	b, ok, err := s.lookup(path)
	if err == nil && !ok {
		err = fmt.Errorf("the client has no file at %q (argument %s of %s)", path, arg, toolName)
	}
	return b, err
}

// BaselineWrites returns one client-file directive per baseline path the
// call wrote, with the last bytes, in path order ("Baselines in the
// result").
func (s *Source) BaselineWrites() []flow.BaselineWrite {
	s.mu.Lock()
	defer s.mu.Unlock()
	paths := append([]string(nil), s.order...)
	sort.Strings(paths)
	out := make([]flow.BaselineWrite, 0, len(paths))
	for _, p := range paths {
		out = append(out, flow.BaselineWrite{Path: p, PNG: s.written[p]})
	}
	return out
}

// Wire returns the members as a client would send them with every byte
// inline, for a call the tool-server makes on the client's behalf (the
// live flow-execute of a recorded step).
func (m *Members) Wire() []wire.Member {
	if m == nil {
		return nil
	}
	out := make([]wire.Member, 0, len(m.order))
	for _, k := range m.order {
		r := m.byKey[k]
		w := r.Member
		w.UploadID, w.ContentHash, w.Content = "", "", nil
		if r.HasData {
			c := base64.StdEncoding.EncodeToString(r.Data)
			w.Content = &c
		}
		out = append(out, w)
	}
	return out
}

// FlowFile returns the flow member with key, for a call that runs it.
func (m *Members) FlowFile(key string) *Received {
	r := m.Get(key)
	if r == nil || r.Role != wire.RoleFlow {
		return nil
	}
	return r
}
