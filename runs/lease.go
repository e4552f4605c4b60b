package runs

import (
	"context"
	"fmt"
	"time"
)

// The leases of the runs and the liveness of the store, over either
// database: the engine's, not PostgreSQL's. An embedded store's lease
// never lapses (its holder's lock on the directory is its lease), so
// there a renewal changes nothing, and no background renews.

// renewLeases renews the lease of each run this process drives, and
// ends the recorders of those it no longer owns (another replica took
// them over, or they were abandoned). A run it owns in the store but no
// longer drives (its end could not be recorded) is not renewed: its lease
// lapses and another replica takes it over.
func (s *Store) renewLeases(ctx context.Context) {
	for _, r := range s.driving() {
		res, err := s.db.ExecContext(ctx, s.sql.rebind(`UPDATE runs SET lease_until = ? WHERE id = ? AND owner = ? AND status = ?`),
			s.sql.leaseUntil(time.Now().UnixMilli()), r.id, s.token, Running)
		if err != nil {
			continue // the store is away: the next renewal tries again
		}
		if n, err := res.RowsAffected(); err == nil && n == 0 {
			r.lost()
		}
	}
}

// Shared reports whether other processes share the store (a fleet's
// PostgreSQL): their runs may need taking over.
func (s *Store) Shared() bool { return s.sql.shared() }

// Ping checks that the store's database answers (a fleet's readiness).
func (s *Store) Ping(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("%s does not answer: %w", s.sql.describe(), err)
	}
	return nil
}

// Lapsed lists the running runs nobody drives any more (their owner's
// lease lapsed, or their driver stopped under them): a process takes over
// those it can re-drive (Resumable) and fails the others.
func (s *Store) Lapsed(ctx context.Context) ([]Run, error) {
	rows, err := s.rows(ctx, `SELECT `+runColumns+` FROM runs WHERE status = ? AND (owner IS NULL OR lease_until < ?) ORDER BY n LIMIT 100`, Running, time.Now().UnixMilli())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	drive(s.sql.attached(ctx, s.rdb, s.token), out)
	return out, rows.Err()
}
