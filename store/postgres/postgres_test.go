package postgres

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/pgtest"
	"github.com/agenteval/agenteval/results"
	"github.com/agenteval/agenteval/store"
	"github.com/agenteval/agenteval/store/sqlstore"
	"github.com/agenteval/agenteval/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m).Run()) }

func open(t *testing.T, url string, opt Options) *DB {
	t.Helper()
	s, err := Open(url, opt)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The store contract, on a real PostgreSQL: a new database per test.
func TestContract(t *testing.T) {
	srv := pgtest.Shared(t)
	urls := map[store.Store]string{}
	storetest.Run(t, storetest.Backend{
		Open: func(t *testing.T) store.Store {
			u := srv.NewDatabase(t)
			s := open(t, u, Options{})
			urls[s] = u
			return s
		},
		Again: func(t *testing.T, s store.Store) store.Store { return open(t, urls[s], Options{}) },
		Reject: func(t *testing.T, s store.Store, testID string) {
			db := s.(*DB).SQL()
			for _, q := range []string{
				`CREATE FUNCTION reject() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN IF NEW.test_id = '` + testID + `' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$`,
				`CREATE TRIGGER reject BEFORE INSERT ON results FOR EACH ROW EXECUTE FUNCTION reject()`,
			} {
				if _, err := db.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
		},
	})
}

// The tables are in the agenteval schema, at the current version; two
// processes opening a new database at once build the schema once.
func TestSchema(t *testing.T) {
	u := pgtest.Shared(t).NewDatabase(t)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			s, err := Open(u, Options{})
			if err == nil {
				err = s.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	s := open(t, u, Options{})
	defer s.Close()
	var v int
	var tables string
	db := s.SQL()
	if err := db.QueryRow(`SELECT version FROM agenteval.agenteval_schema`).Scan(&v); err != nil || v != sqlstore.SchemaVersion {
		t.Errorf("schema version %d, %v; want %d", v, err, sqlstore.SchemaVersion)
	}
	db.QueryRow(`SELECT string_agg(table_name, ',' ORDER BY table_name) FROM information_schema.tables WHERE table_schema = 'agenteval'`).Scan(&tables)
	if tables != "agenteval_schema,labels,results,run_shards,runs,tags" {
		t.Errorf("tables in schema agenteval: %s", tables)
	}
	// Another schema, named in the URL.
	other := open(t, u+"&search_path=team_b", Options{})
	defer other.Close()
	ctx := context.Background()
	if err := other.StartRun(ctx, &results.Header{RunID: "b1", Started: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if runs, _ := s.Runs(ctx, store.ListOptions{}); len(runs) != 0 {
		t.Errorf("schema agenteval sees team_b's runs: %d", len(runs))
	}
}

// A read-only store of an empty database says so; it refuses writes.
func TestReadOnly(t *testing.T) {
	u := pgtest.Shared(t).NewDatabase(t)
	if _, err := Open(u, Options{ReadOnly: true}); err == nil || !strings.Contains(err.Error(), "holds no runs yet (schema agenteval)") {
		t.Errorf("read-only open of an empty database: %v", err)
	}
	w := open(t, u, Options{})
	ctx := context.Background()
	w.StartRun(ctx, &results.Header{RunID: "r1", Started: time.Now()})
	w.AddResult("r1", &agenteval.Result{TestID: "a", Verdict: agenteval.VerdictPass})
	if err := w.FinishRun(ctx, "r1", store.Finish{Status: store.Done}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	r := open(t, u, Options{ReadOnly: true})
	defer r.Close()
	if run, err := r.Run(ctx, "r1"); err != nil || run.Total != 1 {
		t.Errorf("read-only: %+v, %v", run, err)
	}
	if err := r.Tag(ctx, "r1", "x"); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("tag on a read-only store: %v", err)
	}
}

// The password of the URL appears in no message: not in Name, not in the
// errors of a refused login, an unknown database or a server that is not
// there.
func TestPasswordNeverShown(t *testing.T) {
	srv := pgtest.Shared(t)
	good := srv.URL("postgres")
	for _, u := range []string{
		strings.Replace(good, pgtest.Password, "wrong-"+pgtest.Password, 1),
		strings.Replace(good, "/postgres?", "/nope?", 1),
		strings.Replace(good, "127.0.0.1:", "127.0.0.1:1", 1),
		"postgres://agenteval:" + pgtest.Password + "@127.0.0.1:1/x?sslmode=disable&connect_timeout=2",
		"postgres://agenteval:" + pgtest.Password + "@[::1/x",
	} {
		_, err := Open(u, Options{ReadOnly: true})
		if err == nil {
			t.Errorf("%s opened", Name(u))
			continue
		}
		if strings.Contains(err.Error(), pgtest.Password) {
			t.Errorf("the password is in the error: %v", err)
		}
		if !strings.Contains(err.Error(), "open store ") {
			t.Errorf("error does not say what failed: %v", err)
		}
	}
	if n, want := Name(good), fmt.Sprintf("postgres://agenteval@127.0.0.1:%d/postgres", srv.Port); n != want {
		t.Errorf("Name = %s, want %s", n, want)
	}
}

func TestFirstSchema(t *testing.T) {
	for in, want := range map[string]string{
		"team":            "team",
		" team , public":  "team",
		`"Team ""B"""`:    `Team "B"`,
		`"$user", public`: "",
		"$user":           "",
	} {
		if got := firstSchema(in); got != want {
			t.Errorf("firstSchema(%q) = %q, want %q", in, got, want)
		}
	}
}
