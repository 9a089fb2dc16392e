package api_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

// TestInputFilterForms: a listing's and a count's input filter reads OpenAPI's deepObject form
// (input[o][id]=a, brackets raw or percent-encoded, as the document describes it and generated
// clients send it) and the dotted form (input.o.id=a), alone or together, on both stores. A
// malformed filter, a non-UTF-8 or oversized one, or one path given in both forms is a 400
// that names it: never a filter dropped, which would answer every run as if it matched.
func TestInputFilterForms(t *testing.T) {
	t.Parallel()
	for _, kind := range bothStores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			e := setupEnvOn(t, kind, store.Limits{})
			a := newTenant(t, e, "filters", "")
			a.mustCall("POST", "/v1/modules", testenv.Fixture(t, "examples.wasm"), 201)
			ids := map[string]string{}
			for name, input := range map[string]string{
				"a": `{"n":1,"o":{"id":"a"}}`,
				"b": `{"n":2,"o":{"id":"b","k":{"x":1}},"tag":"a.b"}`,
				"c": `{"n":3,"a.b":"dotted key"}`,
			} {
				ids[name] = a.mustCall("POST", "/v1/workflows/steps/runs", []byte(`{"input":`+input+`}`), 201)["id"].(string)
			}
			runs := func(names ...string) []string {
				var out []string
				for _, n := range names {
					out = append(out, ids[n])
				}
				slices.Sort(out)
				return out
			}
			for q, want := range map[string][]string{
				"input[n]=2":                      runs("b"),
				"input%5Bn%5D=2":                  runs("b"),
				"input[o][id]=a":                  runs("a"),
				"input%5Bo%5D%5Bid%5D=b":          runs("b"),
				"input.o.id=b":                    runs("b"),
				"input[o][k][x]=1":                runs("b"),
				"input[o]=%7B%22id%22:%22b%22%7D": runs("b"),
				"input[o][id]=a&input.n=1":        runs("a"),
				"input[o][id]=a&input.n=2":        nil,
				"input[a.b]=dotted%20key":         runs("c"), // a key with a dot: only the bracket form can name it
				"input.a.b=dotted%20key":          nil,       // {"a":{"b":...}}, another place
				"input[tag]=a.b":                  runs("b"),
				"input[n]=9":                      nil,
			} {
				for _, path := range []string{"/v1/runs", "/v1/workflows/steps/runs"} {
					var got []string
					for _, r := range a.mustCall("GET", path+"?"+q, nil, 200)["runs"].([]any) {
						got = append(got, r.(map[string]any)["id"].(string))
					}
					slices.Sort(got)
					if !slices.Equal(got, want) {
						t.Errorf("GET %s?%s: %v, want %v", path, q, got, want)
					}
				}
				for _, path := range []string{"/v1/runs/counts", "/v1/workflows/steps/runs/counts"} {
					if total := a.mustCall("GET", path+"?"+q, nil, 200)["total"].(float64); int(total) != len(want) {
						t.Errorf("GET %s?%s: total %v, want %d", path, q, total, len(want))
					}
				}
			}

			deep := "input" + strings.Repeat("[k]", 9)
			for q, naming := range map[string]string{
				"input[n=1":                "input[n",
				"input[]=1":                "input[]",
				"input[n]]=1":              "input[n]]",
				"input[n]x=1":              "input[n]x",
				"input[a[b]]=1":            "input[a[b]]",
				"input[n][=1":              "input[n][",
				"input.o[id]=a":            "input.o[id]",
				"input[%FF]=1":             "input[",
				"input[a%00b]=1":           "input[",
				"input[n]=%FF":             "input[n]",
				"input[n]=1&input.n=1":     "input.n",
				"input[o]=1&input.o.id=2":  "input.o",
				"input.o=1&input[o][id]=2": "input.o",
				deep + "=1":                "input[k]",
				"input[n]=" + strings.Repeat("x", 17<<10): "input",
				"input=1": "input",
			} {
				for _, path := range []string{"/v1/runs", "/v1/workflows/steps/runs", "/v1/runs/counts"} {
					r := a.call("GET", path+"?"+q, nil)
					if r.status != 400 || r.errorCode(t) != "invalid_request" {
						t.Errorf("GET %s?%.80s: %d %.300s, want 400 invalid_request", path, q, r.status, r.body)
						continue
					}
					var body struct{ Error struct{ Message string } }
					if err := json.Unmarshal(r.body, &body); err != nil {
						t.Fatal(err)
					}
					if !strings.Contains(body.Error.Message, naming) {
						t.Errorf("GET %s?%.80s: %q does not name %s", path, q, body.Error.Message, naming)
					}
				}
			}
			var many strings.Builder
			for i := range 17 {
				fmt.Fprintf(&many, "input[k%d]=1&", i)
			}
			if r := a.call("GET", "/v1/runs?"+many.String(), nil); r.status != 400 {
				t.Errorf("17 deepObject filters: %d %s, want 400", r.status, r.body)
			}
		})
	}
}
