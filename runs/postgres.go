package runs

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// The store of a fleet: every replica opens the same PostgreSQL database
// (docs/serving.md, "A fleet on PostgreSQL"). A replica's runs are its
// own while it holds a lease on each, which it renews; a run whose lease
// lapsed is anyone's to take over (Store.Lapsed). Each change is
// announced on a channel of the database (NOTIFY), so that the streams
// of every replica follow every run as it is recorded.

// DefaultLease is how long a replica's hold on a run lasts unrenewed.
const DefaultLease = 30 * time.Second

// notifyChannel is the database's channel of the runs' changes.
const notifyChannel = "toolserver_runs"

// PostgresOptions are the settings of OpenPostgres.
type PostgresOptions struct {
	// Keep is how many finished runs the store keeps (0: DefaultKeep).
	Keep int
	// Lease is a replica's hold on a run it drives (0: DefaultLease); it
	// is renewed every third of it.
	Lease time.Duration
}

// pgDB is the PostgreSQL of a fleet.
type pgDB struct {
	dsn   string
	where string
	lease time.Duration
	// stop ends the listener and the renewals; done is closed when they
	// have.
	stop context.CancelFunc
	done chan struct{}
}

// IsPostgres reports whether a --store value names a PostgreSQL database.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// OpenPostgres opens the run store in the PostgreSQL database at dsn,
// shared by every replica of a fleet. The schema is brought to its
// version at start, under an advisory lock, so that replicas starting
// together migrate once. No error names the password.
func OpenPostgres(ctx context.Context, dsn string, opts PostgresOptions) (*Store, error) {
	return openPostgres(ctx, dsn, opts, len(pgMigrations))
}

func openPostgres(ctx context.Context, dsn string, opts PostgresOptions, version int) (*Store, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("run store: %s", scrub(err.Error(), dsn))
	}
	d := &pgDB{dsn: dsn, where: describeConfig(cfg), lease: opts.Lease, done: make(chan struct{})}
	if d.lease <= 0 {
		d.lease = DefaultLease
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(8)
	db.SetConnMaxIdleTime(time.Minute)
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("run store: %s is unreachable: %s", d.where, scrub(err.Error(), dsn))
	}
	if err := migratePostgres(pctx, db, version); err != nil {
		db.Close()
		return nil, fmt.Errorf("run store: %s: migrating its schema: %s", d.where, scrub(err.Error(), dsn))
	}
	s := newStore(db, d, opts.Keep)
	bg, stop := context.WithCancel(context.Background())
	d.stop = stop
	go d.background(bg, s.notify, s.renewLeases)
	return s, nil
}

// describeConfig names a database by host, port, database and user: never
// its password.
func describeConfig(cfg *pgx.ConnConfig) string {
	return fmt.Sprintf("PostgreSQL at %s:%d (database %s, user %s)", cfg.Host, cfg.Port, cfg.Database, cfg.User)
}

// scrub takes dsn's password out of msg, whatever quoted it.
func scrub(msg, dsn string) string {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil || cfg.Password == "" {
		return msg
	}
	return strings.ReplaceAll(msg, cfg.Password, "xxxxx")
}

// RedactDSN is dsn with its password replaced, for a message.
func RedactDSN(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		return u.String()
	}
	if _, err := pgconn.ParseConfig(dsn); err == nil {
		return scrub(dsn, dsn)
	}
	return "(an address that does not parse)"
}

func (d *pgDB) rebind(q string) string { return numbered(q) }

func (d *pgDB) labelMatch() string { return "(runs.labels::jsonb ->> ?) = ?" }

func (d *pgDB) leaseUntil(now int64) int64 { return now + d.lease.Milliseconds() }

// shared: every replica of the fleet writes the database.
func (d *pgDB) shared() bool { return true }

// attached: a run whose owner's lease holds.
func (d *pgDB) attached(context.Context, *sql.DB, string) func(string, int64) bool {
	now := time.Now().UnixMilli()
	return func(owner string, lease int64) bool { return owner != "" && lease > now }
}

func (d *pgDB) putFile(ctx context.Context, write execFunc, id, name string, src io.Reader, max int64) error {
	data, err := io.ReadAll(io.LimitReader(src, max))
	if err != nil {
		return err
	}
	_, err = write(ctx, `INSERT INTO run_files (run_id, name, data, created_at) VALUES (?, ?, ?, ?)`, id, name, data, time.Now().UnixMilli())
	return err
}

// memFile is a kept image read from the database.
type memFile struct {
	*bytes.Reader
	mod time.Time
}

func (f memFile) Close() error       { return nil }
func (f memFile) ModTime() time.Time { return f.mod }

func (d *pgDB) openFile(ctx context.Context, rdb *sql.DB, id, name string) (File, error) {
	var data []byte
	var at int64
	err := rdb.QueryRowContext(ctx, d.rebind(`SELECT data, created_at FROM run_files WHERE run_id = ? AND name = ?`), id, name).Scan(&data, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, noFile(id, name)
	}
	if err != nil {
		return nil, err
	}
	return memFile{bytes.NewReader(data), time.UnixMilli(at)}, nil
}

// removeFiles: the images go with their run (ON DELETE CASCADE).
func (d *pgDB) removeFiles(context.Context, string) error { return nil }

func (d *pgDB) notify() string { return `SELECT pg_notify('` + notifyChannel + `', ?)` }

func (d *pgDB) retryable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if pe, ok := errors.AsType[*pgconn.PgError](err); ok {
		// Connection exceptions, and the server shutting down or starting.
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	if _, ok := errors.AsType[*pgconn.ConnectError](err); ok {
		return true
	}
	if _, ok := errors.AsType[net.Error](err); ok {
		return true
	}
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || pgconn.SafeToRetry(err) || strings.Contains(err.Error(), "conn closed")
}

func (d *pgDB) describe() string { return d.where }

func (d *pgDB) close() error {
	if d.stop != nil {
		d.stop()
		<-d.done
	}
	return nil
}

func (d *pgDB) release() {}

// background listens for the fleet's changes, waking the store's
// waiters (wake), and renews this process's leases (renew) until ctx
// ends.
func (d *pgDB) background(ctx context.Context, wake func(), renew func(context.Context)) {
	defer close(d.done)
	go d.renew(ctx, renew)
	wait := 100 * time.Millisecond
	for ctx.Err() == nil {
		if d.listen(ctx, wake) {
			wait = 100 * time.Millisecond
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
		wait = min(2*wait, 5*time.Second)
		// What changed while nobody listened is looked at again.
		wake()
	}
}

// listen wakes the store's waiters at each change the fleet announces,
// until the connection fails or ctx ends; true when it listened at all.
func (d *pgDB) listen(ctx context.Context, wake func()) bool {
	conn, err := pgx.Connect(ctx, d.dsn)
	if err != nil {
		return false
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		return false
	}
	wake()
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return true
		}
		wake()
	}
}

// renew renews, every third of a lease, the leases of the runs this
// process drives, and lets go of those it lost (another replica took them
// over after its lease lapsed, or they were abandoned): they stop, and
// write nothing more (Store.renewLeases).
func (d *pgDB) renew(ctx context.Context, renewLeases func(context.Context)) {
	tick := time.NewTicker(d.lease / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		renewLeases(ctx)
	}
}

// pgMigrations are the versions of the schema, in order: a database at
// version n has had the first n applied.
var pgMigrations = []string{
	// 1: runs and their events.
	`CREATE TABLE runs (
		n BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		id TEXT NOT NULL UNIQUE,
		flow TEXT NOT NULL,
		device TEXT NOT NULL DEFAULT '',
		linked BOOLEAN NOT NULL DEFAULT false,
		source TEXT NOT NULL,
		status TEXT NOT NULL,
		labels TEXT,
		started_at BIGINT NOT NULL,
		ended_at BIGINT,
		summary TEXT,
		event_count BIGINT NOT NULL DEFAULT 0,
		outcome TEXT,
		last_at BIGINT,
		step_count BIGINT NOT NULL DEFAULT 0,
		attempt INTEGER NOT NULL DEFAULT 1,
		args TEXT,
		owner TEXT
	);
	CREATE TABLE events (
		run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
		seq BIGINT NOT NULL,
		recorded_at BIGINT NOT NULL,
		kind TEXT NOT NULL,
		payload TEXT NOT NULL,
		PRIMARY KEY (run_id, seq)
	);
	CREATE INDEX runs_status ON runs (status, n);`,
	// 2: leases, and the images of the runs.
	`ALTER TABLE runs ADD COLUMN lease_until BIGINT;
	CREATE INDEX runs_lease ON runs (status, lease_until);
	CREATE TABLE run_files (
		run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
		name TEXT NOT NULL,
		data BYTEA NOT NULL,
		created_at BIGINT NOT NULL,
		PRIMARY KEY (run_id, name)
	);`,
}

// pgMigrationLock is the advisory lock the replicas migrate under.
const pgMigrationLock = 0x746f6f6c // "tool"

// migratePostgres brings db's schema to version to (of pgMigrations),
// under the advisory lock, each version in a transaction of its own.
func migratePostgres(ctx context.Context, db *sql.DB, to int) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, pgMigrationLock); err != nil {
		return err
	}
	defer conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock($1)`, pgMigrationLock)
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS toolserver_schema (version INTEGER NOT NULL)`); err != nil {
		return err
	}
	var v int
	err = conn.QueryRowContext(ctx, `SELECT version FROM toolserver_schema`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = conn.ExecContext(ctx, `INSERT INTO toolserver_schema (version) VALUES (0)`)
	}
	if err != nil {
		return err
	}
	if v > len(pgMigrations) {
		return fmt.Errorf("the database's schema is version %d, newer than this toolserver knows (%d): upgrade the toolserver", v, len(pgMigrations))
	}
	for ; v < to; v++ {
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, pgMigrations[v]); err != nil {
			tx.Rollback()
			return fmt.Errorf("version %d: %w", v+1, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE toolserver_schema SET version = $1`, v+1); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}
