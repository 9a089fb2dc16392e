package abi

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestCheckJSON(t *testing.T) {
	ok := []string{
		`null`, `true`, `false`, `0`, `-0`, `1.5e3`, `1e1000`, `1e-1000`, `0.0001e-996`, `123e998`,
		`0e1000`, `0e-1000`, `0.0e-1000`, `1.5e-1000`, "1." + strings.Repeat("0", MaxJSONScale),
		"0." + strings.Repeat("1", MaxJSONScale), "1." + strings.Repeat("2", MaxJSONScale-MaxJSONExponent) + "e-" + fmt.Sprint(MaxJSONExponent), `""`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u0001"`, `"\ud83d\ude00"`, `"é"`, `"😀"`,
		` {"a": [1, 2, {"b": null}]} `, `[]`, `{}`, `[[[]]]`, `{"a":1,"a":2}`,
		strings.Repeat("[", MaxJSONDepth) + strings.Repeat("]", MaxJSONDepth),
	}
	for _, s := range ok {
		if err := CheckJSON([]byte(s)); err != nil {
			t.Errorf("CheckJSON(%.60q) = %v, want nil", s, err)
		}
		if !json.Valid([]byte(s)) {
			t.Errorf("%.60q passed but encoding/json says it is not JSON", s)
		}
	}
	bad := map[string]string{
		``:                    "empty",
		`   `:                 "empty",
		`"\u0000"`:            "NUL",
		`{"a\u0000":1}`:       "NUL",
		`"\ud800"`:            "unpaired surrogate",
		`"\udc00"`:            "unpaired surrogate",
		`"\ud800\u0041"`:      "unpaired surrogate",
		`"\ud800x"`:           "unpaired surrogate",
		"\"\xff\"":            "invalid UTF-8",
		"\"\xed\xa0\x80\"":    "invalid UTF-8", // a surrogate encoded raw
		"\"a\x00b\"":          "control character",
		"\"a\nb\"":            "control character",
		`1e1001`:              "out of range",
		`1e-1001`:             "out of range",
		`12e1000`:             "out of range",
		`0.01e-999`:           "out of range",
		`1e99999999999999999`: "out of range",
		// A zero's exponent is bounded as a nonzero number's magnitude is (Postgres refuses
		// 0e-16384 and 0e1073741823), and so are the digits after the point (it keeps 16,383).
		`0e999999999`:  "out of range",
		`0e-999999999`: "out of range",
		`0e1001`:       "out of range",
		`-0.0e-1001`:   "out of range",
		"1." + strings.Repeat("0", MaxJSONScale+1):        "digits after the decimal point",
		"0." + strings.Repeat("0", MaxJSONScale+1):        "digits after the decimal point",
		"1." + strings.Repeat("5", 16000) + "e-400":       "digits after the decimal point",
		"0.00" + strings.Repeat("7", MaxJSONScale) + "e1": "digits after the decimal point",
		`01`:      "more than one JSON value",
		`1.`:      "invalid number",
		`-`:       "invalid number",
		`1e`:      "invalid number",
		`{"a" 1}`: "expected ':'",
		`{1:2}`:   "key must be a string",
		`[1,]`:    "invalid character",
		`[1 2]`:   "expected ','",
		`"\x"`:    "invalid escape",
		`"\u12"`:  "invalid \\u escape",
		`"abc`:    "unterminated string",
		`tru`:     "invalid character",
		`{} {}`:   "more than one JSON value",
		strings.Repeat("[", MaxJSONDepth+1) + strings.Repeat("]", MaxJSONDepth+1): "nested more than",
	}
	for s, want := range bad {
		err := CheckJSON([]byte(s))
		if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, ErrNotStorable) {
			t.Errorf("CheckJSON(%.60q) = %v, want an ErrNotStorable saying %q", s, err, want)
		}
	}
}

// FuzzCheckJSON holds CheckJSON to encoding/json: whatever it accepts is valid JSON, and valid
// JSON without the constructs it refuses on purpose is accepted.
func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,"x",null]}`, `"\ud83d\ude00"`, `"\u0000"`, `1e5`, "\"\xff\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := CheckJSON(b)
		if err == nil && !json.Valid(b) {
			t.Fatalf("CheckJSON accepted %q, which is not JSON", b)
		}
		if err != nil && json.Valid(b) {
			msg := err.Error()
			for _, meant := range []string{"NUL", "surrogate", "UTF-8", "out of range", "nested"} {
				if strings.Contains(msg, meant) {
					return
				}
			}
			t.Fatalf("CheckJSON refused valid JSON %q: %v", b, err)
		}
	})
}

func TestCheckName(t *testing.T) {
	for _, s := range []string{"a", "fetch-user", "étape 2", "a.b:c", strings.Repeat("x", MaxNameLen)} {
		if err := CheckName("step", s); err != nil {
			t.Errorf("CheckName(%q) = %v", s, err)
		}
	}
	for s, want := range map[string]string{
		"":                       "empty",
		strings.Repeat("x", 201): "limit is 200",
		"a#1":                    "marks repeated steps",
		"a/b":                    `"/"`,
		"a\x00b":                 "control character",
		"a\nb":                   "control character",
		"a\u0085b":               "control character",
		"\xff":                   "UTF-8",
	} {
		if err := CheckName("workflow", s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckName(%q) = %v, want an error saying %q", s, err, want)
		}
	}
}

func TestCheckTextAndStorableText(t *testing.T) {
	if err := CheckText("key", "abc", 10); err != nil {
		t.Error(err)
	}
	for _, s := range []string{"a\x00", "\xff", strings.Repeat("x", 11)} {
		if err := CheckText("key", s, 10); !errors.Is(err, ErrNotStorable) {
			t.Errorf("CheckText(%q) = %v, want ErrNotStorable", s, err)
		}
	}
	if got := StorableText("a\x00b\xffc"); got != "a\uFFFDb\uFFFDc" {
		t.Errorf("StorableText = %q", got)
	}
	info := ErrorInfo{Code: "x\x00", Message: "m\xff", Details: json.RawMessage(`"\u0000"`)}.Storable()
	if CheckText("code", info.Code, 0) != nil || CheckText("message", info.Message, 0) != nil || info.Details != nil {
		t.Errorf("Storable left %+v", info)
	}
	b, _ := json.Marshal(info)
	if err := CheckJSON(b); err != nil {
		t.Errorf("a Storable ErrorInfo marshals to unstorable JSON: %v", err)
	}
}
