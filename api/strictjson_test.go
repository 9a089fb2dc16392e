package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/api/wire"
)

// startBodyOf is a start request whose input is an object of n fields.
func startBodyOf(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"input":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"field%d":{"name":"value %d","n":%d.5,"tags":["a","b"]}`, i, i, i)
	}
	b.WriteString(`},"idempotencyKey":"k-1","retentionDays":30}`)
	return []byte(b.String())
}

// BenchmarkDecodeBody compares the strict reading of a start request with encoding/json's
// alone, for the RATIONALE's cost of strictness.
func BenchmarkDecodeBody(b *testing.B) {
	for _, n := range []int{1, 100, 10000} {
		body := startBodyOf(n)
		b.Run(fmt.Sprintf("strict/%dB", len(body)), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				var v wire.StartRun
				if err := decodeStrict(body, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("encoding-json/%dB", len(body)), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				var v wire.StartRun
				if err := json.Unmarshal(body, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzCheckStrict holds the scan to encoding/json and abi.CheckJSON: what it accepts is valid
// JSON that CheckJSON accepts (but for one level of nesting, the request's own) with no key
// twice in an object, and valid JSON it refuses has one of those faults.
func FuzzCheckStrict(f *testing.F) {
	for _, s := range []string{`{"a":[1,"x",null,true,{"b":-1.5e3}]}`, `{"a":1,"a":2}`, `{"a\u0000":1}`, `"\ud800"`,
		"\"\xff\"", `[1e1001]`, `{"a":{"b":[]}} x`, `{"a" 1}`, `[1,]`, `{"\u0061":1,"a":2}`, " \t[]\n", `"\\"`,
		`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k3":3}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		err := checkStrict(body, "", nil)
		if err == nil {
			if !json.Valid(body) {
				t.Fatalf("checkStrict accepted %q, which is not JSON", body)
			}
			if rule := abi.CheckJSON(body); rule != nil && !strings.Contains(rule.Error(), "nested") {
				t.Fatalf("checkStrict accepted %q, which abi.CheckJSON refuses: %v", body, rule)
			}
			if dup := duplicateKey(body); dup != "" {
				t.Fatalf("checkStrict accepted %q, which has the key %q twice in one object", body, dup)
			}
			return
		}
		if json.Valid(body) {
			msg := err.Error()
			for _, meant := range []string{"duplicate key", "not storable", "nested"} {
				if strings.Contains(msg, meant) {
					return
				}
			}
			t.Fatalf("checkStrict refused valid JSON %q: %v", body, err)
		}
	})
}

// duplicateKey is a key that some object of the valid JSON text has twice, by encoding/json's
// reading of it ("" for none): the reference the scan is held to.
func duplicateKey(text []byte) string {
	dec := json.NewDecoder(bytes.NewReader(text))
	type object struct{ keys map[string]bool }
	var stack []*object
	expectKey := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{':
				stack = append(stack, &object{keys: map[string]bool{}})
				expectKey = true
				continue
			case '[':
				stack = append(stack, nil)
			case '}', ']':
				stack = stack[:len(stack)-1]
			}
		case string:
			if expectKey {
				top := stack[len(stack)-1]
				if top.keys[tok] {
					return tok
				}
				top.keys[tok] = true
				expectKey = false
				continue
			}
		}
		// After a value, the next token is a key if the innermost container is an object.
		expectKey = len(stack) > 0 && stack[len(stack)-1] != nil
	}
}
