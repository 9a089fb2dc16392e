package api_test

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/api/wire"
)

// TestWireTypesAreTheDocumentedShapes holds each type of package wire to the schema the OpenAPI
// document gives its request or answer: the same JSON property names, and every property the
// document requires always written (no omitempty). The API, its client, the CLI and the e2e
// tests all read these types, so a field renamed on one side of the document fails here.
func TestWireTypesAreTheDocumentedShapes(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	operation := func(method, path string) map[string]any {
		return doc["paths"].(map[string]any)[path].(map[string]any)[strings.ToLower(method)].(map[string]any)
	}
	answer := func(method, path, status string) map[string]any {
		r := operation(method, path)["responses"].(map[string]any)[status].(map[string]any)
		return r["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
	}
	request := func(method, path string) map[string]any {
		rb := operation(method, path)["requestBody"].(map[string]any)
		return rb["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
	}
	component := func(name string) map[string]any { return schemas[name].(map[string]any) }
	// properties follows $ref and allOf to a schema's property names and required ones.
	var properties func(s map[string]any) (props, required []string)
	properties = func(s map[string]any) (props, required []string) {
		if ref, ok := s["$ref"].(string); ok {
			return properties(component(strings.TrimPrefix(ref, "#/components/schemas/")))
		}
		for _, part := range asSlice(s["allOf"]) {
			p, r := properties(part.(map[string]any))
			props, required = append(props, p...), append(required, r...)
		}
		for name := range asMap(s["properties"]) {
			props = append(props, name)
		}
		for _, name := range asSlice(s["required"]) {
			required = append(required, name.(string))
		}
		return props, required
	}

	// A required property a type may leave out: abi.ErrorInfo's code is omitempty for guests,
	// and the engine gives every error it keeps one.
	mayOmit := map[string]string{"ErrorInfo": "code"}
	for _, c := range []struct {
		what   string
		schema map[string]any
		goType any
	}{
		{"Error", component("Error"), wire.ErrorBody{}},
		{"Error.error", asMap(component("Error")["properties"])["error"].(map[string]any), wire.ErrorDetail{}},
		{"ErrorInfo", component("ErrorInfo"), abi.ErrorInfo{}},
		{"Run", component("Run"), wire.Run{}},
		{"RunFlow", component("RunFlow"), wire.RunFlow{}},
		{"RunPage", component("RunPage"), wire.RunPage{}},
		{"StartRun", component("StartRun"), wire.StartRun{}},
		{"Step", component("Step"), wire.Step{}},
		{"GET .../steps", answer("GET", "/v1/workflows/{name}/runs/{id}/steps", "200"), wire.StepPage{}},
		{"OutboundRequest", component("OutboundRequest"), wire.OutboundRecord{}},
		{"GET .../outbound", answer("GET", "/v1/workflows/{name}/runs/{id}/outbound", "200"), wire.OutboundPage{}},
		{"RunExport", component("RunExport"), wire.RunExport{}},
		{"GET .../export", answer("GET", "/v1/workflows/{name}/runs/{id}/export", "200"), wire.RunExport{}},
		{"signal", answer("POST", "/v1/workflows/{name}/runs/{id}/signals/{event}", "202"), wire.SignalResult{}},
		{"SignalResult", component("SignalResult"), wire.SignalResult{}},
		{"SignalWithStart", component("SignalWithStart"), wire.SignalWithStart{}},
		{"SignalWithStartResult", component("SignalWithStartResult"), wire.SignalWithStartResult{}},
		{"BroadcastResult", component("BroadcastResult"), wire.BroadcastResult{}},
		{"Module", component("Module"), wire.Module{}},
		{"GET /v1/modules", answer("GET", "/v1/modules", "200"), wire.ModulePage{}},
		{"POST /v1/modules", answer("POST", "/v1/modules", "201"), wire.Deployed{}},
		{"UpgradeSummary", component("UpgradeSummary"), wire.UpgradeSummary{}},
		{"UpgradeReport", component("UpgradeReport"), wire.UpgradeReport{}},
		{"GET /v1/upgrades/{id}", answer("GET", "/v1/upgrades/{id}", "200"), wire.UpgradeReport{}},
		{"UpgradeRun", component("UpgradeRun"), wire.UpgradeRun{}},
		{"ReplayStep", component("ReplayStep"), wire.ReplayStep{}},
		{"ReplayDivergence", component("ReplayDivergence"), wire.ReplayDivergence{}},
		{"ReplayStop", component("ReplayStop"), wire.ReplayStop{}},
		{"QueryAnswer", component("QueryAnswer"), wire.QueryAnswer{}},
		{"ReplayLog", component("ReplayLog"), wire.ReplayLog{}},
		{"RetryPolicy", component("RetryPolicy"), abi.RetryPolicy{}},
		{"Workflow", component("Workflow"), wire.Workflow{}},
		{"WorkflowSummary", component("WorkflowSummary"), wire.WorkflowSummary{}},
		{"GET /v1/workflows", answer("GET", "/v1/workflows", "200"), wire.WorkflowPage{}},
		{"Limits", component("Limits"), wire.Limits{}},
		{"Tenant", component("Tenant"), wire.Tenant{}},
		{"GET /v1/tenants", answer("GET", "/v1/tenants", "200"), wire.TenantPage{}},
		{"POST /v1/tenants", request("POST", "/v1/tenants"), wire.CreateTenant{}},
		{"POST /v1/tenants answer", answer("POST", "/v1/tenants", "201"), wire.TenantCreated{}},
		{"PATCH /v1/tenants/{tenant}", request("PATCH", "/v1/tenants/{tenant}"), wire.SetLimits{}},
		{"Token", component("Token"), wire.Token{}},
		{"GET /v1/tokens", answer("GET", "/v1/tokens", "200"), wire.TokenPage{}},
		{"POST /v1/tokens", request("POST", "/v1/tokens"), wire.CreateToken{}},
		{"Secret", component("Secret"), wire.Secret{}},
		{"GET /v1/secrets", answer("GET", "/v1/secrets", "200"), wire.SecretPage{}},
		{"SecretValue", component("SecretValue"), wire.PutSecret{}},
		{"DELETE /v1/secrets/{secret}", answer("DELETE", "/v1/secrets/{secret}", "200"), wire.SecretDeleted{}},
	} {
		documented, required := properties(c.schema)
		fields, always := jsonFields(reflect.TypeOf(c.goType))
		sort.Strings(documented)
		if !slices.Equal(documented, fields) {
			t.Errorf("%s: the document has the properties %v, %T has %v", c.what, documented, c.goType, fields)
		}
		for _, name := range required {
			if !slices.Contains(always, name) && name != mayOmit[c.what] {
				t.Errorf("%s: the document requires %q, which %T leaves out when empty (or lacks)", c.what, name, c.goType)
			}
		}
	}

	var statuses, enum []string
	for _, s := range wire.RunStatuses() {
		statuses = append(statuses, string(s))
	}
	for _, s := range asSlice(component("RunStatus")["enum"]) {
		enum = append(enum, s.(string))
	}
	if !slices.Equal(enum, statuses) {
		t.Errorf("RunStatus: the document's enum is %v, wire.RunStatuses() %v", enum, statuses)
	}
	state := asMap(asMap(component("SignalResult")["properties"])["state"])
	if states := asSlice(state["enum"]); len(states) != 2 || states[0] != wire.SignalDelivered || states[1] != wire.SignalBuffered {
		t.Errorf("the signal's state: the document's enum is %v, wire's %q and %q", states, wire.SignalDelivered, wire.SignalBuffered)
	}
}

// jsonFields are the JSON names encoding/json writes for a struct type (embedded structs'
// fields flattened), sorted, and those of them it writes even when empty.
func jsonFields(t reflect.Type) (fields, always []string) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			inner, innerAlways := jsonFields(f.Type)
			fields, always = append(fields, inner...), append(always, innerAlways...)
			continue
		}
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields = append(fields, name)
		if !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") {
			always = append(always, name)
		}
	}
	sort.Strings(fields)
	return fields, always
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}
