package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/internal/printable"
	"github.com/toolserver/toolserver/runs"
)

// The variables that name a fleet's run store (--store, --store-file).
const (
	envStore     = "TOOLSERVER_STORE"
	envStoreFile = "TOOLSERVER_STORE_FILE"
)

// maxDSNFile caps the file --store-file reads: a DSN is one line.
const maxDSNFile = 4 << 10

// storeFlags name a fleet's run store, a PostgreSQL database: --store DSN
// or --store-file FILE (a Kubernetes Secret's file), else
// $TOOLSERVER_STORE or $TOOLSERVER_STORE_FILE.
type storeFlags struct {
	dsn, file string
}

func (f *storeFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.dsn, "store", "", "the fleet's run store, a PostgreSQL database: `postgres://USER:PASSWORD@HOST:5432/DB` (default $"+envStore+"); shared by every replica, in place of --state-dir")
	fs.StringVar(&f.file, "store-file", "", "read --store's address from `FILE` (a Kubernetes Secret's file; default $"+envStoreFile+")")
}

// resolve returns the DSN the flags or the environment name, or "" for
// none. A file that cannot be read, or an address that is not
// PostgreSQL's, is a usage error that never quotes a password.
func (f storeFlags) resolve(cmd string, getenv func(string) string) (string, error) {
	dsn, file := f.dsn, f.file
	if dsn != "" && file != "" {
		return "", usageError("%s: give --store or --store-file, not both", cmd)
	}
	if dsn == "" && file == "" {
		dsn, file = getenv(envStore), getenv(envStoreFile)
	}
	if file != "" {
		b, err := readCapped(file, maxDSNFile)
		if err != nil {
			return "", usageError("%s: --store-file: %v", cmd, err)
		}
		dsn = strings.TrimSpace(string(b))
		if dsn == "" {
			return "", usageError("%s: --store-file %s is empty", cmd, printable.String(file))
		}
	}
	if dsn != "" && !runs.IsPostgres(dsn) {
		return "", usageError("%s: --store %s: want a PostgreSQL address, postgres://USER:PASSWORD@HOST:5432/DB (the embedded store is --state-dir DIR)", cmd, printable.String(fault.Clip(runs.RedactDSN(dsn), 200, fault.Beyond, fault.Bytewise)))
	}
	return dsn, nil
}

// readCapped reads a file of at most max bytes.
func readCapped(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s is %d bytes; an address has at most %d", printable.String(path), fi.Size(), max)
	}
	return io.ReadAll(io.LimitReader(f, max))
}

// openRunStore opens the run store serve or mcp keeps: the fleet's
// PostgreSQL at dsn (--store) or else the state directory (--state-dir),
// through runs.OpenStore; nil when neither is given. An error names the
// flag, never the password, and a --state-dir that is a PostgreSQL address
// is a usage error (it is --store's).
func openRunStore(ctx context.Context, cmd, dsn, stateDir string, opts runs.Options) (*runs.Store, error) {
	flag, where := "--store", dsn
	if dsn == "" {
		flag, where = "--state-dir", stateDir
		if runs.IsPostgres(stateDir) {
			return nil, usageError("%s: --state-dir is a directory: a PostgreSQL address is --store's", cmd)
		}
	}
	if where == "" {
		return nil, nil
	}
	st, err := runs.OpenStore(ctx, where, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", cmd, flag, err)
	}
	return st, nil
}
