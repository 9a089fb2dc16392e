package postgres_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/postgres"
)

// migrationFiles counts the numbered files Migrate must apply.
func migrationFiles(t *testing.T) int {
	t.Helper()
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no migrations: %v", err)
	}
	return len(files)
}

// appliedVersions reads the migrations table of schema.
func appliedVersions(t *testing.T, schema string) []int {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), databaseURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.WithoutCancel(t.Context()))
	rows, err := conn.Query(t.Context(), "SELECT version FROM "+pgx.Identifier{schema, "migrations"}.Sanitize()+" ORDER BY version")
	if err != nil {
		t.Fatal(err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatal(err)
	}
	return versions
}

func wantVersions(t *testing.T, schema string) {
	t.Helper()
	got := appliedVersions(t, schema)
	n := migrationFiles(t)
	if len(got) != n {
		t.Fatalf("applied migrations %v, want 1..%d once each", got, n)
	}
	for i, v := range got {
		if v != i+1 {
			t.Fatalf("applied migrations %v, want 1..%d once each", got, n)
		}
	}
}

func TestMigrateIsIdempotent(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	s := open(t, schema)
	current, err := s.MigrationsCurrent(t.Context())
	if err != nil || current {
		t.Fatalf("MigrationsCurrent before Migrate = %v, %v; want false, nil", current, err)
	}
	for range 3 {
		if err := s.Migrate(t.Context()); err != nil {
			t.Fatalf("migrate: %v", err)
		}
		current, err := s.MigrationsCurrent(t.Context())
		if err != nil || !current {
			t.Fatalf("MigrationsCurrent after Migrate = %v, %v; want true, nil", current, err)
		}
	}
	wantVersions(t, schema)
	if err := s.EnsureTenant(t.Context(), store.DefaultTenant); err != nil {
		t.Fatalf("the migrated store does not work: %v", err)
	}
}

func TestConcurrentMigrators(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	const migrators = 4
	stores := make([]*postgres.Store, migrators)
	for i := range stores {
		stores[i] = open(t, schema)
	}
	var wg sync.WaitGroup
	errs := make([]error, migrators)
	for i, s := range stores {
		wg.Go(func() { errs[i] = s.Migrate(t.Context()) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("migrator %d: %v", i, err)
		}
	}
	wantVersions(t, schema)
}

func TestOpenRejectsBadConfig(t *testing.T) {
	t.Parallel()
	for _, schema := range []string{"Upper", "with space", `quo"te`, "semi;colon", "1starts_with_digit", strings.Repeat("x", 64)} {
		s, err := postgres.Open(t.Context(), postgres.Config{URL: databaseURL(), Schema: schema})
		if err == nil {
			s.Close()
			t.Errorf("Open accepted schema %q", schema)
		}
	}
	if s, err := postgres.Open(t.Context(), postgres.Config{URL: databaseURL(), MaxConns: -1}); err == nil {
		s.Close()
		t.Errorf("Open accepted MaxConns -1")
	}
	if s, err := postgres.Open(t.Context(), postgres.Config{}); err == nil {
		s.Close()
		t.Errorf("Open accepted an empty URL")
	}
	s, err := postgres.Open(t.Context(), postgres.Config{URL: databaseURL()})
	if err != nil {
		t.Fatalf("Open with defaults: %v", err)
	}
	defer s.Close()
	if s.Schema() != "wfhost" {
		t.Errorf("default schema %q, want wfhost", s.Schema())
	}
}

// TestNoticesStayInTheirSchema: stores on other schemas of the same database (parallel tests,
// or several installations) do not see each other's notices. Postgres delivers notices in
// commit order, so if the other schema's cancel leaked, it would arrive first.
func TestNoticesStayInTheirSchema(t *testing.T) {
	t.Parallel()
	mine, theirs := setup(t), setup(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	notices := make(chan store.Notice, 16)
	go func() { _ = mine.Listen(ctx, notices) }()
	if n := <-notices; n.Kind != store.NoticeWake {
		t.Fatalf("first notice %+v, want the wake that says Listen listens", n)
	}
	cancelNewRun := func(s *postgres.Store) string {
		t.Helper()
		if err := s.EnsureTenant(ctx, "t"); err != nil {
			t.Fatal(err)
		}
		r, _, err := s.CreateRun(ctx, store.NewRun{TenantID: "t", Workflow: "w", Version: "1", Digest: "d", Input: []byte(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CancelRun(ctx, "t", r.ID); err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	cancelNewRun(theirs)
	own := cancelNewRun(mine)
	for n := range notices {
		if n.Kind == store.NoticeCancel {
			if n.RunID != own {
				t.Fatalf("got a cancel notice for run %s of another schema", n.RunID)
			}
			return
		}
	}
}

// TestEveryQueryIsUsed keeps queries/ free of SQL that no code runs.
func TestEveryQueryIsUsed(t *testing.T) {
	t.Parallel()
	var src strings.Builder
	goFiles, _ := filepath.Glob("*.go")
	for _, f := range goFiles {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	used := map[string]bool{}
	for _, m := range regexp.MustCompile(`q\("([a-z0-9_]+)"\)`).FindAllStringSubmatch(src.String(), -1) {
		used[m[1]] = true
	}
	err := fs.WalkDir(os.DirFS("queries"), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if name := strings.TrimSuffix(path, ".sql"); !used[name] {
			t.Errorf("queries/%s is never run", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
