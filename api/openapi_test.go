package api_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/api"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/store"
)

// TestOpenAPIDescribesEveryRoute: the document served at /v1/openapi.json is OpenAPI 3.1, has
// one operation for every route the server answers and none it does not, declares every path
// parameter, and every reference in it resolves.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	t.Parallel()
	e := setupEnv(t, store.Limits{})
	r := call(t, e.srv, "GET", "/v1/openapi.json", "", nil)
	if r.status != 200 {
		t.Fatalf("GET /v1/openapi.json: %d %s", r.status, r.body)
	}
	var doc struct {
		OpenAPI    string                                `json:"openapi"`
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components map[string]map[string]json.RawMessage `json:"components"`
	}
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatalf("the document is not JSON: %v", err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi %q, want 3.1.0", doc.OpenAPI)
	}

	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			documented[strings.ToUpper(method)+" "+path] = true
		}
	}
	// Served by the mux outside the route table: probes, metrics and this document.
	served := map[string]bool{"GET /healthz": true, "GET /readyz": true, "GET /metrics": true, "GET /v1/openapi.json": true}
	for _, pattern := range e.handler.Routes() {
		served[pattern] = true
	}
	for pattern := range served {
		if !documented[pattern] {
			t.Errorf("route %s is not in the OpenAPI document", pattern)
		}
	}
	for pattern := range documented {
		if !served[pattern] {
			t.Errorf("the OpenAPI document has %s, which the server does not serve", pattern)
		}
	}

	var raw any
	if err := json.Unmarshal(r.body, &raw); err != nil {
		t.Fatal(err)
	}
	resolve := func(ref string) (json.RawMessage, bool) {
		parts := strings.Split(strings.TrimPrefix(ref, "#/components/"), "/")
		if len(parts) != 2 {
			return nil, false
		}
		v, ok := doc.Components[parts[0]][parts[1]]
		return v, ok
	}
	var refs []string
	collectRefs(raw, &refs)
	sort.Strings(refs)
	for _, ref := range refs {
		if _, ok := resolve(ref); !ok {
			t.Errorf("reference %s does not resolve", ref)
		}
	}

	pathParam := regexp.MustCompile(`\{([^}]+)\}`)
	operationIDs := map[string]string{}
	for path, ops := range doc.Paths {
		for method, rawOp := range ops {
			var op struct {
				OperationID string            `json:"operationId"`
				Parameters  []json.RawMessage `json:"parameters"`
				Responses   map[string]any    `json:"responses"`
			}
			if err := json.Unmarshal(rawOp, &op); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			where := strings.ToUpper(method) + " " + path
			if op.OperationID == "" || len(op.Responses) == 0 {
				t.Errorf("%s has no operationId or no responses", where)
			}
			if other, dup := operationIDs[op.OperationID]; dup {
				t.Errorf("operationId %s is used by %s and %s", op.OperationID, other, where)
			}
			operationIDs[op.OperationID] = where
			declared := map[string]bool{}
			for _, p := range op.Parameters {
				var param struct {
					Ref  string `json:"$ref"`
					Name string `json:"name"`
					In   string `json:"in"`
				}
				if err := json.Unmarshal(p, &param); err != nil {
					t.Fatal(err)
				}
				if param.Ref != "" {
					target, _ := resolve(param.Ref)
					if err := json.Unmarshal(target, &param); err != nil {
						t.Fatalf("%s: parameter %s: %v", where, param.Ref, err)
					}
				}
				if param.In == "path" {
					declared[param.Name] = true
				}
			}
			for _, m := range pathParam.FindAllStringSubmatch(path, -1) {
				if !declared[m[1]] {
					t.Errorf("%s does not declare its path parameter %s", where, m[1])
				}
			}
		}
	}
}

func collectRefs(v any, refs *[]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			if s, ok := child.(string); ok && k == "$ref" {
				*refs = append(*refs, s)
				continue
			}
			collectRefs(child, refs)
		}
	case []any:
		for _, child := range v {
			collectRefs(child, refs)
		}
	}
}

// TestOpenAPIDocumentsClientMistakes: every route the server answers documents a 400 (every one
// refuses an unknown query parameter), every operation with a JSON body documents the 415 of
// another media type, the query parameters each operation documents are the ones it takes, and
// the ranges of the tenant limits are the engine's.
func TestOpenAPIDocumentsClientMistakes(t *testing.T) {
	t.Parallel()
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Ref  string `json:"$ref"`
				Name string `json:"name"`
				In   string `json:"in"`
			} `json:"parameters"`
			RequestBody *struct {
				Content map[string]json.RawMessage `json:"content"`
			} `json:"requestBody"`
			Responses map[string]json.RawMessage `json:"responses"`
		} `json:"paths"`
		Components struct {
			Parameters map[string]struct{ Name, In string } `json:"parameters"`
			Schemas    map[string]struct {
				Properties map[string]struct {
					Minimum *int64 `json:"minimum"`
					Maximum *int64 `json:"maximum"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	e := setupEnv(t, store.Limits{})
	if err := json.Unmarshal(call(t, e.srv, "GET", "/v1/openapi.json", "", nil).body, &doc); err != nil {
		t.Fatal(err)
	}
	for _, pattern := range e.handler.Routes() {
		method, path, _ := strings.Cut(pattern, " ")
		op, ok := doc.Paths[path][strings.ToLower(method)]
		if !ok {
			continue // TestOpenAPIDescribesEveryRoute reports it
		}
		if op.Responses["400"] == nil {
			t.Errorf("%s does not document its 400", pattern)
		}
		if op.RequestBody != nil && op.RequestBody.Content["application/json"] != nil && op.Responses["415"] == nil {
			t.Errorf("%s takes JSON and does not document its 415", pattern)
		}
		var documented []string
		for _, p := range op.Parameters {
			name, in := p.Name, p.In
			if p.Ref != "" {
				c := doc.Components.Parameters[strings.TrimPrefix(p.Ref, "#/components/parameters/")]
				name, in = c.Name, c.In
			}
			if in == "query" {
				if name == "input" {
					name = "input.*" // style deepObject: input[<key>]..., or input.<key>... (query.go)
				}
				documented = append(documented, name)
			}
		}
		takes := slices.Clone(api.RouteQuery[pattern])
		slices.Sort(documented)
		slices.Sort(takes)
		if !slices.Equal(documented, takes) {
			t.Errorf("%s documents the query parameters %v and takes %v", pattern, documented, takes)
		}
	}
	limits := doc.Components.Schemas["Limits"].Properties
	for _, r := range engine.LimitRanges() {
		p := limits[r.Name]
		if p.Minimum == nil || *p.Minimum != 0 || p.Maximum == nil || *p.Maximum != r.Max {
			t.Errorf("Limits.%s is documented from %v to %v; the engine takes 0 to %d", r.Name, p.Minimum, p.Maximum, r.Max)
		}
	}
	if len(limits) != len(engine.LimitRanges())+1 { // and allowedHosts
		t.Errorf("Limits documents %d properties; the engine bounds %d numbers and allowedHosts", len(limits), len(engine.LimitRanges()))
	}
}
