package host

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/abi"
)

// Both transports and the load checks are built from abi.HostFuncs: every row needs a verb,
// and a verb no row names would never be reachable.
func TestEveryHostFuncHasAVerb(t *testing.T) {
	t.Parallel()
	var rows []string
	for _, f := range abi.HostFuncs {
		rows = append(rows, f.Name)
	}
	slices.Sort(rows)
	if got := slices.Sorted(maps.Keys(verbs)); !slices.Equal(got, rows) {
		t.Fatalf("verbs %q, abi.HostFuncs %q", got, rows)
	}
	// The import tables the load checks read are the rows' signatures, every one natively and
	// all but take under Extism.
	if len(nativeImports) != len(abi.HostFuncs) || len(extismImports) != len(abi.HostFuncs)-1 {
		t.Fatalf("%d native and %d Extism imports for %d host functions", len(nativeImports), len(extismImports), len(abi.HostFuncs))
	}
	if _, ok := extismImports[abi.FuncTake]; ok {
		t.Fatal("Extism modules may import take")
	}
	if got := sigString(nativeImports[abi.FuncSleep].params, nativeImports[abi.FuncSleep].results); got != "(i32, i32, i64) -> (i64)" {
		t.Fatalf("sleep natively: %s", got)
	}
	if got := sigString(extismImports[abi.FuncLog].params, extismImports[abi.FuncLog].results); got != "(i32, i64) -> ()" {
		t.Fatalf("log under Extism: %s", got)
	}
}

// A description is refused at upload, with its fault named, for everything a store would
// refuse at deploy or a host could not follow. Before abi.DecodeDescription, a version holding
// a NUL and a retentionDays past 2^31-1 passed the upload and were refused by Postgres at
// deploy.
func TestDescriptionRefusedAtUpload(t *testing.T) {
	t.Parallel()
	// wf is one workflow with extra fields; a second "version" replaces the first (the later key wins).
	wf := func(fields string) string { return `{"workflows":[{"name":"w","version":"1"` + fields + `}]}` }
	for raw, fault := range map[string]string{
		wf(`,"version":"1\u0000"`):        "NUL",
		wf(`,"retentionDays":2147483648`): "retentionDays 2147483648 out of range",
		wf(`,"retry":{"attempts":-1}`):    "retry attempts -1",
		wf(`,"triggers":["a#b"]`):         `contains "#"`,
		`{"workflows":[]}`:                "declares no workflow",
	} {
		var m Module
		err := m.describeAs([]byte(raw))
		if !errors.Is(err, ErrInvalidModule) || !strings.Contains(err.Error(), fault) {
			t.Errorf("%s: error %v, want ErrInvalidModule naming %q", raw, err, fault)
		}
	}
	var m Module
	if err := m.describeAs([]byte(wf(`,"retentionDays":2147483647`))); err != nil || m.Description.Workflows[0].RetentionDays != 2147483647 {
		t.Fatalf("the largest retention: %+v %v", m.Description, err)
	}
}
