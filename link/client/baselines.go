package client

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolserver/toolserver/internal/clientfs"
	"github.com/toolserver/toolserver/wire"
)

// baselineSet is one baseline directory of the runs of a call: the
// snapshot prefixes that runs comparing there read, and whether a run
// updates there (docs/link-protocol.md, "Baselines").
type baselineSet struct {
	dir      string
	prefixes []string
	update   bool
}

// callPlatform is the platform whose baselines a compare run reads: a
// chromium-cdp- device's, else the call's platform; "" for all.
func callPlatform(a wire.ExecuteArgs) string {
	if strings.HasPrefix(a.Device, "chromium-cdp-") {
		return "chromium"
	}
	return a.Platform
}

// noteBaselines records that a run keys the snapshots snaps in dir. A
// narrow update reads them as a comparing run does, and writes there.
func (c *memberCollector) noteBaselines(dir string, snaps []string, update, narrow bool, platform string) {
	var set *baselineSet
	for _, s := range c.baselineDirs {
		if s.dir == dir {
			set = s
		}
	}
	if set == nil {
		set = &baselineSet{dir: dir}
		c.baselineDirs = append(c.baselineDirs, set)
	}
	if update {
		set.update = true
		if !narrow {
			return
		}
	}
	if platform != "" {
		platform += "-"
	}
	for _, n := range snaps {
		if p := n + "__" + platform; !slices.Contains(set.prefixes, p) {
			set.prefixes = append(set.prefixes, p)
		}
	}
}

// sendBaselines sends the baselines of the runs. A run that compares
// reads <name>__*.png of its snapshots (of one platform when the call
// names it), which go with their bytes; a run that updates reads none, so
// every other .png of its directory goes by name (listed), for the
// tool-server to tell a new baseline from an update, and its directory is
// one the result may write into. A directory outside the roots sends
// nothing and takes no write. A path already sent as a tool file is not
// sent again: that member stands for the baseline.
func (c *memberCollector) sendBaselines(ctx context.Context) error {
	for _, set := range c.baselineDirs {
		if !c.policy.Serves(clientfs.RealPath(set.dir)) {
			continue
		}
		if set.update {
			c.st.writable[set.dir] = c.policy
		}
		ents, err := os.ReadDir(set.dir) // sorted by name
		if err != nil {
			continue
		}
		for _, e := range ents {
			name := e.Name()
			if !strings.HasSuffix(name, ".png") {
				continue
			}
			compared := false
			for _, p := range set.prefixes {
				if strings.HasPrefix(name, p) {
					compared = true
					break
				}
			}
			if !set.update && !compared {
				continue
			}
			file := filepath.Join(set.dir, name)
			if c.toolPaths[file] {
				continue
			}
			if err := c.baselineMember(ctx, file, compared, set.update && !compared); err != nil {
				return err
			}
		}
	}
	return nil
}

// baselineMember sends one baseline: its bytes when a run compares it, else its
// name (listed). The client policy (docs/link-protocol.md) applies with PNG in
// place of YAML; a link to nothing is missing for a read and refused for a file
// that only a write concerns.
func (c *memberCollector) baselineMember(ctx context.Context, file string, compared, forWrite bool) error {
	m := wire.Member{Role: wire.RoleBaseline, Key: file, Path: file}
	refuse := func(why string) error {
		m.State, m.Error = wire.StateRefused, why
		c.emit(m, sentRefused(why))
		return nil
	}
	canonical, landErr := clientfs.Land(file)
	if !c.policy.Serves(canonical) {
		return refuse(c.policy.Outside(file))
	}
	if landErr != "" {
		return refuse(landErr)
	}
	fi, err := os.Stat(canonical)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if forWrite {
			return refuse(clientfs.LinkToMissing(file))
		}
		m.State = wire.StateMissing
		c.emit(m, wire.StateMissing)
		return nil
	case err != nil:
		return refuse(clientfs.ErrorText(err, "stat", canonical))
	case !strings.HasSuffix(canonical, ".png"):
		return refuse(clientfs.LinksToOther(file, "a PNG file"))
	case fi.IsDir():
		return refuse(clientfs.EISDIRRead)
	case !fi.Mode().IsRegular():
		if forWrite {
			return refuse(clientfs.NotRegular(file))
		}
		m.State = wire.StateMissing
		c.emit(m, wire.StateMissing)
		return nil
	case !compared:
		m.State = wire.StateListed
		c.emit(m, wire.StateListed)
		return nil
	}
	_, sent, err := c.sendBytes(ctx, &m, canonical)
	if err != nil {
		return err
	}
	c.emit(m, sent)
	return nil
}
