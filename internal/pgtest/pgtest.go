// Package pgtest starts a real, throwaway PostgreSQL cluster for a test
// binary (Debian's packages; initdb into a temp dir as the postgres user
// when the tests run as root, as CI does) and gives each test a database
// of its own. The cluster listens on a unix socket in its directory and
// on a loopback port; Main stops it when the tests end.
package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the database/sql driver "pgx"
)

// Password is the password of the role PasswordUser, which must give it
// (scram-sha-256) where every other role is trusted.
const (
	PasswordUser = "secretive"
	Password     = "pw-8d1f77c0-never-logged"
)

// Cluster is a running PostgreSQL cluster.
type Cluster struct {
	dir, bin string
	// Port is its loopback TCP port; its unix socket is in dir.
	Port int
	run  []string // the command prefix that runs a program as the cluster's owner
}

var (
	once     sync.Once
	cluster  *Cluster
	startErr error
	dbs      atomic.Int64
)

// Main runs the tests, then stops the cluster if one was started.
func Main(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop stops the binary's cluster, if one was started.
func Stop() {
	if cluster != nil {
		cluster.stop()
	}
}

// Get returns the binary's cluster, starting it on first use; a machine
// without PostgreSQL fails the test (make test installs it).
func Get(t testing.TB) *Cluster {
	t.Helper()
	once.Do(func() { cluster, startErr = start() })
	if startErr != nil {
		t.Fatalf("pgtest: %v (make test installs Debian's postgresql)", startErr)
	}
	return cluster
}

// DSN returns the address of a new, empty database of the cluster, for
// the trusted role postgres over the unix socket.
func DSN(t testing.TB) string {
	t.Helper()
	c := Get(t)
	name := fmt.Sprintf("t%d_%d", os.Getpid(), dbs.Add(1))
	db, err := sql.Open("pgx", c.SocketDSN("postgres", "postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE DATABASE ` + name); err != nil {
		t.Fatalf("pgtest: creating database %s: %v", name, err)
	}
	return c.SocketDSN("postgres", name)
}

// SocketDSN is the address of database as role user over the unix socket.
func (c *Cluster) SocketDSN(user, database string) string {
	return fmt.Sprintf("postgres://%s@/%s?host=%s&port=%d&sslmode=disable", user, database, c.dir, c.Port)
}

// TCPDSN is the address of database as PasswordUser with its password over
// loopback TCP.
func (c *Cluster) TCPDSN(database string) string {
	return fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/%s?sslmode=disable", PasswordUser, Password, c.Port, database)
}

// Restart stops the cluster (fast: connections are cut) and starts it
// again on the same port.
func (c *Cluster) Restart(t testing.TB) {
	t.Helper()
	if out, err := c.cmd("pg_ctl", "-D", c.dir, "-m", "fast", "-w", "stop").CombinedOutput(); err != nil {
		t.Fatalf("pgtest: stop: %v\n%s", err, out)
	}
	if err := c.startServer(); err != nil {
		t.Fatalf("pgtest: start again: %v", err)
	}
}

// Stop stops the cluster; Start starts it again: a database that goes
// away and comes back.
func (c *Cluster) Stop(t testing.TB) {
	t.Helper()
	if out, err := c.cmd("pg_ctl", "-D", c.dir, "-m", "fast", "-w", "stop").CombinedOutput(); err != nil {
		t.Fatalf("pgtest: stop: %v\n%s", err, out)
	}
}

// Start starts a stopped cluster.
func (c *Cluster) Start(t testing.TB) {
	t.Helper()
	if err := c.startServer(); err != nil {
		t.Fatalf("pgtest: start: %v", err)
	}
}

func (c *Cluster) cmd(name string, args ...string) *exec.Cmd {
	full := append(append(append([]string{}, c.run...), filepath.Join(c.bin, name)), args...)
	return exec.Command(full[0], full[1:]...)
}

// binDir finds the newest PostgreSQL of Debian's packages.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("no PostgreSQL server under /usr/lib/postgresql/*/bin")
}

func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

func start() (*Cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	// As root the cluster belongs to the postgres user, which must reach
	// its directory: /tmp, not a $TMPDIR under root's own home.
	parent := ""
	if os.Geteuid() == 0 {
		parent = "/tmp"
	}
	dir, err := os.MkdirTemp(parent, "pgtest-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, bin: bin}
	if os.Geteuid() == 0 {
		// initdb refuses root: the cluster belongs to the postgres user.
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root, and no postgres user to own the cluster: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
		c.run = []string{"runuser", "-u", "postgres", "--"}
	}
	data := filepath.Join(dir, "data")
	if out, err := c.cmd("initdb", "-D", data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	hba := fmt.Sprintf("local all %[1]s scram-sha-256\nlocal all all trust\nhost all %[1]s 127.0.0.1/32 scram-sha-256\nhost all all 127.0.0.1/32 trust\n", PasswordUser)
	if err := writeAs(c, filepath.Join(data, "pg_hba.conf"), hba); err != nil {
		return nil, err
	}
	c.dir = data
	if c.Port, err = freePort(); err != nil {
		return nil, err
	}
	if err := c.startServer(); err != nil {
		return nil, err
	}
	db, err := sql.Open("pgx", c.SocketDSN("postgres", "postgres"))
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if _, err := db.Exec(fmt.Sprintf(`CREATE ROLE %s LOGIN SUPERUSER PASSWORD '%s'`, PasswordUser, Password)); err != nil {
		c.stop()
		return nil, fmt.Errorf("creating the role %s: %w", PasswordUser, err)
	}
	return c, nil
}

// writeAs writes a file the cluster's owner can read.
func writeAs(c *Cluster, path, text string) error {
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return err
	}
	if len(c.run) == 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return err
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return os.Chown(path, uid, gid)
}

func (c *Cluster) startServer() error {
	opts := strings.Join([]string{
		"-k", c.dir, "-p", strconv.Itoa(c.Port), "-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200", "-c", "shared_buffers=64MB",
	}, " ")
	out, err := c.cmd("pg_ctl", "-D", c.dir, "-l", filepath.Join(c.dir, "log"), "-o", opts, "-w", "-t", "60", "start").CombinedOutput()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "log"))
		return fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	return nil
}

func (c *Cluster) stop() {
	c.cmd("pg_ctl", "-D", c.dir, "-m", "immediate", "-w", "stop").Run()
	os.RemoveAll(filepath.Dir(c.dir))
}

// freePort is a loopback port nothing listens on now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Ping waits until the cluster answers, for at most d.
func (c *Cluster) Ping(ctx context.Context, d time.Duration) error {
	db, err := sql.Open("pgx", c.SocketDSN("postgres", "postgres"))
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return db.PingContext(ctx)
}
