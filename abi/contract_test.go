package abi

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// ABI.md is normative and this package is its Go form: these tests read ABI.md's tables and
// signatures (§3 exports, §4 host functions and §4.1 statuses, §5 error codes, §9 Extism's
// functions and exports) and the constants declared in this package's source, and require
// each to list exactly what the others do.

// abiDoc is ABI.md split into its sections: "3", "4.1", "9", ... to their text, heading
// included.
func abiDoc(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("ABI.md")
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	heading := regexp.MustCompile(`^#{2,3} (\d+(?:\.\d+)?)\.? `)
	current := ""
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if m := heading.FindStringSubmatch(line); m != nil {
			current = m[1]
		}
		sections[current] += line
	}
	return sections
}

// tableRows are the rows of the markdown tables in text, header and rule excluded, each cut
// into at most n cells (the last keeps the rest of the row: a cell may hold a "|" in code).
func tableRows(text string, n int) [][]string {
	var rows [][]string
	inTable := false
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "|") {
			inTable = false
			continue
		}
		if !inTable { // the header; the rule follows
			inTable = true
			continue
		}
		if strings.HasPrefix(line, "|---") || strings.HasPrefix(line, "| ---") {
			continue
		}
		cells := strings.SplitN(strings.TrimPrefix(line, "|"), "|", n)
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, cells)
	}
	return rows
}

// tables splits text into its markdown tables' rows, one slice per table.
func tables(text string, n int) [][][]string {
	var out [][][]string
	var block []string
	flush := func() {
		if len(block) > 0 {
			out = append(out, tableRows(strings.Join(block, "\n"), n))
			block = nil
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "|") {
			block = append(block, line)
		} else {
			flush()
		}
	}
	flush()
	return out
}

var codeSpan = regexp.MustCompile("`([^`]*)`")

// codeNames are the names in a cell such as "`complete`, `fail`".
func codeNames(cell string) []string {
	var names []string
	for _, m := range codeSpan.FindAllStringSubmatch(cell, -1) {
		names = append(names, m[1])
	}
	return names
}

// parseSignature reads ABI.md's notation, "(name_ptr, name_len i32, duration_ms i64) -> i64":
// a parameter without a type takes the type of the next one that has one.
func parseSignature(t *testing.T, s string) Signature {
	t.Helper()
	params, results, ok := strings.Cut(s, " -> ")
	if !ok || !strings.HasPrefix(params, "(") || !strings.HasSuffix(params, ")") {
		t.Fatalf("signature %q is not (params) -> results", s)
	}
	types := map[string]ValueType{"i32": I32, "i64": I64}
	var sig Signature
	if inner := strings.TrimSuffix(strings.TrimPrefix(params, "("), ")"); inner != "" {
		for _, p := range strings.Split(inner, ", ") {
			name, typ, _ := strings.Cut(p, " ")
			sig.Params = append(sig.Params, Value{Name: name})
			if typ != "" {
				vt, ok := types[typ]
				if !ok {
					t.Fatalf("signature %q: type %q", s, typ)
				}
				for i := len(sig.Params) - 1; i >= 0 && sig.Params[i].Type == 0; i-- {
					sig.Params[i].Type = vt
				}
			}
		}
		if sig.Params[len(sig.Params)-1].Type == 0 {
			t.Fatalf("signature %q: the last parameter has no type", s)
		}
	}
	results = strings.TrimSuffix(strings.TrimPrefix(results, "("), ")")
	if results != "" {
		for _, r := range strings.Split(results, ", ") {
			vt, ok := types[r]
			if !ok {
				t.Fatalf("signature %q: result type %q", s, r)
			}
			sig.Results = append(sig.Results, vt)
		}
	}
	return sig
}

// sameSet reports, as test errors, what one list has and the other lacks.
func sameSet(t *testing.T, what, docName string, doc []string, codeName string, code []string) {
	t.Helper()
	for _, d := range doc {
		if !slices.Contains(code, d) {
			t.Errorf("%s: %s lists %q, %s does not", what, docName, d, codeName)
		}
	}
	for _, c := range code {
		if !slices.Contains(doc, c) {
			t.Errorf("%s: %s has %q, %s does not list it", what, codeName, c, docName)
		}
	}
	if dups := duplicates(doc); len(dups) > 0 {
		t.Errorf("%s: %s lists %q more than once", what, docName, dups)
	}
	if dups := duplicates(code); len(dups) > 0 {
		t.Errorf("%s: %s has %q more than once", what, codeName, dups)
	}
}

func duplicates(list []string) []string {
	var dups []string
	for i, s := range list {
		if slices.Contains(list[:i], s) && !slices.Contains(dups, s) {
			dups = append(dups, s)
		}
	}
	return dups
}

// sourceConstants are the constants this package's source declares whose names start with
// prefix, by name, with their literal values (a string unquoted, a number as written).
func sourceConstants(t *testing.T, prefix string) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !strings.HasPrefix(name.Name, prefix) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok {
						t.Fatalf("%s: constant %s is not a literal", path, name.Name)
					}
					v := lit.Value
					if lit.Kind == token.STRING {
						if v, err = strconv.Unquote(lit.Value); err != nil {
							t.Fatal(err)
						}
					}
					out[name.Name] = v
				}
			}
		}
	}
	return out
}

func values(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

func TestABIDocHostFunctions(t *testing.T) {
	t.Parallel()
	doc := abiDoc(t)
	// §4: every "### 4.N `name(...) -> ...`" heading, two in some headings.
	sig := regexp.MustCompile("`([a-z_]+)(\\([^`]*)`")
	documented := map[string]string{}
	var docNames []string
	for key, text := range doc {
		if !strings.HasPrefix(key, "4.") {
			continue
		}
		heading, _, _ := strings.Cut(text, "\n")
		for _, m := range sig.FindAllStringSubmatch(heading, -1) {
			documented[m[1]] = m[2]
			docNames = append(docNames, m[1])
		}
	}
	var rows []string
	for _, f := range HostFuncs {
		rows = append(rows, f.Name)
	}
	sameSet(t, "host functions", "ABI.md §4's headings", docNames, "HostFuncs", rows)
	for _, f := range HostFuncs {
		if d, ok := documented[f.Name]; ok {
			if got, want := parseSignature(t, d).String(), f.Native().String(); got != want {
				t.Errorf("%s: ABI.md §4 says %s, HostFuncs %s", f.Name, got, want)
			}
		}
	}
	sameSet(t, "host functions", "HostFuncs", rows, "the Func constants", values(sourceConstants(t, "Func")))

	// §9: the table of Extism's host functions, the first table whose rows are signatures.
	var extismDoc, extismRows []string
	extismSigs := map[string]string{}
	for _, table := range tables(doc["9"], 3) {
		if len(table) == 0 || !strings.HasPrefix(strings.Trim(table[0][1], "`"), "(") || !strings.Contains(table[0][0], "step_run") {
			continue
		}
		for _, row := range table {
			for _, name := range codeNames(row[0]) {
				extismDoc = append(extismDoc, name)
				extismSigs[name] = strings.Trim(row[1], "`")
			}
		}
	}
	for _, f := range HostFuncs {
		if f.NativeOnly {
			continue
		}
		extismRows = append(extismRows, f.Name)
		if d, ok := extismSigs[f.Name]; ok {
			if got, want := parseSignature(t, d).String(), f.Extism().String(); got != want {
				t.Errorf("%s: ABI.md §9 says %s, HostFuncs %s", f.Name, got, want)
			}
		}
	}
	sameSet(t, "Extism host functions", "ABI.md §9's table", extismDoc, "HostFuncs", extismRows)
}

func TestABIDocExports(t *testing.T) {
	t.Parallel()
	doc := abiDoc(t)
	// §3: | `export` | `signature` | meaning |, "memory" for the memory.
	var docNames, rows []string
	for _, row := range tableRows(doc["3"], 3) {
		name := strings.Trim(row[0], "`")
		docNames = append(docNames, name)
		if name == ExportMemory {
			if row[1] != "memory" {
				t.Errorf("ABI.md §3: %s is %q, want memory", name, row[1])
			}
			continue
		}
		i := slices.IndexFunc(GuestExports, func(e Export) bool { return e.Name == name })
		if i < 0 {
			continue // sameSet reports it
		}
		e := GuestExports[i]
		if got, want := parseSignature(t, strings.Trim(row[1], "`")).String(), e.Signature().String(); got != want {
			t.Errorf("%s: ABI.md §3 says %s, GuestExports %s", name, got, want)
		}
		if optional := strings.HasPrefix(row[2], "optional"); optional != e.Optional {
			t.Errorf("%s: ABI.md §3 says optional %v, GuestExports %v", name, optional, e.Optional)
		}
	}
	rows = append(rows, ExportMemory)
	for _, e := range GuestExports {
		rows = append(rows, e.Name)
	}
	sameSet(t, "exports", "ABI.md §3", docNames, "GuestExports and ExportMemory", rows)
	sameSet(t, "exports", "GuestExports and ExportMemory", rows, "the Export constants", values(sourceConstants(t, "Export")))

	// §9: "It exports these Extism plug-in functions, each `() -> i32`:" and a table of
	// | `export` | meaning |, in which an optional one gives its own signature.
	shape := doc["9"][strings.Index(doc["9"], "**Shape.**"):]
	each := regexp.MustCompile("each `([^`]*)`").FindStringSubmatch(shape)
	if each == nil {
		t.Fatal("ABI.md §9 does not say the signature of each Extism export")
	}
	docNames = nil
	for _, row := range tables(shape, 2)[0] {
		name := strings.Trim(row[0], "`")
		docNames = append(docNames, name)
		i := slices.IndexFunc(ExtismExports, func(e Export) bool { return e.Name == name })
		if i < 0 {
			continue
		}
		e := ExtismExports[i]
		want := each[1]
		if strings.HasPrefix(row[1], "optional") {
			want = codeNames(row[1])[0]
		}
		if got := e.Signature().String(); parseSignature(t, want).String() != got {
			t.Errorf("%s: ABI.md §9 says %s, ExtismExports %s", name, want, got)
		}
		if optional := strings.HasPrefix(row[1], "optional"); optional != e.Optional {
			t.Errorf("%s: ABI.md §9 says optional %v, ExtismExports %v", name, optional, e.Optional)
		}
	}
	rows = nil
	for _, e := range ExtismExports {
		rows = append(rows, e.Name)
	}
	sameSet(t, "Extism exports", "ABI.md §9", docNames, "ExtismExports", rows)
}

func TestABIDocStatuses(t *testing.T) {
	t.Parallel()
	// §4.1: | `STATUS` | value | meaning |.
	var docNames, names []string
	docValues := map[string]string{}
	for _, row := range tableRows(abiDoc(t)["4.1"], 3) {
		name := strings.Trim(row[0], "`")
		docNames = append(docNames, name)
		docValues[name] = row[1]
	}
	for _, s := range Statuses {
		name := strings.ToUpper(s.String())
		names = append(names, name)
		if v, ok := docValues[name]; ok && v != strconv.Itoa(int(s)) {
			t.Errorf("status %s: ABI.md §4.1 says %s, abi %d", name, v, s)
		}
	}
	sameSet(t, "statuses", "ABI.md §4.1", docNames, "Statuses", names)
	var statusValues []string
	for _, s := range Statuses {
		statusValues = append(statusValues, strconv.Itoa(int(s)))
	}
	slices.Sort(statusValues)
	sameSet(t, "status values", "Statuses", statusValues, "the Status constants", values(sourceConstants(t, "Status")))
}

func TestABIDocErrorCodes(t *testing.T) {
	t.Parallel()
	// §5: two tables of | `code` | when |, the host's and the capability calls'.
	ts := tables(abiDoc(t)["5"], 2)
	if len(ts) != 2 {
		t.Fatalf("ABI.md §5 has %d tables, want the host's codes and the capability calls'", len(ts))
	}
	column := func(rows [][]string) []string {
		var out []string
		for _, row := range rows {
			out = append(out, strings.Trim(row[0], "`"))
		}
		return out
	}
	sameSet(t, "host codes", "ABI.md §5's first table", column(ts[0]), "HostCodes", HostCodes)
	sameSet(t, "capability codes", "ABI.md §5's second table", column(ts[1]), "CapabilityCodes", CapabilityCodes)
	all := append(slices.Clone(HostCodes), CapabilityCodes...)
	sameSet(t, "codes", "HostCodes and CapabilityCodes", all, "the Code constants", values(sourceConstants(t, "Code")))
}

// The tables themselves are well formed: the transports rely on it.
func TestContractTables(t *testing.T) {
	t.Parallel()
	for _, f := range HostFuncs {
		if len(f.Params) > MaxParams {
			t.Errorf("%s has %d parameters, MaxParams is %d", f.Name, len(f.Params), MaxParams)
		}
		for _, p := range f.Params {
			if p.Name == "" || p.Kind == Data && p.Type != 0 || p.Kind == Scalar && p.Type != I32 && p.Type != I64 || p.Kind != Data && p.Kind != Scalar {
				t.Errorf("%s: parameter %+v", f.Name, p)
			}
		}
	}
	if got, want := HostFuncs[0].Native().String(), "(name_ptr, name_len, opts_ptr, opts_len i32) -> i64"; got != want {
		t.Errorf("step_run natively: %s, want %s", got, want)
	}
	if got, want := HostFuncs[1].Extism().String(), "(outcome i32, data i64) -> i64"; got != want {
		t.Errorf("step_done under Extism: %s, want %s", got, want)
	}
}
