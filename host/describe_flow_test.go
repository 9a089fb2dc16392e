package host_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host"
)

// Every guest SDK declares flow control and completion hooks (abi/ABI.md §7) that the host
// reads as it reads the Go SDK's: each language's examples module declares the digest
// workflow (examples/wasm/*: workflows_with_flow.go, digest.rs, digest.ts, the Extism
// AssemblyScript door's workflows.ts), and the description the host decodes from the Rust and
// AssemblyScript modules is the Go module's, workflow for workflow. The digest's flow and hooks are also checked against
// the values its source declares, so an SDK that wrote neither would not pass as equal.
func TestGuestsDescribeFlowAndOnEndLikeGo(t *testing.T) {
	t.Parallel()
	want := abi.WorkflowDecl{Name: "digest", Version: "1",
		Flow: &abi.Flow{
			Concurrency: &abi.FlowConcurrency{Key: "$.customerId", Limit: 1},
			Rate:        &abi.FlowRate{Key: "$.customerId", Limit: 10, PeriodMs: 60_000},
			Debounce:    &abi.FlowDebounce{Key: "$.customerId", PeriodMs: 5_000},
			Priority:    -30,
		},
		OnEnd: []abi.Hook{
			{When: []string{"completed"}, Start: &abi.HookStart{Workflow: "steps", Version: "1"}},
			{When: []string{"failed", "cancelled"}, Webhook: "https://ops.example.com/wfhost/digest"},
		},
	}
	goMod := load(t, "examples.wasm")
	digest := func(fixture string, d abi.Description) abi.WorkflowDecl {
		for _, w := range d.Workflows {
			if w.Name == "digest" {
				return w
			}
		}
		t.Fatalf("%s declares no digest workflow", fixture)
		return abi.WorkflowDecl{}
	}
	if got := digest("examples.wasm", goMod.Description); !reflect.DeepEqual(got, want) {
		t.Fatalf("the Go SDK's digest\n  got  %+v\n  want %+v", got, want)
	}
	// The Extism doors' modules declare workflows of their own besides the examples (and the
	// AssemblyScript one no retry for relay), so of them only the digest is compared.
	for _, c := range []struct {
		fixture string
		whole   bool
	}{{"examples_rust.wasm", true}, {"examples_as.wasm", true}, {"extism_as.wasm", false}, {"extism_go.wasm", false}} {
		t.Run(c.fixture, func(t *testing.T) {
			t.Parallel()
			d := load(t, c.fixture).Description
			if got := digest(c.fixture, d); !reflect.DeepEqual(got, want) {
				t.Fatalf("digest\n  got  %+v\n  want %+v", got, want)
			}
			if c.whole && !reflect.DeepEqual(d, goMod.Description) {
				t.Fatalf("descriptions differ\n  %s: %+v\n  go: %+v", c.fixture, d, goMod.Description)
			}
		})
	}
}

// The Rust and AssemblyScript SDKs refuse a declaration the host would refuse at upload, with
// the host's words, and accept what it accepts: each case is a description's workflow entry,
// given to the capabilities modules' check-declaration workflow (which builds that
// declaration with the SDK and returns its check's fault) and to abi.DecodeDescription.
// Malformed, out-of-range, oversized and hostile values throughout. A case marked typed cannot
// be declared in Rust, whose types rule it out (a status that is not a RunEnd, a hook with
// both targets or neither). A case marked looser is refused by Go's URL parser, which the
// SDKs do not carry: the upload refuses it. A case marked quoted has a control character in
// a quoted name, which Go quotes as "\a", Rust as "\u{7}" and AssemblyScript as "\u0007":
// the words around the quoted name are compared.
func TestSDKsCheckDeclarationsAsTheHostDoes(t *testing.T) {
	t.Parallel()
	long := func(n int) string { return strings.Repeat("a", n) }
	hooks := func(n int) string {
		return "[" + strings.TrimSuffix(strings.Repeat(`{"when":["completed"],"start":{"workflow":"w"}},`, n), ",") + "]"
	}
	flow := func(f string) string { return `{"name":"w","version":"1","flow":` + f + `}` }
	onEnd := func(h string) string { return `{"name":"w","version":"1","onEnd":` + h + `}` }
	hook := func(h string) string { return onEnd("[" + h + "]") }
	cases := []struct {
		decl                  string
		typed, looser, quoted bool
	}{
		// Accepted.
		{decl: `{"name":"digest","version":"1","flow":{"concurrency":{"key":"$.customerId","limit":1},"rate":{"key":"$.customerId","limit":10,"periodMs":60000},"debounce":{"key":"$.customerId","periodMs":5000},"priority":-30}}`},
		{decl: flow(`{"concurrency":{"limit":10000},"rate":{"limit":1000,"periodMs":604800000},"debounce":{"periodMs":1},"priority":600}`)},
		{decl: flow(`{"concurrency":{"key":"$[-0]","limit":1},"rate":{"key":"$.items[1000000].sku_-9","limit":1,"periodMs":1}}`)},
		{decl: hook(`{"when":["completed","failed","cancelled"],"start":{"workflow":"next","version":"` + long(200) + `"}}`)},
		{decl: hook(`{"when":["failed"],"webhook":"HTTP://[::1]:8080/in?x=1"}`)},
		{decl: onEnd(hooks(16))},
		// Names and versions.
		{decl: `{"name":"","version":"1"}`},
		{decl: `{"name":"a/b","version":"1"}`},
		{decl: `{"name":"` + long(201) + `","version":"1"}`},
		{decl: `{"name":"w","version":""}`},
		{decl: `{"name":"w","version":"` + long(201) + `"}`},
		{decl: `{"name":"w","version":"1\u0000"}`},
		// Flow bounds.
		{decl: flow(`{"concurrency":{"limit":0}}`)},
		{decl: flow(`{"concurrency":{"limit":10001}}`)},
		{decl: flow(`{"rate":{"limit":1001,"periodMs":60000}}`)},
		{decl: flow(`{"rate":{"limit":1,"periodMs":0}}`)},
		{decl: flow(`{"debounce":{"periodMs":604800001}}`)},
		{decl: flow(`{"debounce":{"periodMs":9007199254740991}}`)},
		{decl: flow(`{"priority":601}`)},
		{decl: flow(`{"priority":-601}`)},
		// Key paths.
		{decl: flow(`{"concurrency":{"key":"customerId","limit":1}}`)},
		{decl: flow(`{"concurrency":{"key":"$","limit":1}}`)},
		{decl: flow(`{"concurrency":{"key":"$.","limit":1}}`)},
		{decl: flow(`{"rate":{"key":"$.a b","limit":1,"periodMs":1}}`)},
		{decl: flow(`{"rate":{"key":"$[]","limit":1,"periodMs":1}}`)},
		{decl: flow(`{"rate":{"key":"$[0","limit":1,"periodMs":1}}`)},
		{decl: flow(`{"debounce":{"key":"$[+1]","periodMs":1}}`)},
		{decl: flow(`{"debounce":{"key":"$[-1]","periodMs":1}}`)},
		{decl: flow(`{"debounce":{"key":"$[1000001]","periodMs":1}}`)},
		{decl: flow(`{"debounce":{"key":"$[99999999999999999999999]","periodMs":1}}`)},
		{decl: flow(`{"debounce":{"key":"$[a]","periodMs":1}}`)},
		{decl: flow(`{"debounce":{"key":"$` + strings.Repeat(".a", 100) + `","periodMs":1}}`)},
		{decl: flow(`{"debounce":{"key":"$` + strings.Repeat("[0]", 17) + `","periodMs":1}}`)},
		// Hooks.
		{decl: hook(`{"when":[],"start":{"workflow":"w"}}`)},
		{decl: hook(`{"when":["done"],"start":{"workflow":"w"}}`), typed: true},
		{decl: hook(`{"when":["` + long(100) + `"],"start":{"workflow":"w"}}`), typed: true},
		{decl: hook(`{"when":["failed","failed"],"start":{"workflow":"w"}}`)},
		{decl: hook(`{"when":["failed"]}`), typed: true},
		{decl: hook(`{"when":["failed"],"start":{"workflow":"w"},"webhook":"https://h.example.com/"}`), typed: true},
		{decl: hook(`{"when":["failed"],"start":{"workflow":""}}`)},
		{decl: hook(`{"when":["failed"],"start":{"workflow":"a/b"}}`)},
		{decl: hook(`{"when":["failed"],"start":{"workflow":"a#1"}}`)},
		{decl: hook(`{"when":["failed"],"start":{"workflow":"a\u0007"}}`), quoted: true},
		{decl: hook(`{"when":["failed"],"start":{"workflow":"w","version":"` + long(201) + `"}}`)},
		{decl: hook(`{"when":["failed"],"start":{"workflow":"w","version":"v\u0000"}}`)},
		{decl: hook(`{"when":["failed"],"webhook":"javascript:alert(1)"}`)},
		{decl: hook(`{"when":["failed"],"webhook":"ftp://h.example.com/"}`)},
		{decl: hook(`{"when":["failed"],"webhook":"https://u:p@h.example.com/"}`)},
		{decl: hook(`{"when":["failed"],"webhook":"https:///in"}`)},
		{decl: hook(`{"when":["failed"],"webhook":"https://h.example.com/#top"}`)},
		{decl: hook(`{"when":["failed"],"webhook":"https://h.example.com/a b"}`)},
		{decl: hook(`{"when":["failed"],"webhook":"https://h.example.com/\n"}`)},
		{decl: hook(`{"when":["failed"],"webhook":"https://h.example.com/` + long(3000) + `"}`)},
		{decl: onEnd(hooks(17))},
		{decl: onEnd(`[{"when":["completed"],"start":{"workflow":"w"}},{"when":["failed"],"webhook":"gopher://h/"}]`)},
		{decl: hook(`{"when":["failed"],"webhook":"https://h.example.com:port/"}`), looser: true},
	}
	guests := []struct {
		fixture string
		rust    bool
	}{{"capabilities_as.wasm", false}, {"capabilities_rust.wasm", true}}
	for _, g := range guests {
		t.Run(g.fixture, func(t *testing.T) {
			t.Parallel()
			m := load(t, g.fixture)
			for _, c := range cases {
				if g.rust && c.typed {
					continue
				}
				want := ""
				if _, err := abi.DecodeDescription([]byte(`{"workflows":[` + c.decl + `]}`)); err != nil {
					want = err.Error()
				}
				res, err := activate(t, m, "check-declaration", "r", c.decl, newMemHandler(), host.Limits{})
				var out struct{ Fault *string }
				if err != nil || res.Error != nil || json.Unmarshal(res.Output, &out) != nil || out.Fault == nil {
					t.Errorf("%.120s: result %+v error %v", c.decl, res, err)
					continue
				}
				around := func(s string) string {
					if i, j := strings.Index(s, `name "`), strings.LastIndex(s, `"`); i >= 0 && j > i {
						return s[:i] + "..." + s[j:]
					}
					return s
				}
				switch {
				case c.quoted && (want == "" || around(*out.Fault) != around(want)):
					t.Errorf("%.120s:\n  SDK  %q\n  host %q", c.decl, *out.Fault, want)
				case c.quoted:
				case c.looser && (want == "" || *out.Fault != ""):
					t.Errorf("%.120s: the host refuses (%q) what the SDK lets through, here it says %q", c.decl, want, *out.Fault)
				case !c.looser && *out.Fault != want:
					t.Errorf("%.120s:\n  SDK  %q\n  host %q", c.decl, *out.Fault, want)
				}
			}
		})
	}
}
