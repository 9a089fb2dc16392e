package api_test

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

// documentedBody is what the document says of an operation's request body.
type documentedBody struct {
	required   bool
	mediaTypes []string
}

// documentedBodies reads, from openapi.json itself, every operation that documents a request
// body, as "METHOD /path".
func documentedBodies(t *testing.T) map[string]documentedBody {
	t.Helper()
	raw, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			RequestBody *struct {
				Required bool                       `json:"required"`
				Content  map[string]json.RawMessage `json:"content"`
			} `json:"requestBody"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]documentedBody{}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			if op.RequestBody != nil {
				b := documentedBody{required: op.RequestBody.Required}
				for mt := range op.RequestBody.Content {
					b.mediaTypes = append(b.mediaTypes, mt)
				}
				out[strings.ToUpper(method)+" "+path] = b
			}
		}
	}
	return out
}

// TestRequiredBodiesAreRequired: every operation whose request body the document marks
// required refuses a request without one (no body, an empty one, or white space, with or
// without a JSON Content-Type) with a 400 that says the body is required, rather than acting
// on the zero value of a body never sent. The table is the document's own, so a body newly
// documented as required is held to it. An operation whose body's fields are all optional
// (restart) documents the body as not required, and a request without one succeeds.
func TestRequiredBodiesAreRequired(t *testing.T) {
	t.Parallel()
	e := setupEnv(t, store.Limits{})
	a := newTenant(t, e, "acme", "")
	a.mustCall("POST", "/v1/modules", testenv.Fixture(t, "examples.wasm"), 201)

	bodies := documentedBodies(t)
	param := regexp.MustCompile(`\{[^}]+\}`)
	// A run's routes (a dry replay's module) need a run that is there: a body missing is
	// the answer, not the run.
	started := a.mustCall("POST", "/v1/workflows/steps/runs", []byte(`{"input":{"n":1}}`), 201)
	values := map[string]string{"{tenant}": "acme", "{secret}": "stripe-key", "{name}": "steps", "{id}": started["id"].(string)}
	required := 0
	for pattern, documented := range bodies {
		if !documented.required {
			continue
		}
		required++
		method, path, _ := strings.Cut(pattern, " ")
		path = param.ReplaceAllStringFunc(path, func(p string) string {
			v, ok := values[p]
			if !ok {
				t.Fatalf("%s: no value for the path parameter %s in this test", pattern, p)
			}
			return v
		})
		token := a.token
		if strings.HasPrefix(path, "/v1/tenants") {
			token = adminToken
		}
		type request struct {
			name, body string
			header     map[string]string
		}
		requests := []request{{"no body", "", nil}}
		for _, mt := range documented.mediaTypes {
			switch mt {
			case "multipart/form-data":
				var form bytes.Buffer
				mw := multipart.NewWriter(&form)
				if _, err := mw.CreateFormFile("module", "empty.wasm"); err != nil {
					t.Fatal(err)
				}
				mw.Close()
				requests = append(requests, request{"a form whose module is empty", form.String(), map[string]string{"Content-Type": mw.FormDataContentType()}})
			case "application/json":
				requests = append(requests, request{"empty JSON", "", map[string]string{"Content-Type": mt}},
					request{"white space", " \r\n\t ", map[string]string{"Content-Type": mt}})
			default:
				requests = append(requests, request{"empty " + mt, "", map[string]string{"Content-Type": mt}})
			}
		}
		for _, c := range requests {
			r := callWith(t, e.srv, method, path, token, []byte(c.body), c.header)
			if r.status != 400 || r.errorCode(t) != "invalid_request" || !strings.Contains(string(r.body), "the request body is required") {
				t.Errorf("%s with %s: %d %s, want 400 saying the body is required", pattern, c.name, r.status, r.body)
			}
		}
	}
	if required < 7 {
		t.Errorf("the document marks %d bodies required; deploy, signal-with-start, both secret puts, tenant create and patch, and schedule create are", required)
	}

	const restart = "POST /v1/workflows/{name}/runs/{id}/restart"
	if b, ok := bodies[restart]; !ok || b.required {
		t.Fatalf("%s: the document says its body is required=%v (documented %v); every field of it is optional", restart, b.required, ok)
	}
	run := a.mustCall("POST", "/v1/workflows/steps/runs", []byte(`{"input":{"n":1}}`), 201)
	runPath := "/v1/workflows/steps/runs/" + run["id"].(string)
	if r := a.mustCall("GET", runPath+"?wait=30", nil, 200); r["status"] != "completed" {
		t.Fatalf("run is %v, want completed", r["status"])
	}
	if r := a.mustCall("POST", runPath+"/restart", nil, 201); r["id"] == run["id"] || r["workflow"] != "steps" {
		t.Errorf("a restart without a body: %v, want a new run of steps", r)
	}
}
