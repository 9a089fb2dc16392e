package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/internal/envelope"
)

// DatabaseURL is the test Postgres: TEST_DATABASE_URL, or the local default.
func DatabaseURL() string {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
}

// Schema names a schema for this test alone (prefix_<random>) and drops it when the test ends.
func Schema(t testing.TB, prefix string) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := prefix + "_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, DatabaseURL())
		if err != nil {
			return
		}
		defer conn.Close(ctx)
		_, _ = conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
	})
	return schema
}

// Fixture reads a committed .wasm fixture from testdata/.
func Fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Root(), "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Root is the repository's root directory.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// sharedRuntime is a host runtime made once per test process.
type sharedRuntime struct {
	once sync.Once
	rt   *host.Runtime
	err  error
}

var plainRuntime, snapshotRuntime sharedRuntime

// get makes the runtime with cfg the first time, with a compilation cache that outlives the
// process.
func (s *sharedRuntime) get(t testing.TB, cfg host.Config) *host.Runtime {
	t.Helper()
	s.once.Do(func() {
		cfg.CacheDir = filepath.Join(os.TempDir(), "wfhost-test-compile-cache")
		s.rt, s.err = host.NewRuntime(context.Background(), cfg)
	})
	if s.err != nil {
		t.Fatalf("host runtime: %v", s.err)
	}
	return s.rt
}

// Runtime is the test process's host runtime, with a compilation cache that outlives it.
func Runtime(t testing.TB) *host.Runtime {
	t.Helper()
	return plainRuntime.get(t, host.Config{})
}

// WasmOpt is binaryen's wasm-opt, which durable snapshots need. Without it the test is
// skipped, unless WFHOST_REQUIRE_WASM_OPT is set (CI installs binaryen and sets it): then it
// fails.
func WasmOpt(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("wasm-opt")
	if err != nil {
		if os.Getenv("WFHOST_REQUIRE_WASM_OPT") != "" {
			t.Fatal("wasm-opt (binaryen) is required (WFHOST_REQUIRE_WASM_OPT): apt-get install -y binaryen")
		}
		t.Skip("wasm-opt (binaryen) is not installed: apt-get install -y binaryen")
	}
	return path
}

// SnapshotRuntime is a host runtime that transforms modules for durable snapshots, shared by
// the test process; without wasm-opt, see WasmOpt.
func SnapshotRuntime(t testing.TB) *host.Runtime {
	t.Helper()
	return snapshotRuntime.get(t, host.Config{Snapshots: host.SnapshotConfig{WasmOpt: WasmOpt(t)}})
}

// SecretKeys is a keyring with one new key, for an engine that stores secrets.
func SecretKeys(t testing.TB) *envelope.Keyring {
	t.Helper()
	entry, err := envelope.NewEntry("test")
	if err != nil {
		t.Fatal(err)
	}
	k, err := envelope.Parse(entry)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
