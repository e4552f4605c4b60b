package flow

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolserver/toolserver/wire"

	"go.yaml.in/yaml/v3"

	"github.com/toolserver/toolserver/internal/clientfs"
)

// ConfigFile is a project's configuration of toolserver, relative to the
// project root. It is this project's addition: Argent reads no such file,
// and nothing in it changes what a flow file means; it sets the limits of
// the snapshots that do not set their own.
//
//	snapshot:
//	  maxMismatch: 0.01   # percent of pixels, 0..100 (default 0.5)
//	  maxDiffPixels: 100  # a count of pixels, 0 or more (default: none)
//	  threshold: 0.1      # pixelmatch's colour threshold, 0..1 (default 0.1)
//	  metric: oklab       # yiq (pixelmatch 7, the default) or oklab (pixelmatch 8)
//	  windowSize: 16      # count the worst 16×16 square only (default: none)
//	  stopOnFailure: true # a failed snapshot stops its flow (default false)
//	baseURL: http://localhost:5173   # what launch: /path resolves against
//	expose: [localhost:5173]         # over a link, what the tool-server's browser reaches of this machine
//	exposeOnly: false                # over a link with expose, reach nothing else
const ConfigFile = ".argent/toolserver.yaml"

// MaxConfigBytes caps the config file: a few lines of settings.
const MaxConfigBytes = 64 << 10

// The keys of the config file, checked as strictly as a flow file's:
// anything else is refused with its line and a did-you-mean.
var (
	configKeys         = []string{"snapshot", "baseURL", "expose", "exposeOnly"}
	configSnapshotKeys = []string{"maxMismatch", "maxDiffPixels", "threshold", "metric", "windowSize", "stopOnFailure"}
)

// ErrInvalidConfig is what every ConfigError matches with errors.Is.
var ErrInvalidConfig = errors.New("flow: invalid project config")

// ConfigError is a config file that cannot be used: it does not parse,
// has an unknown key or a value out of range (at Line and Column), is
// too large, or cannot be read.
type ConfigError struct {
	File         string // the file's path as the caller gave it
	Line, Column int    // 1-based; 0 when the problem is the whole file
	Msg          string
	Err          error // the cause, when the file could not be read
}

// Error renders e as "<file>: line 3: snapshot: unknown option …".
func (e *ConfigError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s: line %d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Unwrap returns the cause of a file that could not be read.
func (e *ConfigError) Unwrap() error { return e.Err }

// Is makes every ConfigError match ErrInvalidConfig.
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// Config is a project's config file.
type Config struct {
	Snapshot SnapshotDefaults
	// BaseURL is what a launch: /path resolves against, when set.
	BaseURL string
	// Expose are the targets of this machine a linked run's tunnel
	// exposes (flow run --expose), as written; ExposeOnly is
	// --expose-only.
	Expose     []string
	ExposeOnly bool
}

// LoadConfig reads <projectRoot>/.argent/toolserver.yaml into the
// project's snapshot defaults, each set field's source named
// ConfigFile. A missing file is no error: the defaults are then empty.
func LoadConfig(projectRoot string) (SnapshotDefaults, error) {
	c, err := LoadProjectConfig(projectRoot)
	return c.Snapshot, err
}

// LoadProjectConfig reads the whole config file of projectRoot; a missing
// file sets nothing.
func LoadProjectConfig(projectRoot string) (Config, error) {
	p := filepath.Join(projectRoot, filepath.FromSlash(ConfigFile))
	st, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Config{}, nil
	case err != nil:
		return Config{}, &ConfigError{File: p, Msg: clientfs.ErrorText(err, "stat", p), Err: err}
	case st.IsDir():
		return Config{}, &ConfigError{File: p, Msg: "is a directory, not a file"}
	case st.Size() > MaxConfigBytes:
		return Config{}, &ConfigError{File: p, Msg: fmt.Sprintf("is %d bytes; a config file is at most %d bytes (64 KiB)", st.Size(), MaxConfigBytes)}
	}
	data, _, why := clientfs.ReadRegular(p, MaxConfigBytes)
	if why != "" {
		return Config{}, &ConfigError{File: p, Msg: why}
	}
	return parseConfig(p, data)
}

// ParseConfig parses a config file's bytes; name is its path for the
// messages. An empty file, or one without snapshot:, sets nothing.
func ParseConfig(name string, data []byte) (SnapshotDefaults, error) {
	c, err := parseConfig(name, data)
	return c.Snapshot, err
}

func parseConfig(name string, data []byte) (Config, error) {
	var c Config
	fail := func(e *Error) (Config, error) {
		// The YAML checks are the flow parser's, worded for a flow file.
		msg := strings.ReplaceAll(e.Msg, "a flow file", "a config file")
		return Config{}, &ConfigError{File: name, Line: e.Line, Column: e.Column, Msg: msg, Err: e.Err}
	}
	if len(data) > MaxConfigBytes {
		return Config{}, &ConfigError{File: name, Msg: fmt.Sprintf("is %d bytes; a config file is at most %d bytes (64 KiB)", len(data), MaxConfigBytes)}
	}
	doc, e := decodeDocument(data)
	if e != nil {
		return fail(e)
	}
	if doc != nil {
		if e := checkAliases(doc); e != nil {
			return fail(e)
		}
	}
	root := resolve(doc)
	if isNull(root) {
		return c, nil
	}
	if root.Kind != yaml.MappingNode {
		return fail(errAt(root, ProblemShape, "a config file is a map (snapshot: { maxMismatch, maxDiffPixels, threshold }), got %s", describe(root)))
	}
	o, e := newObject(root)
	if e != nil {
		return fail(e)
	}
	if e := o.only("top-level", configKeys...); e != nil {
		return fail(e)
	}
	if v := resolve(o.get("baseURL")); !isNull(v) {
		u, ok := strValue(v)
		if !ok {
			return fail(errAt(v, ProblemShape, "baseURL must be a URL (http://localhost:5173), got %s", describe(v)))
		}
		if err := CheckBaseURL(u); err != nil {
			return fail(errAt(v, ProblemValue, "baseURL: %v", err))
		}
		c.BaseURL = u
	}
	if e := parseExpose(o, &c); e != nil {
		return fail(e)
	}
	sv := resolve(o.get("snapshot"))
	if isNull(sv) {
		return c, nil
	}
	if sv.Kind != yaml.MappingNode {
		return fail(errAt(sv, ProblemShape, "snapshot must be a map of the project's snapshot limits (maxMismatch, maxDiffPixels, threshold), got %s", describe(sv)))
	}
	so, e := newObject(sv)
	if e != nil {
		return fail(e)
	}
	if e := so.only("snapshot", configSnapshotKeys...); e != nil {
		return fail(e)
	}
	d := &c.Snapshot
	set := func(key string) {
		if d.Sources == nil {
			d.Sources = map[string]string{}
		}
		d.Sources[key] = ConfigFile
	}
	if v := so.get("maxMismatch"); v != nil {
		m, e := percentValue(v, "snapshot.maxMismatch")
		if e != nil {
			return fail(e)
		}
		d.MaxMismatch = &m
		set("maxMismatch")
	}
	if v := so.get("maxDiffPixels"); v != nil {
		n, e := pixelCountValue(v, "snapshot.maxDiffPixels")
		if e != nil {
			return fail(e)
		}
		d.MaxDiffPixels = &n
		set("maxDiffPixels")
	}
	if v := so.get("threshold"); v != nil {
		t, e := thresholdValue(v, "snapshot.threshold")
		if e != nil {
			return fail(e)
		}
		d.Threshold = &t
		set("threshold")
	}
	if v := so.get("metric"); v != nil {
		m, e := metricValue(v, "snapshot.metric")
		if e != nil {
			return fail(e)
		}
		d.Metric = &m
		set("metric")
	}
	if v := so.get("windowSize"); v != nil {
		n, e := windowSizeValue(v, "snapshot.windowSize")
		if e != nil {
			return fail(e)
		}
		d.WindowSize = &n
		set("windowSize")
	}
	if v := so.get("stopOnFailure"); v != nil {
		b, ok := boolValue(v)
		if !ok {
			return fail(errAt(v, ProblemShape, "snapshot.stopOnFailure must be true or false, got %s", describe(v)))
		}
		d.StopOnFailure = &b
	}
	return c, nil
}

// parseExpose reads expose: (a target or a list of them) and exposeOnly:.
func parseExpose(o *object, c *Config) *Error {
	if v := resolve(o.get("expose")); !isNull(v) {
		items := []*yaml.Node{v}
		if v.Kind == yaml.SequenceNode {
			items = v.Content
		}
		for _, it := range items {
			it = resolve(it)
			s, ok := strValue(it)
			if !ok {
				return errAt(it, ProblemShape, "expose must be a list of targets (localhost:5173, 127.0.0.1:8080, localhost), got %s", describe(it))
			}
			if _, err := wire.ParseTarget(s); err != nil {
				return errAt(it, ProblemValue, "expose: %v", err)
			}
			c.Expose = append(c.Expose, s)
		}
		if _, err := wire.ParseTargets(c.Expose); err != nil {
			return errAt(v, ProblemValue, "expose: %v", err)
		}
	}
	if v := o.get("exposeOnly"); v != nil {
		b, ok := boolValue(v)
		if !ok {
			return errAt(v, ProblemShape, "exposeOnly must be true or false, got %s", describe(v))
		}
		c.ExposeOnly = b
	}
	return nil
}

// MaxBaseURLBytes caps a base URL.
const MaxBaseURLBytes = 2048

// CheckBaseURL checks a base URL: http or https, with a host, at most
// MaxBaseURLBytes.
func CheckBaseURL(u string) error {
	if len(u) > MaxBaseURLBytes {
		return fmt.Errorf("%d bytes; a base URL has at most %d", len(u), MaxBaseURLBytes)
	}
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return fmt.Errorf("%.200q is not an http or https URL with a host (http://localhost:5173)", u)
	}
	return nil
}

// ResolveLaunch resolves a launch: target that is a path from the root
// ("/checkout", not "//host") against base. ok is false for any other
// target, which is used as written.
func ResolveLaunch(target, base string) (resolved string, ok bool) {
	if !strings.HasPrefix(target, "/") || strings.HasPrefix(target, "//") || base == "" {
		return "", false
	}
	return strings.TrimRight(base, "/") + target, true
}

// Over returns d with each field that over sets replaced by over's, with
// its source: the flags of flow run over the config file.
func (d SnapshotDefaults) Over(over SnapshotDefaults) SnapshotDefaults {
	out := d
	out.Sources = maps.Clone(d.Sources)
	take := func(key string) {
		if out.Sources == nil {
			out.Sources = map[string]string{}
		}
		if src, ok := over.Sources[key]; ok {
			out.Sources[key] = src
		} else {
			delete(out.Sources, key)
		}
	}
	if over.MaxMismatch != nil {
		out.MaxMismatch = over.MaxMismatch
		take("maxMismatch")
	}
	if over.MaxDiffPixels != nil {
		out.MaxDiffPixels = over.MaxDiffPixels
		take("maxDiffPixels")
	}
	if over.Threshold != nil {
		out.Threshold = over.Threshold
		take("threshold")
	}
	if over.Metric != nil {
		out.Metric = over.Metric
		take("metric")
	}
	if over.WindowSize != nil {
		out.WindowSize = over.WindowSize
		take("windowSize")
	}
	if over.StopOnFailure != nil {
		out.StopOnFailure = over.StopOnFailure
	}
	return out
}

// configSchemaJSON is the JSON Schema of the config file, kept as a file
// for the same reason as schema.json; config_test.go keeps its keys equal
// to the parser's.
//
//go:embed config.schema.json
var configSchemaJSON []byte

// ConfigSchema returns the JSON Schema (draft 2020-12) of ConfigFile,
// indented, with a trailing newline: what `toolserver flow schema
// --config` prints.
func ConfigSchema() []byte {
	out := bytes.TrimRight(bytes.Clone(configSchemaJSON), "\n")
	return append(out, '\n')
}
