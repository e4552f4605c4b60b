package deploy

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/toolserver/toolserver/store"
	"github.com/toolserver/toolserver/tool"
)

// composeFile is the part of the Compose format compose.yaml uses. It is
// decoded with KnownFields, so a misspelt key fails here rather than being
// ignored by docker compose; a key compose.yaml starts to use gets added.
type composeFile struct {
	Name string `yaml:"name"`
	// The replicas' one definition, which each service names by an
	// alias.
	XToolserver composeService            `yaml:"x-toolserver"`
	Services    map[string]composeService `yaml:"services"`
	Volumes     map[string]*struct{}      `yaml:"volumes"`
}

type composeService struct {
	Image  string `yaml:"image"`
	Deploy struct {
		Replicas *int `yaml:"replicas"`
	} `yaml:"deploy"`
	Command         []string          `yaml:"command"`
	Environment     map[string]string `yaml:"environment"`
	User            string            `yaml:"user"`
	ReadOnly        bool              `yaml:"read_only"`
	Tmpfs           []string          `yaml:"tmpfs"`
	CapDrop         []string          `yaml:"cap_drop"`
	SecurityOpt     []string          `yaml:"security_opt"`
	Volumes         []string          `yaml:"volumes"`
	StopGracePeriod string            `yaml:"stop_grace_period"`
	DependsOn       map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
	Healthcheck *struct {
		Test        []string `yaml:"test"`
		Interval    string   `yaml:"interval"`
		Timeout     string   `yaml:"timeout"`
		Retries     int      `yaml:"retries"`
		StartPeriod string   `yaml:"start_period"`
	} `yaml:"healthcheck"`
	Ports   []string `yaml:"ports"`
	Restart string   `yaml:"restart"`
}

func loadCompose(t *testing.T) *composeFile {
	t.Helper()
	b, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var c composeFile
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	return &c
}

// replicas returns the services that run the tool-server image, by name.
func (c *composeFile) replicas() map[string]composeService {
	out := map[string]composeService{}
	for name, s := range c.Services {
		if strings.HasPrefix(s.Image, "toolserver:") {
			out[name] = s
		}
	}
	return out
}

// TestComposeReplicas: three tool-server replicas, each mounting the
// shared upload volume where its --upload-dir points, taking the token from
// the environment, given the time its drain needs, and keeping its runs in
// the postgres service (TOOLSERVER_STORE), which it waits for.
func TestComposeReplicas(t *testing.T) {
	c := loadCompose(t)
	reps := c.replicas()
	n := 0
	for name, s := range reps {
		if s.Deploy.Replicas != nil {
			n += *s.Deploy.Replicas
		} else {
			n++
		}
		if len(s.Command) == 0 || s.Command[0] != "serve" {
			t.Errorf("%s: command %q, want serve", name, s.Command)
			continue
		}
		checkComposeStore(t, c, name, s)
		checkLease(t, name, s.Command)
		dir := flag(t, s.Command, "upload-dir")
		var shared string
		for _, v := range s.Volumes {
			src, dst, _ := strings.Cut(v, ":")
			if strings.TrimSuffix(dst, ":rw") == dir {
				shared = src
			}
		}
		if _, named := c.Volumes[shared]; shared == "" || !named {
			t.Errorf("%s: --upload-dir %s is on %q, want a named volume of the file (volumes: %q)", name, dir, shared, s.Volumes)
		}
		if tok := s.Environment["ARGENT_AUTH_TOKEN"]; !strings.HasPrefix(tok, "${ARGENT_AUTH_TOKEN") {
			t.Errorf("%s: ARGENT_AUTH_TOKEN is %q, want it from the environment (${ARGENT_AUTH_TOKEN…})", name, tok)
		}
		drain, err := time.ParseDuration(flag(t, s.Command, "drain-timeout"))
		if err != nil {
			t.Fatalf("%s: --drain-timeout: %v", name, err)
		}
		// Docker sends SIGKILL stop_grace_period after SIGTERM (10 s
		// unless set).
		grace, err := time.ParseDuration(s.StopGracePeriod)
		if err != nil || grace <= drain {
			t.Errorf("%s: stop_grace_period %q, want longer than --drain-timeout %v", name, s.StopGracePeriod, drain)
		}
		if !s.ReadOnly || !slices.Contains(s.Tmpfs, "/tmp") || !slices.Contains(s.CapDrop, "ALL") {
			t.Errorf("%s: read_only %v, tmpfs %q, cap_drop %q, want a read-only root, /tmp a tmpfs and every capability dropped", name, s.ReadOnly, s.Tmpfs, s.CapDrop)
		}
	}
	if n != 3 {
		t.Errorf("compose.yaml runs %d tool-server replicas, want three", n)
	}
}

// interpolate expands compose's ${NAME}, ${NAME:?message} and
// ${NAME:-default} from vars; a name vars lacks fails the test.
func interpolate(t *testing.T, s string, vars map[string]string) string {
	t.Helper()
	return regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?[?-][^}]*)?\}`).ReplaceAllStringFunc(s, func(m string) string {
		name := regexp.MustCompile(`^\$\{([A-Za-z_][A-Za-z0-9_]*)`).FindStringSubmatch(m)[1]
		v, ok := vars[name]
		if !ok {
			t.Fatalf("%q: ${%s} is not a variable this test sets", s, name)
		}
		return v
	})
}

// composeVars are the variables compose.yaml reads from the environment.
var composeVars = map[string]string{
	"ARGENT_AUTH_TOKEN": "0123456789abcdef0123456789abcdef",
	"POSTGRES_PASSWORD": "fedcba9876543210fedcba9876543210fedcba98",
}

// checkComposeStore: replica name's TOOLSERVER_STORE is the DSN of the
// postgres service, with its user, database and password, and the replica
// starts once that service is healthy (serve exits 2 on a store it cannot
// reach at start). No --state-dir, no --store in the command: the DSN
// holds the password, and a command line is in `docker ps` and /proc.
func checkComposeStore(t *testing.T, c *composeFile, name string, s composeService) {
	t.Helper()
	raw, ok := s.Environment["TOOLSERVER_STORE"]
	if !ok {
		t.Errorf("%s: no TOOLSERVER_STORE, want the postgres service's DSN", name)
		return
	}
	if !strings.Contains(raw, "${POSTGRES_PASSWORD") {
		t.Errorf("%s: TOOLSERVER_STORE %q, want the password from ${POSTGRES_PASSWORD}", name, raw)
	}
	dsn := checkDSN(t, name+" TOOLSERVER_STORE", interpolate(t, raw, composeVars))
	db, ok := c.Services[dsn.Hostname()]
	if !ok || !strings.HasPrefix(db.Image, "postgres:") {
		t.Fatalf("%s: TOOLSERVER_STORE's host %q is not a postgres service of the file", name, dsn.Hostname())
	}
	pw, _ := dsn.User.Password()
	if dsn.User.Username() != db.Environment["POSTGRES_USER"] || strings.Trim(dsn.Path, "/") != db.Environment["POSTGRES_DB"] ||
		pw != interpolate(t, db.Environment["POSTGRES_PASSWORD"], composeVars) {
		t.Errorf("%s: TOOLSERVER_STORE user %q database %q, want the %s service's POSTGRES_USER, POSTGRES_DB and POSTGRES_PASSWORD", name, dsn.User.Username(), dsn.Path, dsn.Hostname())
	}
	if got := s.DependsOn[dsn.Hostname()].Condition; got != "service_healthy" {
		t.Errorf("%s: depends_on %s condition %q, want service_healthy", name, dsn.Hostname(), got)
	}
	for _, f := range []string{"state-dir", "store", "store-file"} {
		if hasFlag(s.Command, f) {
			t.Errorf("%s: command %q gives --%s, want the store from TOOLSERVER_STORE alone", name, s.Command, f)
		}
	}
}

// TestComposePostgres: the database keeps its data on a named volume, has
// a health check the replicas wait for, runs as its image's user on a
// read-only root, is not published, and is the version the cluster runs.
func TestComposePostgres(t *testing.T) {
	c := loadCompose(t)
	var name string
	for n, s := range c.Services {
		if strings.HasPrefix(s.Image, "postgres:") {
			if name != "" {
				t.Fatalf("two postgres services, %s and %s", name, n)
			}
			name = n
		}
	}
	if name == "" {
		t.Fatal("compose.yaml: no postgres service")
	}
	s := c.Services[name]
	// The password from the environment, refused when unset: no default,
	// empty or not.
	if pw := s.Environment["POSTGRES_PASSWORD"]; !strings.HasPrefix(pw, "${POSTGRES_PASSWORD:?") {
		t.Errorf("%s: POSTGRES_PASSWORD %q, want ${POSTGRES_PASSWORD:?…} (required)", name, pw)
	}
	var data string
	for _, v := range s.Volumes {
		src, dst, _ := strings.Cut(v, ":")
		if strings.TrimSuffix(dst, ":rw") == "/var/lib/postgresql/data" {
			data = src
		}
	}
	if _, named := c.Volumes[data]; data == "" || !named {
		t.Errorf("%s: /var/lib/postgresql/data is on %q, want a named volume of the file (volumes: %q)", name, data, s.Volumes)
	}
	hc := s.Healthcheck
	if hc == nil || len(hc.Test) < 2 || hc.Test[0] != "CMD" {
		t.Fatalf("%s: healthcheck %+v, want [CMD, pg_isready, …]", name, hc)
	}
	checkPgIsReady(t, name+" healthcheck", hc.Test[1:], 5432, s.Environment["POSTGRES_USER"], s.Environment["POSTGRES_DB"])
	for _, d := range []string{hc.Interval, hc.Timeout, hc.StartPeriod} {
		if v, err := time.ParseDuration(d); err != nil || v <= 0 {
			t.Errorf("%s: healthcheck duration %q: want a positive duration (%v)", name, d, err)
		}
	}
	if hc.Retries < 1 {
		t.Errorf("%s: healthcheck retries %d, want ≥ 1", name, hc.Retries)
	}
	if uid, _, _ := strings.Cut(s.User, ":"); uid == "" || uid == "0" || uid == "root" {
		t.Errorf("%s: user %q, want the image's postgres (999:999)", name, s.User)
	}
	if !s.ReadOnly || !slices.Contains(s.Tmpfs, "/var/run/postgresql") || !slices.Contains(s.CapDrop, "ALL") {
		t.Errorf("%s: read_only %v, tmpfs %q, cap_drop %q, want a read-only root, the socket directory a tmpfs and every capability dropped", name, s.ReadOnly, s.Tmpfs, s.CapDrop)
	}
	if len(s.Ports) != 0 {
		t.Errorf("%s: ports %q published, want none (only the replicas reach it)", name, s.Ports)
	}
	if img := loadDatabase(t).container(t).Image; s.Image != img {
		t.Errorf("%s runs %q, the cluster's database %q: want one version", name, s.Image, img)
	}
}

// nginxDirectives returns the simple directives of an nginx config (`name
// args;`), comments dropped, by name.
func nginxDirectives(conf string) map[string][]string {
	conf = regexp.MustCompile(`#[^\n]*`).ReplaceAllString(conf, "")
	out := map[string][]string{}
	for _, m := range regexp.MustCompile(`(?m)^\s*([a-z_]+)\s+([^;{}]*);`).FindAllStringSubmatch(conf, -1) {
		out[m[1]] = append(out[m[1]], strings.TrimSpace(m[2]))
	}
	return out
}

// nginxSize parses an nginx size (64m, 512k, 1g or bytes).
func nginxSize(s string) (int64, error) {
	mult := map[byte]int64{'k': 1 << 10, 'm': 1 << 20, 'g': 1 << 30}
	m := int64(1)
	if k, ok := mult[s[len(s)-1]|0x20]; ok && len(s) > 1 {
		m, s = k, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n * m, err
}

// TestNginxConf: the proxy in front of the replicas balances over all of
// them, passes the largest body the server takes, streams, and passes the
// tunnel's upgrade.
func TestNginxConf(t *testing.T) {
	c := loadCompose(t)
	var mounted bool
	for _, s := range c.Services {
		mounted = mounted || slices.Contains(s.Volumes, "./nginx.conf:/etc/nginx/conf.d/default.conf:ro")
	}
	if !mounted {
		t.Error("compose.yaml: no service mounts ./nginx.conf as nginx's default.conf")
	}
	// nginx resolves the replicas' names at start: each must be up.
	for _, s := range c.Services {
		if !slices.Contains(s.Volumes, "./nginx.conf:/etc/nginx/conf.d/default.conf:ro") {
			continue
		}
		for name := range c.replicas() {
			if got := s.DependsOn[name].Condition; got != "service_healthy" {
				t.Errorf("nginx: depends_on %s condition %q, want service_healthy", name, got)
			}
		}
	}
	b, err := os.ReadFile("nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	d := nginxDirectives(string(b))
	var servers []string
	for _, s := range d["server"] {
		servers = append(servers, strings.Fields(s)[0])
	}
	var want []string
	for name, s := range c.replicas() {
		_, p, _ := strings.Cut(flag(t, s.Command, "addr"), ":")
		want = append(want, name+":"+p)
	}
	slices.Sort(want)
	slices.Sort(servers)
	if !slices.Equal(servers, want) || len(servers) != 3 {
		t.Errorf("nginx.conf: upstream servers %q, want the three replicas %q", servers, want)
	}
	if d["ip_hash"] != nil || d["hash"] != nil {
		t.Error("nginx.conf: sticky upstream; the shipped config is round-robin over the shared upload volume")
	}
	body := d["client_max_body_size"]
	if len(body) != 1 {
		t.Fatalf("nginx.conf: client_max_body_size %q, want one (nginx's default is 1m)", body)
	}
	if n, err := nginxSize(body[0]); err != nil || n < max(tool.MaxCallBody, store.MaxUploadBytes) {
		t.Errorf("nginx.conf: client_max_body_size %s, want at least %d MiB (a call body is up to %d MiB, an upload %d MiB)",
			body[0], max(tool.MaxCallBody, store.MaxUploadBytes)>>20, tool.MaxCallBody>>20, store.MaxUploadBytes>>20)
	}
	for _, want := range []struct{ name, value string }{
		{"proxy_http_version", "1.1"},
		// NDJSON progress and SSE reach the client as they are flushed.
		{"proxy_buffering", "off"},
	} {
		if got := d[want.name]; !slices.Contains(got, want.value) {
			t.Errorf("nginx.conf: %s %q, want %s", want.name, got, want.value)
		}
	}
	// The tunnel of flow run --expose is an HTTP/1.1 Upgrade, which nginx
	// passes only with the client's Upgrade and Connection sent on.
	for _, want := range []string{"Upgrade $http_upgrade", "Connection $connection_upgrade"} {
		if !slices.Contains(d["proxy_set_header"], want) {
			t.Errorf("nginx.conf: proxy_set_header %q, want %s (the tunnel's upgrade)", d["proxy_set_header"], want)
		}
	}
	conf := regexp.MustCompile(`#[^\n]*`).ReplaceAllString(string(b), "")
	m := regexp.MustCompile(`map\s+\$http_upgrade\s+\$connection_upgrade\s*\{([^}]*)\}`).FindStringSubmatch(conf)
	if m == nil || !regexp.MustCompile(`default\s+upgrade\s*;`).MatchString(m[1]) || !regexp.MustCompile(`''\s+''\s*;`).MatchString(m[1]) {
		t.Error("nginx.conf: no map $http_upgrade $connection_upgrade { default upgrade; '' ''; }: an upgrade needs Connection: upgrade, the rest an empty Connection for keepalive")
	}
	rt := d["proxy_read_timeout"]
	if len(rt) != 1 {
		t.Fatalf("nginx.conf: proxy_read_timeout %q, want one (nginx's default of 60s cuts a quiet stream)", rt)
	}
	if dur, err := time.ParseDuration(rt[0]); err != nil || dur < 5*time.Minute {
		t.Errorf("nginx.conf: proxy_read_timeout %s, want at least 5m", rt[0])
	}
	// nginx must not send a call again to another replica.
	for _, v := range d["proxy_next_upstream"] {
		if strings.Contains(v, "non_idempotent") {
			t.Errorf("nginx.conf: proxy_next_upstream %s would send a call twice", v)
		}
	}
}

// TestNginxConfLoads: nginx itself accepts the config (`nginx -t`), with
// the replicas' names, which only Docker's DNS resolves, made loopback.
func TestNginxConfLoads(t *testing.T) {
	bin, err := exec.LookPath("nginx")
	if err != nil {
		bin = "/usr/sbin/nginx"
		if _, serr := os.Stat(bin); serr != nil {
			t.Fatalf("nginx is missing (%v): make test installs it (EXTRA_PACKAGES=nginx docker/install-runtime.sh)", err)
		}
	}
	b, err := os.ReadFile("nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	conf := string(b)
	for name := range loadCompose(t).replicas() {
		conf = regexp.MustCompile(`(?m)^(\s*server\s+)`+regexp.QuoteMeta(name)+`:`).ReplaceAllString(conf, "${1}127.0.0.1:")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "default.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	// The nginx image's own nginx.conf includes conf.d/*.conf in http {}.
	top := fmt.Sprintf(`pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 64; }
http {
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  include %[1]s/default.conf;
}
`, dir)
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(top), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-t", "-p", dir, "-c", filepath.Join(dir, "nginx.conf"), "-e", filepath.Join(dir, "error.log")).CombinedOutput()
	if err != nil {
		t.Fatalf("nginx -t: %v\n%s", err, out)
	}
}
