package api_test

import (
	"bytes"
	"mime/multipart"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

// TestReplayRunOverHTTP: POST .../runs/{id}/replay replays a live run's journal against the
// module sent, on both stores: the deployed module is compatible and stops where the run
// waits, a renamed step diverges at its entry, a multipart upload works as a raw one, nothing
// is stored and the run does not change; empty, non-wasm, oversized and foreign modules, and
// runs that are not there, get clear errors.
func TestReplayRunOverHTTP(t *testing.T) {
	t.Parallel()
	for _, kind := range bothStores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			e := setupEnvOn(t, kind, store.Limits{})
			a := newTenant(t, e, "replayer", "")
			a.mustCall("POST", "/v1/modules", testenv.Fixture(t, "examples.wasm"), 201)
			run := a.mustCall("POST", "/v1/workflows/onboarding/runs", []byte(`{"input":{"email":"a@b.c","delayMs":1,"verifyTimeoutMs":600000}}`), 201)
			runPath := "/v1/workflows/onboarding/runs/" + run["id"].(string)
			awaitWait(t, a, runPath)
			before := a.mustCall("GET", runPath, nil, 200)
			modules := string(a.call("GET", "/v1/modules", nil).body)
			// A live run's answer says what its module handles: the console offers its query
			// form from it.
			if feats, _ := before["features"].([]any); len(feats) != 2 || feats[0] != "cancel" || feats[1] != "query" {
				t.Fatalf("a live run's features: %v, want [cancel query]", before["features"])
			}

			same := a.mustCall("POST", runPath+"/replay", testenv.Fixture(t, "examples.wasm"), 200)
			stopped, _ := same["stopped"].(map[string]any)
			if same["verdict"] != "compatible" || same["ended"] != false || same["journal"] != float64(4) || stopped == nil || stopped["seq"] != float64(3) ||
				same["run"] != run["id"] || same["workflow"] != "onboarding" || same["moduleDigest"] != before["moduleDigest"] {
				t.Fatalf("the deployed module: %v, want compatible, stopped at the wait (entry 3)", same)
			}

			renamed := a.mustCall("POST", runPath+"/replay", testenv.Fixture(t, "examples_renamed.wasm"), 200)
			d, _ := renamed["divergence"].(map[string]any)
			if renamed["verdict"] != "diverged" || d == nil || d["seq"] != float64(2) ||
				d["expected"].(map[string]any)["key"] != "send-welcome" || d["reached"].(map[string]any)["key"] != "send-greeting" ||
				d["expected"].(map[string]any)["kind"] != "run" {
				t.Fatalf("a renamed step: %v, want diverged at entry 2, send-welcome expected, send-greeting reached", renamed)
			}

			// A browser's upload: the file part of a form.
			var form bytes.Buffer
			mw := multipart.NewWriter(&form)
			fw, err := mw.CreateFormFile("module", "renamed.wasm")
			if err != nil {
				t.Fatal(err)
			}
			fw.Write(testenv.Fixture(t, "examples_renamed.wasm"))
			mw.Close()
			r := callWith(t, e.srv, "POST", runPath+"/replay", a.token, form.Bytes(), map[string]string{"Content-Type": mw.FormDataContentType()})
			if r.status != 200 || r.json(t)["verdict"] != "diverged" {
				t.Fatalf("multipart: %d %.300s", r.status, r.body)
			}

			// Nothing was stored and the run is as it was.
			if got := string(a.call("GET", "/v1/modules", nil).body); got != modules {
				t.Fatalf("modules changed: %s, were %s", got, modules)
			}
			after := a.mustCall("GET", runPath, nil, 200)
			if after["status"] != before["status"] || after["moduleDigest"] != before["moduleDigest"] || after["updatedAt"] != before["updatedAt"] {
				t.Fatalf("the run changed: %v, was %v", after, before)
			}

			hostile := []struct {
				name, path string
				body       []byte
				status     int
				code, says string
			}{
				{"no body", runPath + "/replay", nil, 400, "invalid_request", "the request body is required"},
				{"JSON, not wasm", runPath + "/replay", []byte(`{"module":"x"}`), 400, "invalid_request", ""},
				{"bytes that are not UTF-8 nor wasm", runPath + "/replay", []byte("\xff\xfe\x00asm\x80\x81"), 400, "invalid_request", ""},
				{"a wasm header and nothing else", runPath + "/replay", []byte("\x00asm\x01\x00\x00\x00"), 400, "invalid_request", ""},
				{"a module that declares other workflows", runPath + "/replay", testenv.Fixture(t, "probe.wasm"), 400, "invalid_request", "declares no workflow"},
				{"a run that is not there", "/v1/workflows/onboarding/runs/00000000-0000-4000-8000-000000000000/replay", testenv.Fixture(t, "examples.wasm"), 404, "not_found", ""},
				{"a run of another workflow", "/v1/workflows/steps/runs/" + run["id"].(string) + "/replay", testenv.Fixture(t, "examples.wasm"), 404, "not_found", ""},
				{"a hostile run id", "/v1/workflows/onboarding/runs/%27%3B%20DROP%20TABLE%20runs%3B--/replay", testenv.Fixture(t, "examples.wasm"), 404, "not_found", ""},
				{"a query parameter", runPath + "/replay?replace=true", testenv.Fixture(t, "examples.wasm"), 400, "invalid_request", "unknown query parameter"},
			}
			for _, c := range hostile {
				r := a.call("POST", c.path, c.body)
				if r.status != c.status || r.errorCode(t) != c.code || !strings.Contains(string(r.body), c.says) || len(r.body) > 2000 {
					t.Errorf("%s: %d %.300s, want %d %s", c.name, r.status, r.body, c.status, c.code)
				}
			}

			// The tenant's module limit bounds the upload, as a deploy's.
			if r := call(t, e.srv, "PATCH", "/v1/tenants/replayer", adminToken, []byte(`{"limits":{"maxModuleBytes":1024}}`)); r.status != 200 {
				t.Fatalf("set limits: %d %s", r.status, r.body)
			}
			if r := a.call("POST", runPath+"/replay", testenv.Fixture(t, "examples.wasm")); r.status != 413 || r.errorCode(t) != "too_large" || !strings.Contains(string(r.body), "limit is 1024") {
				t.Fatalf("over the tenant's module limit: %d %.300s", r.status, r.body)
			}
		})
	}
}
