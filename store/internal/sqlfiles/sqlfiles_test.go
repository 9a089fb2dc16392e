package sqlfiles_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/wfhost/wfhost/store/internal/sqlfiles"
)

func TestMigrationsInOrderWithoutGaps(t *testing.T) {
	fsys := fstest.MapFS{
		"m/002_more.sql": {Data: []byte("B")},
		"m/001_init.sql": {Data: []byte("A")},
	}
	ms, err := sqlfiles.Migrations(fsys, "m")
	if err != nil || len(ms) != 2 || ms[0].Version != 1 || ms[0].SQL != "A" || ms[1].Name != "002_more.sql" {
		t.Fatalf("migrations %+v, %v", ms, err)
	}
	for name, fsys := range map[string]fstest.MapFS{
		"a gap":         {"m/001_a.sql": {}, "m/003_c.sql": {}},
		"no number":     {"m/init.sql": {}},
		"not a number":  {"m/one_init.sql": {}},
		"no first file": {"m/002_b.sql": {}},
	} {
		if _, err := sqlfiles.Migrations(fsys, "m"); err == nil || !strings.Contains(err.Error(), "migration") {
			t.Errorf("%s: %v, want a migration error", name, err)
		}
	}
}

func TestQueriesByName(t *testing.T) {
	q, err := sqlfiles.Queries(fstest.MapFS{"q/get_run.sql": {Data: []byte("SELECT 1")}, "q/put.sql": {Data: []byte("INSERT")}}, "q")
	if err != nil || len(q) != 2 || q["get_run"] != "SELECT 1" || q["put"] != "INSERT" {
		t.Fatalf("queries %v, %v", q, err)
	}
}
