package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wfhost/wfhost/api/wire"
)

// exportOf exports the run with runs export --file and returns the file and the document.
func exportOf(t *testing.T, workflow, id string) (string, wire.RunExport) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "export.json")
	expect(t, 0, "runs", "export", workflow, id, "--file", path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc wire.RunExport
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("the export is not JSON: %v\n%s", err, b)
	}
	return path, doc
}

// writeExport writes doc to a new file.
func writeExport(t *testing.T, doc wire.RunExport) string {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "edited.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReplayAnExportedRun: a run exported from a daemon replays offline against the module it
// ran on and the same workflows in another language (compatible, with the run's output), a
// module with a step renamed (diverged: exit 9, with the journal and the module's step as a
// diff), and a module that goes on past the journal (compatible, stopped at the new step).
func TestReplayAnExportedRun(t *testing.T) {
	cleanEnv(t)
	t.Setenv("WFHOST_URL", serve(t))
	t.Setenv("WFHOST_TOKEN", newTenant(t, "acme", ""))
	expect(t, 0, "deploy", testdata("examples.wasm"))
	onboarding := runOf(t, expect(t, 0, "start", "onboarding", "--input", `{"email":"ada@example.com","delayMs":1,"verifyTimeoutMs":1}`, "--wait", "--json"))
	steps := runOf(t, expect(t, 0, "start", "steps", "--input", `{"n":3}`, "--wait", "--json"))

	export, doc := exportOf(t, "onboarding", onboarding.ID)
	if doc.Format != wire.ExportFormat || doc.Run.ID != onboarding.ID || len(doc.Journal) != 5 {
		t.Fatalf("export %+v", doc)
	}
	// Without --file the document goes to stdout, JSON whatever --output says.
	if r := expect(t, 0, "runs", "export", "onboarding", onboarding.ID, "-o", "yaml"); !json.Valid([]byte(r.stdout)) {
		t.Fatalf("export on stdout is not JSON:\n%s", r.stdout)
	}

	r := expect(t, 0, "replay", "--module", testdata("examples.wasm"), export)
	matches(t, "the run's own module", r.stdout, `the run's own module`, `verdict\s+compatible`, `replayed\s+5 of 5 journal entries`,
		`ended\s+completed`, `output\s+\{"userId":"u-[0-9a-f]+","verified":false,"nudged":true,"outcome":"nudged"\}`)
	r = expect(t, 0, "replay", "--module", testdata("examples_as.wasm"), export)
	matches(t, "the AssemblyScript examples", r.stdout, `another module than the run's`, `verdict\s+compatible`, `ended\s+completed`)
	if strings.Contains(r.stdout, "differs") {
		t.Fatalf("the AssemblyScript module's output differs from the Go run's:\n%s", r.stdout)
	}

	r = expect(t, exitDiverged, "replay", "--module", testdata("examples_renamed.wasm"), export)
	matches(t, "a renamed step", r.stdout, `verdict\s+diverged`, `replayed\s+2 of 5`,
		`divergence\s+step 2: the journal holds run "send-welcome" but the workflow reached run "send-greeting"`,
		`(?m)^--- journal\n\+\+\+ module\n  0\s+run "create-user"\n  1\s+sleep "welcome-delay"\n- 2\s+run "send-welcome"\n\+ 2\s+run "send-greeting"\n`)
	t.Logf("wfhost replay --module examples_renamed.wasm:\n%s", r.stdout)
	matches(t, "a renamed step", r.stderr, `^wfhost: the module diverges from the run's journal at entry 2\n$`)
	e := expectJSONError(t, exitDiverged, "diverged", 0, "replay", "--module", testdata("examples_renamed.wasm"), export)
	matches(t, "a renamed step, JSON", e.Error.Message, `entry 2`)
	j := invoke("", "replay", "--module", testdata("examples_renamed.wasm"), export, "--json")
	var rep struct {
		Verdict    string `json:"verdict"`
		Divergence struct {
			Seq      int               `json:"seq"`
			Expected map[string]string `json:"expected"`
			Reached  map[string]string `json:"reached"`
		} `json:"divergence"`
	}
	if err := json.Unmarshal([]byte(j.stdout), &rep); err != nil || rep.Verdict != "diverged" || rep.Divergence.Seq != 2 ||
		rep.Divergence.Expected["key"] != "send-welcome" || rep.Divergence.Reached["key"] != "send-greeting" {
		t.Fatalf("--json: %v %+v\n%s", err, rep, j.stdout)
	}

	// A module without the workflow ends before the journal's first entry.
	r = expect(t, exitDiverged, "replay", "--module", testdata("hostile.wasm"), export)
	matches(t, "a module without the workflow", r.stdout, `verdict\s+diverged`, `replayed\s+0 of 5`, `- 0\s+run "create-user"\n\+ 0\s+\(the workflow ended, failed: .*onboarding`)
	t.Logf("wfhost replay --module hostile.wasm:\n%s", r.stdout)

	// The steps run with n=4: the module reaches a fourth step, which the journal lacks.
	_, sdoc := exportOf(t, "steps", steps.ID)
	sdoc.Run.Input = json.RawMessage(`{"n":4}`)
	r = expect(t, 0, "replay", "--module", testdata("examples.wasm"), writeExport(t, sdoc))
	matches(t, "a step appended", r.stdout, `verdict\s+compatible`, `replayed\s+3 of 3`, `stopped at\s+entry 3, run "s#3": new, the journal ends before it`)
	// A journal whose last step returned what the module cannot decode: every entry is
	// reached, and the run would end failed where it completed.
	bad := sdoc
	bad.Run.Input = json.RawMessage(`{"n":3}`)
	bad.Journal = append([]wire.Step(nil), sdoc.Journal...)
	bad.Journal[2].Output = json.RawMessage(`"two"`)
	r = expect(t, 0, "replay", "--module", testdata("examples.wasm"), writeExport(t, bad))
	matches(t, "an output the module cannot decode", r.stdout, `verdict\s+compatible`, `replayed\s+3 of 3`, `ended\s+failed: `, `run's output\s+\{"sum":3\} \(the run completed\)`)
	t.Logf("an output the module cannot decode:\n%s", r.stdout)
	// With n=2 the workflow ends before its journal does: a step removed.
	sdoc.Run.Input = json.RawMessage(`{"n":2}`)
	r = expect(t, exitDiverged, "replay", "--module", testdata("examples.wasm"), writeExport(t, sdoc))
	matches(t, "a step removed", r.stdout, `the workflow finished after 2 steps but the journal holds more; the next is run "s#2"`, `\+ 2\s+\(the workflow ended, output \{"sum":1\}\)`)
}

// TestReplayRefusesBadExports: replay reads a file from anywhere; a malformed, oversized,
// non-UTF-8 or inconsistent one is a usage error that says what is wrong, and a huge journal
// replays.
func TestReplayRefusesBadExports(t *testing.T) {
	cleanEnv(t)
	dir := t.TempDir()
	file := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	module := testdata("examples.wasm")
	valid := func(journal string) string {
		return `{"format":"wfhost.run-export/1","run":{"id":"r1","workflow":"steps","version":"1","status":"completed","input":{"n":1},` +
			`"retentionDays":7,"moduleDigest":"x","activations":1,"createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-01T00:00:00Z"},"journal":` + journal + `}`
	}
	for _, c := range []struct {
		name, path string
		flags      []string
		want       string
	}{
		{"no such file", filepath.Join(dir, "nope.json"), nil, `no such file`},
		{"malformed JSON", file("bad.json", `{"format":`), nil, `is not a run export`},
		{"not an object", file("array.json", `[1,2]`), nil, `is not a run export`},
		{"two values", file("two.json", valid(`[]`)+valid(`[]`)), nil, `more than one JSON value`},
		{"unknown field", file("field.json", strings.Replace(valid(`[]`), `"format"`, `"extra":1,"format"`, 1)), nil, `unknown field "extra"`},
		{"another format", file("format.json", strings.Replace(valid(`[]`), "run-export/1", "run-export/9", 1)), nil, `format "wfhost.run-export/9", want "wfhost.run-export/1"`},
		{"non-UTF-8", file("latin1.json", strings.Replace(valid(`[]`), `"r1"`, "\"r\xe91\"", 1)), nil, `is not UTF-8`},
		{"oversized", file("big.json", valid(`[]`)), []string{"--max-export-bytes", "100"}, `larger than --max-export-bytes \(100 bytes\)`},
		{"no workflow", file("nowf.json", strings.Replace(valid(`[]`), `"workflow":"steps"`, `"workflow":""`, 1)), nil, `the run has no workflow`},
		{"entries out of order", file("seq.json", valid(`[{"seq":1,"key":"s","kind":"run","status":"completed","output":0,"startedAt":"2026-01-01T00:00:00Z"}]`)), nil, `journal entry 0 has seq 1`},
		{"unknown kind", file("kind.json", valid(`[{"seq":0,"key":"s","kind":"fork","status":"completed","startedAt":"2026-01-01T00:00:00Z"}]`)), nil, `unknown kind "fork"`},
		{"a status the kind cannot have", file("status.json", valid(`[{"seq":0,"key":"s","kind":"sleep","status":"failed","startedAt":"2026-01-01T00:00:00Z"}]`)), nil, `status "failed" is not one a sleep step can have`},
	} {
		args := append([]string{"replay", "--module", module, c.path}, c.flags...)
		r := expect(t, exitUsage, args...)
		matches(t, c.name, r.stderr, `^wfhost: .*`+c.want)
	}
	expect(t, exitUsage, "replay", file("ok.json", valid(`[]`))) // no --module
	expect(t, exitUsage, "replay", "--module", filepath.Join(dir, "nope.wasm"), file("ok2.json", valid(`[]`)))
	r := expect(t, exitOther, "replay", "--module", file("not.wasm", "not wasm"), file("ok3.json", valid(`[]`)))
	matches(t, "not a module", r.stderr, `^wfhost: --module .*not.wasm: `)

	// A journal of 100,000 steps, as many as the module reaches: it replays to the end.
	const n = 100_000
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		key := "s"
		if i > 0 {
			key = fmt.Sprintf("s#%d", i)
		}
		fmt.Fprintf(&b, `{"seq":%d,"key":%q,"kind":"run","status":"completed","output":%d,"startedAt":"2026-01-01T00:00:00Z","completedAt":"2026-01-01T00:00:00Z"}`, i, key, i)
	}
	b.WriteString("]")
	huge := strings.Replace(valid(b.String()), `"input":{"n":1}`, fmt.Sprintf(`"input":{"n":%d}`, n), 1)
	start := time.Now()
	r = expect(t, 0, "replay", "--module", module, file("huge.json", huge))
	matches(t, "a huge journal", r.stdout, fmt.Sprintf(`replayed\s+%d of %d`, n, n), fmt.Sprintf(`output\s+\{"sum":%d\}`, n*(n-1)/2))
	t.Logf("a journal of %d entries (%d bytes) replayed in %v", n, len(huge), time.Since(start))
}
