package abi

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestFlowPathKeys(t *testing.T) {
	input := json.RawMessage(`{"customerId":"c-1","n":42,"vip":true,"items":[{"sku":"a"},{"sku":"b"}],"obj":{},"nil":null,"big":12345678901234567890}`)
	for path, want := range map[string]string{
		"":               "",
		"$.customerId":   "c-1",
		"$.n":            "42",
		"$.vip":          "true",
		"$.items[1].sku": "b",
		"$.big":          "12345678901234567890",
	} {
		p, err := ParseFlowPath(path)
		if err != nil {
			t.Fatalf("parse %q: %v", path, err)
		}
		got, err := p.Key(input)
		if err != nil || got != want {
			t.Errorf("key %q = %q, %v; want %q", path, got, err, want)
		}
	}
	for _, path := range []string{"$.missing", "$.obj", "$.nil", "$.items", "$.items[9].sku", "$.customerId.x", "$.n[0]"} {
		p, err := ParseFlowPath(path)
		if err != nil {
			t.Fatalf("parse %q: %v", path, err)
		}
		if _, err := p.Key(input); !errors.Is(err, ErrFlowKey) {
			t.Errorf("key %q: err = %v, want ErrFlowKey", path, err)
		}
	}
}

func TestFlowPathRefusesHostilePaths(t *testing.T) {
	for _, path := range []string{
		"$", "customerId", ".customerId", "$customerId", "$.", "$..a", "$.a b", "$[", "$[]", "$[-1]", "$[+1]",
		"$[x]", "$[99999999999]", "$['a']", "$.a\x00", "$.\xff", "$.*", "$.a[?(@.b)]",
		"$" + strings.Repeat(".a", 17), "$." + strings.Repeat("a", 300),
	} {
		if _, err := ParseFlowPath(path); err == nil {
			t.Errorf("ParseFlowPath(%q) accepted", path)
		}
	}
}

func TestFlowKeyRefusesHostileValues(t *testing.T) {
	p, err := ParseFlowPath("$.k")
	if err != nil {
		t.Fatal(err)
	}
	for _, input := range []string{
		`{"k":"` + strings.Repeat("x", MaxFlowKeyLen+1) + `"}`, // absurd length
		`{"k":"a\u0000b"}`,     // a NUL no store keeps in text
		"{\"k\":\"\xff\xfe\"}", // not UTF-8 (Go's decoder would make it U+FFFD; the input check refuses it first)
		`not json`,
		`{"k":`,
	} {
		k, err := p.Key(json.RawMessage(input))
		if strings.Contains(input, "\xff") {
			// encoding/json replaces invalid UTF-8 with U+FFFD, a storable key: what matters is
			// that no invalid byte reaches a store.
			if err == nil && strings.Contains(k, "\xff") {
				t.Errorf("key of non-UTF-8 input kept the invalid bytes: %q", k)
			}
			continue
		}
		if !errors.Is(err, ErrFlowKey) {
			t.Errorf("key of %.40q: err = %v, want ErrFlowKey", input, err)
		}
	}
	if k, err := p.Key(json.RawMessage(`{"k":"` + strings.Repeat("é", MaxFlowKeyLen/2) + `"}`)); err != nil || len(k) != MaxFlowKeyLen {
		t.Errorf("a key of exactly %d bytes: %d bytes, %v", MaxFlowKeyLen, len(k), err)
	}
}

func TestDescriptionFlowIsValidated(t *testing.T) {
	good := `{"workflows":[{"name":"w","version":"1","flow":{"concurrency":{"key":"$.c","limit":2},"rate":{"key":"$.c","limit":10,"periodMs":60000},"debounce":{"periodMs":500},"priority":-600}}]}`
	d, err := DecodeDescription([]byte(good))
	if err != nil {
		t.Fatalf("valid flow refused: %v", err)
	}
	f := d.Workflows[0].Flow
	if f == nil || f.Concurrency.Limit != 2 || f.Rate.PeriodMs != 60000 || f.Debounce.Key != "" || f.Priority != -600 {
		t.Fatalf("decoded flow = %+v", f)
	}
	for name, flow := range map[string]string{
		"limit 0":           `{"concurrency":{"key":"$.c","limit":0}}`,
		"huge limit":        `{"concurrency":{"key":"$.c","limit":2147483648}}`,
		"limit past max":    `{"concurrency":{"limit":10001}}`,
		"bad path":          `{"concurrency":{"key":"c","limit":1}}`,
		"rate limit 0":      `{"rate":{"limit":0,"periodMs":1}}`,
		"rate limit huge":   `{"rate":{"limit":1001,"periodMs":1}}`,
		"rate no period":    `{"rate":{"limit":1}}`,
		"rate huge period":  `{"rate":{"limit":1,"periodMs":9223372036854775807}}`,
		"debounce negative": `{"debounce":{"periodMs":-1}}`,
		"debounce bad key":  `{"debounce":{"key":"$[x]","periodMs":1}}`,
		"priority high":     `{"priority":601}`,
		"priority low":      `{"priority":-601}`,
		"not an object":     `[1]`,
		"limit a string":    `{"concurrency":{"limit":"2"}}`,
	} {
		raw := `{"workflows":[{"name":"w","version":"1","flow":` + flow + `}]}`
		if _, err := DecodeDescription([]byte(raw)); err == nil {
			t.Errorf("%s: accepted %s", name, flow)
		}
	}
}

func FuzzFlowPath(f *testing.F) {
	for _, s := range []string{"$.a", "$.a[0].b", "$[3]", "$..", "$[", ""} {
		f.Add(s, `{"a":[{"b":"x"}]}`)
	}
	f.Fuzz(func(t *testing.T, path, input string) {
		p, err := ParseFlowPath(path)
		if err != nil {
			return
		}
		k, err := p.Key(json.RawMessage(input))
		if err == nil && CheckText("key", k, MaxFlowKeyLen) != nil {
			t.Fatalf("key %q of %q is not storable", k, path)
		}
	})
}
