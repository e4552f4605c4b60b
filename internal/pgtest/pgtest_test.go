package pgtest_test

import (
	"database/sql"
	"strconv"
	"testing"

	"github.com/toolserver/toolserver/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestCluster: a database of its own per call, over the socket; the
// password role over TCP, refused without its password.
func TestCluster(t *testing.T) {
	dsn := pgtest.DSN(t)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var one int
	if err := db.QueryRow(`SELECT 1`).Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1: %d %v", one, err)
	}
	c := pgtest.Get(t)
	pw, err := sql.Open("pgx", c.TCPDSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	if err := pw.Ping(); err != nil {
		t.Errorf("the password role over TCP: %v", err)
	}
	bad, _ := sql.Open("pgx", "postgres://"+pgtest.PasswordUser+":wrong@127.0.0.1:"+itoa(c.Port)+"/postgres?sslmode=disable")
	defer bad.Close()
	if err := bad.Ping(); err == nil {
		t.Error("a wrong password was let in")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
