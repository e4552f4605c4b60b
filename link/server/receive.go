package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/internal/clientfs"
	"github.com/toolserver/toolserver/internal/clientpath"
	"github.com/toolserver/toolserver/store"
	"github.com/toolserver/toolserver/wire"
)

// Received is a member as the tool-server keeps it.
type Received struct {
	wire.Member
	// Data holds the bytes when the member had them.
	Data []byte
	// HasData tells an empty file from no bytes.
	HasData bool
}

// Members are the files of one linked call, by key ("What the tool-server
// does with the members").
type Members struct {
	byKey map[string]*Received
	order []string
}

// Get returns the member with key, or nil.
func (m *Members) Get(key string) *Received {
	if m == nil {
		return nil
	}
	return m.byKey[key]
}

// Len returns the number of members kept.
func (m *Members) Len() int {
	if m == nil {
		return 0
	}
	return len(m.order)
}

// unprocessable is the 422 of a member that fails a check.
func unprocessable(format string, a ...any) error {
	return &fault.Error{Kind: fault.Unprocessed, Message: fmt.Sprintf(format, a...)}
}

// ParseInput decodes a flow file input; ok is false when raw is not a
// file-input object, withMembers whether it carries a members list (an
// empty one too; null is none: decoding leaves Members nil only then).
func ParseInput(raw json.RawMessage) (in wire.FileInputObject, withMembers bool, ok bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return in, false, false
	}
	if err := wire.UnmarshalFileInput(raw, &in); err != nil || !in.ArgentFileInput {
		return wire.FileInputObject{}, false, false
	}
	return in, in.Members != nil, true
}

// Receive reads the members of a call before its arguments are checked:
// the bytes of each member are kept (inline or from its upload), the caps
// applied, every upload the call names deleted whatever happens, invalid
// members refused, unknown roles and repeated keys ignored. A failed check
// or an unknown upload is a 422.
func Receive(ctx context.Context, members []wire.Member, uploads Uploads) (*Members, error) {
	// Every upload the call names goes, also when the call fails: an
	// uploadId is good for one call only.
	var taken []store.Upload
	defer func() {
		for _, u := range taken {
			uploads.Remove(u)
		}
	}()
	if len(members) > wire.MaxMembers {
		for _, m := range members {
			if m.UploadID != "" && uploads != nil {
				if u, err := uploads.Take(m.UploadID); err == nil {
					taken = append(taken, u)
				}
			}
		}
		return nil, unprocessable("the call has %d members; a call may carry at most %d", len(members), wire.MaxMembers)
	}
	out := &Members{byKey: map[string]*Received{}}
	var flowTotal int64
	var firstErr error
	for i := range members {
		m := members[i]
		r := &Received{Member: m}
		var err error
		if m.UploadID != "" {
			var u store.Upload
			if uploads == nil {
				err = unprocessable("member %q: uploads are off on this tool-server", m.Path)
			} else if u, err = uploads.Take(m.UploadID); err != nil {
				err = unprocessable("member %q: unknown upload %q (an uploadId is good for one call only): this tool-server never received it, or it was used or expired; if several tool-servers share this address (replicas behind a load balancer), the upload reached another one: give them a shared --upload-dir, or pin each client to one (sessionAffinity: ClientIP, nginx ip_hash)", m.Path, m.UploadID)
			} else {
				taken = append(taken, u)
			}
			if err == nil {
				r.Data, err = readUpload(u, m)
				r.HasData = err == nil
			}
		} else if m.Content != nil {
			r.Data, err = decodeContent(m)
			r.HasData = err == nil
		}
		if err == nil && r.HasData && m.Size != nil && int64(len(r.Data)) != *m.Size {
			err = unprocessable("member %q: size says %d bytes, the content has %d", m.Path, *m.Size, len(r.Data))
		}
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		switch m.Role {
		case wire.RoleFlow, wire.RoleBaseline, wire.RoleTool, wire.RoleStyle:
		default:
			continue // unknown roles are ignored
		}
		if _, dup := out.byKey[m.Key]; dup || m.Key == "" {
			continue // the first member with a key stands
		}
		if m.Role == wire.RoleFlow && r.HasData {
			flowTotal += int64(len(r.Data))
			if wire.OverCap(flowTotal) && firstErr == nil {
				firstErr = unprocessable("the flow members of the call total more than the 32 MiB cap")
			}
		}
		refuseInvalid(r)
		out.byKey[m.Key] = r
		out.order = append(out.order, m.Key)
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return out, ctx.Err()
}

// refuseInvalid marks refused a member that has no bytes and no state, a
// flow member whose canonical or spelling is not valid, and a style
// member whose canonical is not.
func refuseInvalid(r *Received) {
	switch {
	case r.State == wire.StateRefused:
		// A refused member is one the client did not send: bytes that
		// came with it anyway are dropped, so no reader can take them.
		r.HasData, r.Data = false, nil
		if r.Error == "" {
			r.Error = wire.RefusedByClient
		}
	case !r.HasData && r.State != wire.StateMissing && r.State != wire.StateListed:
		r.State, r.Error = wire.StateRefused, "the client sent neither the bytes nor a state of "+r.Path
	case (r.Role == wire.RoleFlow || r.Role == wire.RoleStyle) && !validCanonical(r.Canonical):
		r.State, r.Error, r.HasData, r.Data = wire.StateRefused, fmt.Sprintf("member %q has no valid canonical path (%q)", r.Path, r.Canonical), false, nil
	case r.Role == wire.RoleFlow && !validSpelling(r.Spelling):
		r.State, r.Error, r.HasData, r.Data = wire.StateRefused, fmt.Sprintf("member %q has no valid spelling", r.Path), false, nil
	}
}

func validCanonical(p string) bool {
	return !strings.ContainsRune(p, 0) && clientpath.IsAbs(p)
}

func validSpelling(s *wire.Spelling) bool {
	if s == nil {
		return false
	}
	switch s.State {
	case wire.SpellListed, wire.SpellAbsent:
		return true
	case wire.SpellCaseFolded:
		return s.Actual != "" && s.Addressable != nil
	}
	return false
}

func decodeContent(m wire.Member) ([]byte, error) {
	b, err := wire.DecodeBase64(*m.Content)
	if errors.Is(err, wire.ErrOverCap) {
		return nil, unprocessable("%s", clientfs.TooLarge(fmt.Sprintf("member %q", m.Path)))
	}
	if err != nil {
		return nil, unprocessable("member %q: content is not valid base64: %v", m.Path, err)
	}
	return b, nil
}
