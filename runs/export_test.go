package runs

import (
	"context"
	"time"
)

// StopBackground stops a PostgreSQL store's listener and lease renewals,
// as a process paused past its lease would have them stopped.
func StopBackground(s *Store) { s.sql.close() }

// MigratePostgres brings the database at dsn to schema version to.
func MigratePostgres(ctx context.Context, dsn string, to int) error {
	st, err := openPostgres(ctx, dsn, PostgresOptions{}, to)
	if err != nil {
		return err
	}
	return st.Close()
}

// SetRetryFor sets how long s's writes wait out a database that went
// away (RetryFor), so that a test need not wait RetryFor.
func SetRetryFor(s *Store, d time.Duration) { s.retryFor = d }
