package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
)

// Output formats: tables for people, the server's JSON as it sent it, or that JSON as YAML.
// --output (-o) picks one; --json is kept as the older spelling of --output json.

var outputFormats = []string{"table", "json", "yaml"}

func outputFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "table", EnvVars: []string{"WFHOST_OUTPUT"},
			Usage: "how results and errors print: " + strings.Join(outputFormats, ", ") + " (json and yaml are the server's response; an error is one object on stderr)"},
		&cli.BoolFlag{Name: "json", EnvVars: []string{"WFHOST_JSON"}, Usage: "the same as --output json"},
	}
}

// outputFormat is the format the command's flags ask for.
func outputFormat(c *cli.Context) (string, error) {
	format := c.String("output")
	if format == "" {
		format = "table"
	}
	if !contains(outputFormats, format) {
		return "", usagef("--output must be one of %s, not %q", strings.Join(outputFormats, ", "), format)
	}
	if c.Bool("json") {
		if format != "table" && format != "json" {
			return "", usagef("--json and --output %s disagree: give one", format)
		}
		return "json", nil
	}
	return format, nil
}

// checkOutput refuses a bad --output before the command sends anything.
func checkOutput(c *cli.Context) error {
	_, err := outputFormat(c)
	return err
}

// structured reports whether the command prints the server's document (json or yaml), where
// notes for people go to stderr instead.
func structured(c *cli.Context) bool {
	f, _ := outputFormat(c)
	return f != "table"
}

// errorFormat is the output format args ask for, read from the raw command line and the
// environment: an error has to be printed in it even when the flags failed to parse.
func errorFormat(args []string, getenv func(string) string) string {
	format := getenv("WFHOST_OUTPUT")
	if b, err := strconv.ParseBool(getenv("WFHOST_JSON")); err == nil && b {
		format = "json"
	}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		switch {
		case a == "--json" || a == "-json" || a == "--json=true":
			format = "json"
		case a == "--output" || a == "-output" || a == "-o" || a == "--o":
			if i+1 < len(args) {
				format = args[i+1]
				i++
			}
		default:
			for _, p := range []string{"--output=", "-output=", "-o=", "--o="} {
				if v, ok := strings.CutPrefix(a, p); ok {
					format = v
				}
			}
		}
	}
	if format == "json" || format == "yaml" {
		return format
	}
	return "table"
}

// printJSON prints the server's JSON indented, keeping its key order and numbers as sent.
func printJSON(c *cli.Context, raw json.RawMessage) error {
	var buf bytes.Buffer
	if err := json.Indent(&buf, bytes.TrimSpace(raw), "", "  "); err != nil {
		return fmt.Errorf("the server's response is not JSON: %w", err)
	}
	buf.WriteByte('\n')
	_, err := out(c).Write(buf.Bytes())
	return err
}

// printDocument prints raw as the --output format asks, json or yaml.
func printDocument(c *cli.Context, raw json.RawMessage) error {
	if f, _ := outputFormat(c); f == "yaml" {
		return writeYAML(out(c), raw)
	}
	return printJSON(c, raw)
}

// writeYAML prints a JSON document as block-style YAML, in the JSON's key order. It is a few
// dozen lines rather than a dependency because JSON's values are all YAML needs here: strings
// that could read as anything else are double-quoted, which YAML reads with JSON's escapes.
func writeYAML(w io.Writer, raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeOrdered(dec)
	if err != nil {
		return fmt.Errorf("the server's response is not JSON: %w", err)
	}
	var buf bytes.Buffer
	if isBlock(v) {
		emitYAML(&buf, v, 0)
	} else {
		buf.WriteString(yamlScalar(v, 0) + "\n")
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// object is a JSON object with its keys in the order they came.
type object struct {
	keys   []string
	values []any
}

func decodeOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &object{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeOrdered(dec)
				if err != nil {
					return nil, err
				}
				o.keys, o.values = append(o.keys, k.(string)), append(o.values, v)
			}
			_, err = dec.Token()
			return o, err
		case '[':
			a := []any{}
			for dec.More() {
				v, err := decodeOrdered(dec)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err = dec.Token()
			return a, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	}
	return tok, nil
}

// isBlock reports whether v is printed as an indented block: a non-empty object or array.
func isBlock(v any) bool {
	switch t := v.(type) {
	case *object:
		return len(t.keys) > 0
	case []any:
		return len(t) > 0
	}
	return false
}

// emitYAML writes a non-empty object or array with its lines indented by indent spaces.
func emitYAML(buf *bytes.Buffer, v any, indent int) {
	pad := strings.Repeat(" ", indent)
	switch t := v.(type) {
	case *object:
		for i, k := range t.keys {
			buf.WriteString(pad + yamlKey(k) + ":")
			writeValue(buf, t.values[i], indent+2)
		}
	case []any:
		for _, item := range t {
			if isBlock(item) {
				// The item's block, its first line's indentation turned into the dash.
				var sub bytes.Buffer
				emitYAML(&sub, item, indent+2)
				buf.WriteString(pad + "- ")
				buf.Write(sub.Bytes()[indent+2:])
				continue
			}
			buf.WriteString(pad + "- " + yamlScalar(item, indent+2) + "\n")
		}
	}
}

// writeValue writes what follows a key's colon: a scalar on the line, a block below it.
func writeValue(buf *bytes.Buffer, v any, indent int) {
	if isBlock(v) {
		buf.WriteString("\n")
		emitYAML(buf, v, indent)
		return
	}
	buf.WriteString(" " + yamlScalar(v, indent) + "\n")
}

func yamlScalar(v any, indent int) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(t)
	case json.Number:
		return yamlNumber(t.String())
	case string:
		return yamlString(t, indent)
	case *object:
		return "{}"
	case []any:
		return "[]"
	}
	return fmt.Sprint(v)
}

// yamlNumber is a JSON number as YAML 1.1 reads a number too: an exponent needs a dot in the
// mantissa and a sign ("1e3" is a string to a 1.1 parser, 1.0e+3 a float).
func yamlNumber(n string) string {
	i := strings.IndexAny(n, "eE")
	if i < 0 {
		return n
	}
	mantissa, exp := n[:i], n[i+1:]
	if !strings.Contains(mantissa, ".") {
		mantissa += ".0"
	}
	if exp[0] != '+' && exp[0] != '-' {
		exp = "+" + exp
	}
	return mantissa + n[i:i+1] + exp
}

// plainYAML is a string YAML reads back as that string without quotes. Anything else (one
// that starts with a digit or a sign, holds a space or a colon, a date, true, null, ...) is
// quoted, which costs only looks.
var plainYAML = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_./-]*$`)

// yamlKeywords are words YAML 1.1 or 1.2 reads as something other than a string.
var yamlKeywords = map[string]bool{"true": true, "false": true, "null": true, "yes": true, "no": true,
	"on": true, "off": true, "y": true, "n": true}

// yamlKey is a key: plain, or quoted as JSON quotes it.
func yamlKey(s string) string {
	if plainYAML.MatchString(s) && !yamlKeywords[strings.ToLower(s)] {
		return s
	}
	return quoted(s)
}

func yamlString(s string, indent int) string {
	if plainYAML.MatchString(s) && !yamlKeywords[strings.ToLower(s)] {
		return s
	}
	if indent > 0 && literalBlock(s) {
		// A stack trace reads as lines: a literal block keeps them, "|-" dropping the last
		// line break the text does not have.
		chomp := "-"
		if strings.HasSuffix(s, "\n") {
			chomp, s = "", strings.TrimSuffix(s, "\n")
		}
		pad := strings.Repeat(" ", indent)
		return "|" + chomp + "\n" + pad + strings.ReplaceAll(s, "\n", "\n"+pad)
	}
	return quoted(s)
}

// quoted is s as a JSON string, which YAML reads as a double-quoted scalar: JSON's escapes
// are all YAML's too.
func quoted(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(buf.String(), "\n")
}

// literalBlock reports whether s can be a literal block scalar and read back the same: lines
// of printable text (tabs too, past the first character: a Go stack indents its file lines
// with one), none empty at the start, none ending in a space or a tab (a literal block keeps
// them, but editors and diffs do not), at most one line break at the end.
func literalBlock(s string) bool {
	if !strings.Contains(strings.TrimSuffix(s, "\n"), "\n") || strings.HasSuffix(s, "\n\n") ||
		strings.HasPrefix(s, " ") || strings.HasPrefix(s, "\t") || strings.HasPrefix(s, "\n") {
		return false
	}
	for _, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if strings.HasSuffix(line, " ") || strings.HasSuffix(line, "\t") {
			return false
		}
		for _, r := range line {
			if r == '\t' {
				continue
			}
			if r < 0x20 || r == 0x7f || r == 0xfeff || r == 0x85 || r == 0x2028 || r == 0x2029 {
				return false
			}
		}
	}
	return true
}

// note tells the user something the server's answer does not say: on stdout with a table,
// on stderr when stdout carries the server's document.
func note(c *cli.Context, format string, a ...any) {
	w := out(c)
	if structured(c) {
		w = c.App.ErrWriter
		if w == nil {
			w = os.Stderr
		}
		fmt.Fprintf(w, "wfhost: note: "+format+"\n", a...)
		return
	}
	fmt.Fprintf(w, format+"\n", a...)
}
