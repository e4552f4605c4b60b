package runs

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// schema is the store's tables. The runs table keeps, per run, what a
// list shows without reading a log: its state (column status), outcome,
// status object (summary), counts and times. args are the run's recorded
// arguments (a run started by POST /v1/runs), which a resume re-drives;
// owner is the token of the holder driving it, if any.
const schema = `
CREATE TABLE IF NOT EXISTS runs (
	n INTEGER PRIMARY KEY AUTOINCREMENT,
	id TEXT NOT NULL UNIQUE,
	flow TEXT NOT NULL,
	device TEXT NOT NULL DEFAULT '',
	linked INTEGER NOT NULL DEFAULT 0,
	source TEXT NOT NULL,
	status TEXT NOT NULL,
	labels TEXT,
	started_at INTEGER NOT NULL,
	ended_at INTEGER,
	summary TEXT,
	event_count INTEGER NOT NULL DEFAULT 0,
	outcome TEXT,
	last_at INTEGER,
	step_count INTEGER NOT NULL DEFAULT 0,
	attempt INTEGER NOT NULL DEFAULT 1,
	args TEXT,
	owner TEXT,
	lease_until INTEGER
);
CREATE TABLE IF NOT EXISTS events (
	run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	seq INTEGER NOT NULL,
	recorded_at INTEGER NOT NULL,
	kind TEXT NOT NULL,
	payload TEXT NOT NULL,
	PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS meta (
	key TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_status ON runs(status, n);
`

// schemaVersion is the store's PRAGMA user_version: 1 since runs took
// the states and kinds of docs/control-plane.md, "The run"; 2 since a
// run's owner holds a lease (upgrade).
const schemaVersion = 2

func (s *Store) migrate(d *sqliteDB) error {
	if err := s.upgrade(); err != nil {
		return err
	}
	return s.lowerIDs(d)
}

// lowerIDs gives the runs a store recorded under an id with upper-case
// letters (before ids were kept lower-case, docs/control-plane.md, "Run
// ids") their canonical id, with their events and kept images, so a
// lookup finds them. A run whose lower-case id another run already holds
// (the same UUID started twice in two cases) keeps its id.
func (s *Store) lowerIDs(d *sqliteDB) error {
	ids, err := s.ids(`SELECT id FROM runs WHERE id != lower(id) AND lower(id) NOT IN (SELECT id FROM runs)`)
	if err != nil {
		return err
	}
	for _, id := range ids {
		low := CanonicalID(id)
		tx, err := s.db.Begin()
		if err != nil {
			return err
		}
		// The events refer to the run's id; the check waits for the commit.
		_, err = tx.Exec(`PRAGMA defer_foreign_keys = ON`)
		if err == nil {
			_, err = tx.Exec(`UPDATE runs SET id = ? WHERE id = ?`, low, id)
		}
		if err == nil {
			_, err = tx.Exec(`UPDATE events SET run_id = ? WHERE run_id = ?`, low, id)
		}
		if err == nil {
			err = tx.Commit()
		}
		if err != nil {
			tx.Rollback()
			return fmt.Errorf("run %s: keeping it under %s: %w", id, low, err)
		}
		if err := os.Rename(d.filesDir(id), d.filesDir(low)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("run %s: moving its images: %w", id, err)
		}
	}
	return nil
}

// upgrade creates the schema, and brings a store written before runs
// took the states and kinds of docs/control-plane.md (user_version 0) to
// schemaVersion: its runs get the new columns, their states and status
// objects, and their events the new kinds, in one transaction.
func (s *Store) upgrade() error {
	var v int
	if err := s.db.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
		return err
	}
	if v >= schemaVersion {
		_, err := s.db.Exec(schema)
		return err
	}
	if v == 1 {
		_, err := s.db.Exec(`ALTER TABLE runs ADD COLUMN lease_until INTEGER; PRAGMA user_version = 2`)
		return err
	}
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	old, err := hasTable(tx, "runs")
	if err != nil {
		return err
	}
	if old {
		for _, c := range []string{"outcome TEXT", "last_at INTEGER", "step_count INTEGER NOT NULL DEFAULT 0", "attempt INTEGER NOT NULL DEFAULT 1", "args TEXT", "owner TEXT", "lease_until INTEGER"} {
			if _, err := tx.Exec(`ALTER TABLE runs ADD COLUMN ` + c); err != nil {
				return fmt.Errorf("adding column %s: %w", c, err)
			}
		}
	}
	if _, err := tx.Exec(schema); err != nil {
		return err
	}
	if old {
		if err := upgradeRuns(tx); err != nil {
			return err
		}
	}
	if _, err := tx.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, schemaVersion)); err != nil {
		return err
	}
	return tx.Commit()
}

func hasTable(tx *sql.Tx, name string) (bool, error) {
	var n int
	err := tx.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, name).Scan(&n)
	return n > 0, err
}

// legacySummary is a finished run's summary as a store of user_version 0
// kept it.
type legacySummary struct {
	Passed     int     `json:"passed"`
	Failed     int     `json:"failed"`
	Skipped    int     `json:"skipped"`
	Errored    int     `json:"errored"`
	DurationMs float64 `json:"durationMs"`
	Reason     string  `json:"reason"`
}

// legacyStatus is the status object of a run that a store of
// user_version 0 ended with status and summary sum: passed and failed
// runs completed (their outcome), errored and interrupted ones failed,
// cancelled ones were abandoned.
func legacyStatus(status string, sum legacySummary) Status {
	switch status {
	case "passed", "failed":
		return Status{State: Completed, Output: &Output{OK: status == "passed", Passed: sum.Passed, Failed: sum.Failed, Errored: sum.Errored, Skipped: sum.Skipped, DurationMs: sum.DurationMs}}
	case "cancelled":
		return Status{State: Abandoned, Reason: sum.Reason}
	}
	st := Status{State: Failed, Error: sum.Reason}
	if st.Error == "" {
		st.Error = "the run ended " + status
	}
	return st
}

func upgradeRuns(tx *sql.Tx) error {
	for _, k := range [][2]string{{"run_started", KindRunStarted}, {"step", KindStepCompleted}, {"snapshot", KindSnapshotCompared}} {
		if _, err := tx.Exec(`UPDATE events SET kind = ? WHERE kind = ?`, k[1], k[0]); err != nil {
			return err
		}
	}
	if _, err := tx.Exec(`UPDATE runs SET
		step_count = (SELECT count(*) FROM events WHERE run_id = runs.id AND kind = ?),
		last_at = coalesce((SELECT max(recorded_at) FROM events WHERE run_id = runs.id), started_at)`, KindStepCompleted); err != nil {
		return err
	}
	rows, err := tx.Query(`SELECT id, status, coalesce(summary, '') FROM runs WHERE status != ?`, Running)
	if err != nil {
		return err
	}
	type ended struct {
		id string
		st Status
	}
	var all []ended
	for rows.Next() {
		var id, status, sum string
		if err := rows.Scan(&id, &status, &sum); err != nil {
			rows.Close()
			return err
		}
		var ls legacySummary
		json.Unmarshal([]byte(sum), &ls)
		all = append(all, ended{id, legacyStatus(status, ls)})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, e := range all {
		payload, _ := json.Marshal(e.st)
		var outcome any
		if o := e.st.Outcome(); o != "" {
			outcome = o
		}
		if _, err := tx.Exec(`UPDATE runs SET status = ?, outcome = ?, summary = ? WHERE id = ?`, e.st.State, outcome, string(payload), e.id); err != nil {
			return err
		}
		if _, err := tx.Exec(`UPDATE events SET kind = ?, payload = ? WHERE run_id = ? AND kind = 'run_ended'`, terminalKind(e.st.State), string(payload), e.id); err != nil {
			return err
		}
	}
	return nil
}
