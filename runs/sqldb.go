package runs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// dialect is what the store's two databases do differently: the
// embedded SQLite of one process (Open) and the PostgreSQL a fleet
// shares (OpenPostgres). Every query is written once, with ? for its
// arguments; the rest of the store does not know which it talks to.
type dialect interface {
	// rebind turns the ? of a query into the database's placeholders.
	rebind(q string) string
	// labelMatch is the condition that a run has a label: its two ? are
	// the key and the value.
	labelMatch() string
	// leaseUntil is the lease a driver takes on a run at now (Unix ms).
	leaseUntil(now int64) int64
	// shared reports whether other processes write the database too (a
	// fleet's): a run whose driver is lost is then taken over or failed
	// by another, not left for a resume by hand.
	shared() bool
	// attached returns the rule telling a run a driver runs from its
	// owner and lease, as the store stands now; rdb is the read pool,
	// token the holder's (this process's, "" for a reader).
	attached(ctx context.Context, rdb *sql.DB, token string) func(owner string, leaseUntil int64) bool
	// putFile keeps an image of run id under name, at most max bytes;
	// write is the writer pool's exec (rebound, a database that went
	// away waited out).
	putFile(ctx context.Context, write execFunc, id, name string, src io.Reader, max int64) error
	// openFile opens an image a run kept, reading rdb.
	openFile(ctx context.Context, rdb *sql.DB, id, name string) (File, error)
	// removeFiles removes a pruned run's images.
	removeFiles(ctx context.Context, id string) error
	// notify is a query to run in each transaction that changes a run,
	// its one ? the run's id, telling the other processes of the fleet;
	// "" when there are none.
	notify() string
	// retryable reports whether err is the database going away (a
	// restart, a dropped connection), which a retry may outlast.
	retryable(err error) bool
	// describe names the database for errors, never with a password.
	describe() string
	// close stops what the database runs in the background, before the
	// pools close; release lets go of what the store holds (a
	// directory's lock), after.
	close() error
	release()
}

// execFunc is a write on the writer pool, as Store.exec makes it.
type execFunc func(ctx context.Context, q string, args ...any) (sql.Result, error)

// File is an image a run kept, open for reading.
type File interface {
	io.ReadSeekCloser
	ModTime() time.Time
}

// RetryFor bounds how long a write waits out a database that went away
// (a restart, a failover) before it fails. A store keeps its own copy
// (Store.retryFor), which the tests shorten.
const RetryFor = 30 * time.Second

// exec runs a write on the writer pool.
func (s *Store) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := s.retry(ctx, func() error {
		var err error
		res, err = s.db.ExecContext(ctx, s.sql.rebind(q), args...)
		return err
	})
	return res, err
}

// row runs a query of one row on the read pool.
func (s *Store) row(ctx context.Context, q string, args ...any) *sql.Row {
	return s.rdb.QueryRowContext(ctx, s.sql.rebind(q), args...)
}

// rows runs a query on the read pool.
func (s *Store) rows(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return s.rdb.QueryContext(ctx, s.sql.rebind(q), args...)
}

// txn is a transaction of the writer pool, its queries rebound.
type txn struct {
	tx *sql.Tx
	s  *Store
}

func (t txn) exec(q string, args ...any) (sql.Result, error) {
	return t.tx.Exec(t.s.sql.rebind(q), args...)
}

func (t txn) row(q string, args ...any) *sql.Row {
	return t.tx.QueryRow(t.s.sql.rebind(q), args...)
}

// changed tells the fleet's other processes that run id changed.
func (t txn) changed(id string) error {
	if q := t.s.sql.notify(); q != "" {
		_, err := t.exec(q, id)
		return err
	}
	return nil
}

// inTx runs fn in a transaction of the writer pool and commits it; a
// database that went away is waited out (retry).
func (s *Store) inTx(ctx context.Context, fn func(txn) error) error {
	return s.retry(ctx, func() error {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if err := fn(txn{tx, s}); err != nil {
			return err
		}
		return tx.Commit()
	})
}

// retry runs fn until it succeeds, fails for good, or the database has
// been away for s.retryFor: then the error says so.
func (s *Store) retry(ctx context.Context, fn func() error) error {
	deadline := time.Now().Add(s.retryFor)
	wait := 100 * time.Millisecond
	for {
		err := fn()
		if err == nil || !s.sql.retryable(err) {
			return err
		}
		if time.Now().Add(wait).After(deadline) {
			return fmt.Errorf("%w: %s did not answer for %s: %v", ErrStoreLost, s.sql.describe(), s.retryFor, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-s.closed:
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// ErrStoreLost is a write that waited RetryFor for the database.
var ErrStoreLost = errors.New("the run store is unreachable")

// numbered turns the ? of q into $1, $2, …: PostgreSQL's placeholders.
// The store's queries hold no ? in a literal.
func numbered(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}
