package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// yamlCases are JSON documents and the YAML writeYAML makes of them: keys in the JSON's
// order, strings YAML would read as something else quoted, multi-line text as a literal block.
var yamlCases = []struct{ json, yaml string }{
	{`{"id":"r1","n":1,"ok":true,"none":null,"f":1.5e3}`, "id: r1\n\"n\": 1\nok: true\nnone: null\nf: 1.5e+3\n"},
	{`{"a":"true","b":"12","c":"2026-01-02T15:04:05Z","d":"x: y","e":"","f":"no","g":"-x","h":"a #b"}`,
		"a: \"true\"\nb: \"12\"\nc: \"2026-01-02T15:04:05Z\"\nd: \"x: y\"\ne: \"\"\nf: \"no\"\ng: \"-x\"\nh: \"a #b\"\n"},
	{`{"runs":[{"id":"a","tags":["x","y"]},{"id":"b","tags":[]}],"next":"","empty":{}}`,
		"runs:\n  - id: a\n    tags:\n      - x\n      - \"y\"\n  - id: b\n    tags: []\nnext: \"\"\nempty: {}\n"},
	{`{"error":{"message":"boom\n  at f()\n  at g()"}}`, "error:\n  message: |-\n    boom\n      at f()\n      at g()\n"},
	{`[[1,2],[{"k":"v"}]]`, "- - 1\n  - 2\n- - k: v\n"},
	{`{"tab":"a\tb","quote":"say \"hi\"","key with space":1,"uni":"ünï"}`,
		"tab: \"a\\tb\"\nquote: \"say \\\"hi\\\"\"\n\"key with space\": 1\nuni: \"ünï\"\n"},
	{`{"stack":"goroutine 1 [running]:\nmain.f()\n\t/src/main.go:3 +0x1","tabEnd":"a\t\nb","tabStart":"\ta\nb"}`,
		"stack: |-\n  goroutine 1 [running]:\n  main.f()\n  \t/src/main.go:3 +0x1\ntabEnd: \"a\\t\\nb\"\ntabStart: \"\\ta\\nb\"\n"},
	{`{"trailing":"line \nnext","ends":"a\nb\n"}`, "trailing: \"line \\nnext\"\nends: |\n  a\n  b\n"},
	{`{"big":1e21,"neg":-2E-7,"int":-3,"frac":0.25}`, "big: 1.0e+21\nneg: -2.0E-7\nint: -3\nfrac: 0.25\n"},
	{`"scalar"`, "scalar\n"},
	{`[]`, "[]\n"},
}

func TestWriteYAML(t *testing.T) {
	t.Parallel()
	for _, c := range yamlCases {
		var buf bytes.Buffer
		if err := writeYAML(&buf, []byte(c.json)); err != nil {
			t.Fatal(err)
		}
		if buf.String() != c.yaml {
			t.Errorf("%s:\n%s\nwant:\n%s", c.json, buf.String(), c.yaml)
		}
	}
	if err := writeYAML(&bytes.Buffer{}, []byte(`{"a":`)); err == nil {
		t.Fatal("writeYAML of broken JSON succeeded")
	}
}

// TestWriteYAMLReadsBackAsTheJSON: a YAML parser reads what writeYAML wrote as the JSON it
// came from. The parser is PyYAML (YAML 1.1, the stricter about what is not a string) when
// the machine has it; the module takes no YAML dependency for a test.
func TestWriteYAMLReadsBackAsTheJSON(t *testing.T) {
	t.Parallel()
	python, err := exec.LookPath("python3")
	if err != nil || exec.Command(python, "-c", "import yaml").Run() != nil {
		t.Skip("no python3 with PyYAML")
	}
	docs := []string{}
	for _, c := range yamlCases {
		docs = append(docs, c.json)
	}
	docs = append(docs, `{"ids":["0x1f","1e3",".inf","~","null","Yes","on","y","@a","*b","&c","!d","%e","{f}","[g]","h,i","'j'","k:"]}`,
		`{"weird keys":{"1":1,"true":2,"":3,"a: b":4}}`, `{"nested":[[[]],[{}],[{"a":[{"b":null}]}]]}`)
	script := `import json, sys, yaml
docs = json.load(sys.stdin)
for d in docs:
    if yaml.safe_load(d["yaml"]) != json.loads(d["json"]):
        print("MISMATCH", d["json"], repr(yaml.safe_load(d["yaml"])))`
	var pairs []map[string]string
	for _, d := range docs {
		var buf bytes.Buffer
		if err := writeYAML(&buf, []byte(d)); err != nil {
			t.Fatal(err)
		}
		pairs = append(pairs, map[string]string{"json": d, "yaml": buf.String()})
	}
	in, _ := json.Marshal(pairs)
	cmd := exec.Command(python, "-c", script)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Fatalf("PyYAML: %v\n%s", err, out)
	}
}

// TestFlagsFirst: the rewriting that lets flags come after arguments, and the global flags
// before the command.
func TestFlagsFirst(t *testing.T) {
	app := newApp()
	for _, c := range []struct{ in, want string }{
		{"start steps --input {} --wait", "start --input {} --wait steps"},
		{"--url U --token T start steps", "start --url U --token T steps"},
		{"--url=U -o json runs list steps --limit 2", "runs list --url=U -o json --limit 2 steps"},
		{"runs --url U list", "runs list --url U"},
		{"-o json version", "-o json version"},
		{"version --output json", "--output json version"},
		{"--version", "--version"},
		{"--help start", "--help start"},
		{"start steps --bogus", "start --bogus steps"},
		{"start -- --input x", "start -- --input x"},
		{"start steps --input - --wait", "start --input - --wait steps"},
		{"runs --generate-bash-completion", "runs --generate-bash-completion"},
	} {
		got := strings.Join(flagsFirst(app, append([]string{"wfhost"}, strings.Fields(c.in)...))[1:], " ")
		if got != c.want {
			t.Errorf("%s: %s, want %s", c.in, got, c.want)
		}
	}
}

// TestErrorFormat: the format an error prints in is read from the raw command line and the
// environment, since the flags may be what failed to parse.
func TestErrorFormat(t *testing.T) {
	t.Parallel()
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			if i := slices.Index(kv, k); i >= 0 {
				return kv[i+1]
			}
			return ""
		}
	}
	for _, c := range []struct {
		args string
		env  func(string) string
		want string
	}{
		{"start", env(), "table"},
		{"start --json", env(), "json"},
		{"-o yaml start", env(), "yaml"},
		{"start --output=json", env(), "json"},
		{"start", env("WFHOST_OUTPUT", "json"), "json"},
		{"start", env("WFHOST_JSON", "1"), "json"},
		{"start --output table", env("WFHOST_OUTPUT", "json"), "table"},
		{"start -- --json", env(), "table"},
		{"start --output xml", env(), "table"},
	} {
		if got := errorFormat(append([]string{"wfhost"}, strings.Fields(c.args)...), c.env); got != c.want {
			t.Errorf("%s: %s, want %s", c.args, got, c.want)
		}
	}
}
