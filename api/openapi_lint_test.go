package api_test

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestOpenAPIDocumentDescribesItself: what make lint's Redocly run checks that matters most,
// checked without npm, so a developer who never installed the linter hears of it from go
// test: the document names its servers; every tag it uses is declared with a description;
// every operation has an operationId, a summary, a description and exactly one declared tag;
// every parameter, response, schema and property says what it is; and every 401 says which
// challenge it carries.
func TestOpenAPIDocumentDescribesItself(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var problems []string
	problem := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	obj := func(v any) map[string]any { m, _ := v.(map[string]any); return m }

	if servers, _ := doc["servers"].([]any); len(servers) == 0 {
		problem("the document names no servers")
	}
	for _, s := range asList(doc["servers"]) {
		if str(obj(s), "url") == "" || str(obj(s), "description") == "" {
			problem("server %v has no url or no description", s)
		}
		for name, v := range obj(obj(s)["variables"]) {
			if str(obj(v), "default") == "" || str(obj(v), "description") == "" {
				problem("server variable %s has no default or no description", name)
			}
		}
	}
	tags := map[string]bool{}
	for _, tag := range asList(doc["tags"]) {
		name := str(obj(tag), "name")
		if name == "" || str(obj(tag), "description") == "" {
			problem("tag %v has no name or no description", tag)
		}
		if tags[name] {
			problem("tag %s is declared twice", name)
		}
		tags[name] = true
	}
	used := map[string]bool{}
	for path, ops := range obj(doc["paths"]) {
		for method, rawOp := range obj(ops) {
			op := obj(rawOp)
			where := strings.ToUpper(method) + " " + path
			for _, k := range []string{"operationId", "summary", "description"} {
				if str(op, k) == "" {
					problem("%s has no %s", where, k)
				}
			}
			opTags := asList(op["tags"])
			if len(opTags) != 1 {
				problem("%s has %d tags; every operation has one", where, len(opTags))
			}
			for _, tag := range opTags {
				name, _ := tag.(string)
				if !tags[name] {
					problem("%s has the tag %q, which the document does not declare", where, name)
				}
				used[name] = true
			}
			for _, p := range asList(op["parameters"]) {
				if obj(p)["$ref"] == nil && str(obj(p), "description") == "" {
					problem("%s: parameter %s has no description", where, str(obj(p), "name"))
				}
			}
			if body := obj(op["requestBody"]); body != nil {
				for mt, c := range obj(body["content"]) {
					describedSchema(obj(c)["schema"], fmt.Sprintf("%s: the %s body", where, mt), problem)
				}
			}
			for code, r := range obj(op["responses"]) {
				resp := obj(r)
				if resp["$ref"] != nil {
					continue // a component: checked below
				}
				if str(resp, "description") == "" {
					problem("%s: response %s has no description", where, code)
				}
				for mt, c := range obj(resp["content"]) {
					describedSchema(obj(c)["schema"], fmt.Sprintf("%s: the %s %s answer", where, code, mt), problem)
				}
			}
		}
	}
	for name := range tags {
		if !used[name] {
			problem("tag %s is declared and used by no operation", name)
		}
	}
	components := obj(doc["components"])
	for name, p := range obj(components["parameters"]) {
		if str(obj(p), "description") == "" {
			problem("parameter %s has no description", name)
		}
	}
	for name, r := range obj(components["responses"]) {
		if str(obj(r), "description") == "" {
			problem("response %s has no description", name)
		}
	}
	for name, s := range obj(components["schemas"]) {
		describedSchema(s, "schema "+name, problem)
	}
	challenge := obj(obj(obj(obj(components["responses"])["401"])["headers"])["WWW-Authenticate"])
	if challenge == nil || challenge["required"] != true {
		problem("the 401 response does not document its required WWW-Authenticate header")
	}

	sort.Strings(problems)
	for _, p := range slices.Compact(problems) {
		t.Error(p)
	}
}

// describedSchema reports, through problem, a schema (inline, not a reference) without a
// description, and any property of it, at any depth, that is neither described nor a
// reference to a schema that is.
func describedSchema(v any, where string, problem func(string, ...any)) {
	s, _ := v.(map[string]any)
	if s == nil || s["$ref"] != nil {
		return
	}
	if d, _ := s["description"].(string); d == "" {
		problem("%s has no description", where)
	}
	describedProperties(s, where, problem)
}

func describedProperties(s map[string]any, where string, problem func(string, ...any)) {
	props, _ := s["properties"].(map[string]any)
	for name, v := range props {
		p, _ := v.(map[string]any)
		if p["$ref"] != nil {
			continue
		}
		if d, _ := p["description"].(string); d == "" {
			problem("%s: property %s has no description", where, name)
		}
		describedProperties(p, where+"."+name, problem)
		if items, _ := p["items"].(map[string]any); items != nil && items["$ref"] == nil {
			describedProperties(items, where+"."+name+"[]", problem)
		}
	}
	for _, k := range []string{"allOf", "oneOf", "anyOf"} {
		for _, part := range asList(s[k]) {
			if m, _ := part.(map[string]any); m != nil {
				describedProperties(m, where, problem)
			}
		}
	}
}

func asList(v any) []any { l, _ := v.([]any); return l }
