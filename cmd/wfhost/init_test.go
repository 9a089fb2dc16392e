package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wfhost/wfhost/api/wire"
	"github.com/wfhost/wfhost/internal/testenv"
)

// `wfhost init` (issue 17): a project made outside this repository builds with the real
// toolchain and its module deploys and runs to completion on a real engine and Postgres.

// TestInitProjectsBuildDeployAndRun makes a project for each language in a temporary directory
// outside the repository, builds it with `make` as its README says, deploys the module with
// `wfhost deploy`, and runs its workflow through the step, the sleep and the event wait. A
// language whose toolchain is missing is skipped, unless WFHOST_REQUIRE_TOOLCHAINS is set (CI
// installs them all and sets it): then it fails.
func TestInitProjectsBuildDeployAndRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds four projects with their toolchains")
	}
	cleanEnv(t)
	t.Setenv("WFHOST_URL", serve(t))
	root := testenv.Root()
	for _, lang := range initLangNames() {
		t.Run(lang, func(t *testing.T) {
			env := initToolchain(t, lang)
			dir := filepath.Join(t.TempDir(), "hello-"+lang)
			if rel, err := filepath.Rel(root, dir); err == nil && !strings.HasPrefix(rel, "..") {
				t.Fatalf("the project %s is inside the repository %s", dir, root)
			}
			expect(t, 0, "init", "--lang", lang, "--sdk", root, dir)

			build := exec.Command("make")
			build.Dir = dir
			build.Env = append(os.Environ(), env...)
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("make in the %s project: %v\n%s", lang, err, out)
			}

			token := newTenant(t, "init-"+lang, "")
			expect(t, 0, "deploy", filepath.Join(dir, "hello-"+lang+".wasm"), "--token", token)
			var run wire.Run
			if err := json.Unmarshal([]byte(expect(t, 0, "start", "hello", "--input", `{"name": "Ada"}`, "--token", token, "--json").stdout), &run); err != nil {
				t.Fatal(err)
			}
			// Sent before the run reaches its wait, the event is kept for it (ABI.md §4.7).
			expect(t, 0, "signal", "hello", run.ID, "approve", "--payload", `{"note": "ok"}`, "--token", token)
			testenv.Await(t, time.Minute, func() error {
				if err := json.Unmarshal([]byte(expect(t, 0, "runs", "get", "hello", run.ID, "--token", token, "--json").stdout), &run); err != nil {
					t.Fatal(err)
				}
				switch run.Status {
				case wire.RunCompleted:
					return nil
				case wire.RunFailed, wire.RunCancelled, wire.RunNondeterministic:
					t.Fatalf("run %s ended %s: %+v", run.ID, run.Status, run.Error)
				}
				return fmt.Errorf("run %s is %s", run.ID, run.Status)
			})
			var got any
			if err := json.Unmarshal(run.Output, &got); err != nil {
				t.Fatal(err)
			}
			want := map[string]any{"greeting": "Hello, Ada!", "approved": true, "note": "ok"}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("output %s, want %v", run.Output, want)
			}
		})
	}
}

// initToolchain is the environment `make` needs for lang's project, or skips the test (fails
// it under WFHOST_REQUIRE_TOOLCHAINS) when the toolchain is missing. GOPROXY=off and cargo's
// offline mode show that the Go and Rust builds need no network; npm fetches the compiler.
func initToolchain(t *testing.T, lang string) []string {
	t.Helper()
	missing := func(what string) {
		t.Helper()
		if os.Getenv("WFHOST_REQUIRE_TOOLCHAINS") != "" {
			t.Fatalf("%s is required (WFHOST_REQUIRE_TOOLCHAINS): .ci/toolchain-*.sh install it", what)
		}
		t.Skipf("%s is not installed", what)
	}
	if _, err := exec.LookPath("make"); err != nil {
		missing("make")
	}
	// GOWORK=off: a go.work above the temporary directory must not take the project in.
	env := []string{"GOWORK=off", "GOFLAGS=-mod=readonly", "GOPROXY=off"}
	switch lang {
	case "tinygo":
		tinygoRoot := os.Getenv("TINYGOROOT")
		if tinygoRoot == "" {
			tinygoRoot = "/opt/tinygo"
		}
		if _, err := os.Stat(filepath.Join(tinygoRoot, "build", "tinygo")); err != nil {
			missing("TinyGo (guest-sdk/go/tinygo/install.sh)")
		}
		env = append(env, "TINYGOROOT="+tinygoRoot)
	case "rust":
		// Debian's cargo and rustc, as .ci/toolchain-rust.sh installs them, ahead of a rustup
		// toolchain without the wasm32 target earlier on PATH.
		cargo, rustc := "/usr/bin/cargo", "/usr/bin/rustc"
		if _, err := os.Stat(cargo); err != nil {
			if cargo, err = exec.LookPath("cargo"); err != nil {
				missing("cargo")
			}
			if rustc, err = exec.LookPath("rustc"); err != nil {
				missing("rustc")
			}
		}
		sysroot, err := exec.Command(rustc, "--print", "sysroot").Output()
		if err != nil {
			missing("rustc")
		}
		if _, err := os.Stat(filepath.Join(strings.TrimSpace(string(sysroot)), "lib", "rustlib", "wasm32-unknown-unknown")); err != nil {
			missing("the wasm32-unknown-unknown standard library for " + rustc)
		}
		env = append(env, "CARGO="+cargo, "RUSTC="+rustc, "CARGO_NET_OFFLINE=true")
	case "assemblyscript":
		for _, tool := range []string{"node", "npm"} {
			if _, err := exec.LookPath(tool); err != nil {
				missing(tool)
			}
		}
	}
	return env
}

// TestInitRefuses: init writes nothing and says why for a bad language, a DIR that is not new
// or empty, a checkout that is not one and a checkout path the build files cannot carry.
func TestInitRefuses(t *testing.T) {
	cleanEnv(t)
	root := testenv.Root()
	tmp := t.TempDir()
	full := filepath.Join(tmp, "full")
	if err := os.MkdirAll(filepath.Join(full, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(tmp, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	spaced := filepath.Join(tmp, "a checkout")
	if err := os.Symlink(root, spaced); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(tmp, "fresh")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"init", fresh}, `Required flag "lang" not set`},
		{[]string{"init", "--lang", "cobol", "--sdk", root, fresh}, `--lang "cobol": want one of assemblyscript, go, rust, tinygo`},
		{[]string{"init", "--lang", "GO", "--sdk", root, fresh}, `--lang "GO"`},
		{[]string{"init", "--lang", "go\xff", "--sdk", root, fresh}, `--lang "go\xff"`},
		{[]string{"init", "--lang", "go", "--sdk", root}, "init needs 1 argument(s): DIR"},
		{[]string{"init", "--lang", "go", "--sdk", root, fresh, "other"}, "init needs 1 argument(s): DIR"},
		{[]string{"init", "--lang", "go", "--sdk", root, ""}, "DIR is empty"},
		{[]string{"init", "--lang", "go", "--sdk", root, full}, "is not empty (it holds .git)"},
		{[]string{"init", "--lang", "rust", "--sdk", root, file}, "exists and is not a directory"},
		{[]string{"init", "--lang", "go", "--sdk", root, filepath.Join(file, "sub")}, "not a directory"},
		{[]string{"init", "--lang", "go", "--sdk", root, filepath.Join(tmp, strings.Repeat("x", 300))}, "file name too long"},
		{[]string{"init", "--lang", "go", "--sdk", tmp, fresh}, "is not a wfhost checkout with this SDK: guest-sdk/go/go.mod is missing"},
		{[]string{"init", "--lang", "assemblyscript", "--sdk", filepath.Join(tmp, "nowhere"), fresh}, "is not a wfhost checkout"},
		{[]string{"init", "--lang", "go", "--sdk", "/tmp/\xff\xfe", fresh}, "is not UTF-8"},
		{[]string{"init", "--lang", "go", "--sdk", filepath.Join(tmp, "$(rm -rf ~)"), fresh}, "which the project's build files cannot carry"},
		{[]string{"init", "--lang", "go", "--sdk", strings.Repeat("a/", 5000), fresh}, "is not a wfhost checkout"},
	} {
		r := invoke("", c.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) || r.stdout != "" {
			t.Errorf("wfhost %q exited %d\nstdout: %s\nstderr: %s\nwant exit %d and %q", c.args, r.code, r.stdout, r.stderr, exitUsage, c.want)
		}
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("a refused init left %s behind: %v", fresh, err)
	}
	// A symbolic link is resolved: the checkout's real path is what the files name.
	expect(t, 0, "init", "--lang", "go", "--sdk", spaced, filepath.Join(tmp, "linked"))
	if gomod, err := os.ReadFile(filepath.Join(tmp, "linked", "go.mod")); err != nil || !strings.Contains(string(gomod), filepath.Join(root, "guest-sdk", "go")) {
		t.Errorf("go.mod through a link: %v\n%s", err, gomod)
	}
	// Without --sdk the checkout is the one around the binary; a test binary is in none.
	expectJSONError(t, exitUsage, "usage", 0, "init", "--lang", "go", fresh)
}

// TestInitWritesAnEmptyDirectory: an existing empty DIR is used, a DIR whose name no toolchain
// takes as a package name gives one that all do, and the files name the checkout's SDK.
func TestInitWritesAnEmptyDirectory(t *testing.T) {
	cleanEnv(t)
	root := testenv.Root()
	dir := filepath.Join(t.TempDir(), "9 Lives!\xff")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r := expect(t, 0, "init", "--lang", "rust", "--sdk", root, dir)
	if !strings.Contains(r.stdout, "wfhost deploy wf-9-lives.wasm") {
		t.Errorf("init printed:\n%s", r.stdout)
	}
	cargo, err := os.ReadFile(filepath.Join(dir, "Cargo.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`name = "wf-9-lives"`, fmt.Sprintf("wfhost = { path = %q }", filepath.Join(root, "guest-sdk", "rust"))} {
		if !strings.Contains(string(cargo), want) {
			t.Errorf("Cargo.toml lacks %s:\n%s", want, cargo)
		}
	}
	// The same DIR again: it is not empty now.
	expect(t, exitUsage, "init", "--lang", "rust", "--sdk", root, dir)
}

func TestProjectName(t *testing.T) {
	for base, want := range map[string]string{
		"hello":                   "hello",
		"My Workflow":             "my-workflow",
		"--a__b..c--":             "a-b-c",
		"42":                      "wf-42",
		"":                        "workflow",
		"日本":                      "workflow",
		"wfhost":                  "wfhost-workflow",
		"test":                    "test",
		"fmt":                     "fmt",
		strings.Repeat("ab-", 40): strings.Repeat("ab-", 16) + "ab",
	} {
		if got := projectName(base); got != want {
			t.Errorf("projectName(%q) = %q, want %q", base, got, want)
		}
	}
}
