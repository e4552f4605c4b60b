package runs

import (
	"context"
	"errors"
	"time"
)

// Options are the settings of OpenStore.
type Options struct {
	// Keep is how many finished runs the store keeps (0: DefaultKeep).
	Keep int
	// Lease is a replica's hold on a run it drives (0: DefaultLease),
	// renewed every third of it: a PostgreSQL store's only (an embedded
	// store's holder holds its runs while it holds the directory).
	Lease time.Duration
	// Reader opens a directory's store to read it only, beside the
	// process that may hold it (OpenReader), as the reading runs commands
	// do. A PostgreSQL store is read and written by any process: there
	// Reader changes nothing.
	Reader bool
}

// OpenStore opens the run store at where, the one choice between the
// two databases: a PostgreSQL address (postgres://… or postgresql://…,
// IsPostgres) is the fleet's database (OpenPostgres, with opts.Keep and
// opts.Lease); anything else is a state directory, held (Open, keeping
// opts.Keep) or, with opts.Reader, read beside its holder (OpenReader).
// serve, mcp and the runs commands open their store through it. Its
// errors are those of the constructor it chose, as they are, so that the
// caller prefixes the flag that named where: IsPostgres(where) tells
// --store from --state-dir.
func OpenStore(ctx context.Context, where string, opts Options) (*Store, error) {
	switch {
	case where == "":
		return nil, errors.New("run store: no directory and no PostgreSQL address given")
	case IsPostgres(where):
		return OpenPostgres(ctx, where, PostgresOptions{Keep: opts.Keep, Lease: opts.Lease})
	case opts.Reader:
		return OpenReader(where)
	}
	return Open(where, opts.Keep)
}
