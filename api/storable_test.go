package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

// FuzzStorableInputIsStored holds abi.CheckJSON to the real stores: every value it accepts is
// accepted by Postgres's jsonb and by the embedded store as a run's input, and read back
// meaning the same; every value it refuses is refused by the engine (ErrInvalid) before a store
// sees it. The engine is not started, so the runs stay pending and nothing executes them.
// Inputs are the fuzzer's bytes as they are, or a JSON text generated from them that keeps
// close to the rule's edges (escapes, surrogates, exponents and scales near their bounds,
// nesting near its bound).
func FuzzStorableInputIsStored(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,"x",null,true]}`, `"\ud83d\ude00"`, `"\u0000"`, `"\ud800"`, "\"\xff\"", `1e1000`, `1e1001`,
		`0e-16384`, `0e999999999`, "1." + strings.Repeat("0", 16384), `-0`, `{"a":1,"a":2}`, `" \/\b\f\n\r\t"`,
		strings.Repeat("[", abi.MaxJSONDepth) + strings.Repeat("]", abi.MaxJSONDepth),
		strings.Repeat("[", abi.MaxJSONDepth+1) + strings.Repeat("]", abi.MaxJSONDepth+1),
	} {
		f.Add([]byte(s), false)
	}
	for _, s := range []string{"\x06\x01\x03\x07", "\x01\x02\x09\x05\xfe", "\x03\x04\x05\x06\x07\x08", "\x07\xff\x05", "\x05\x04\x01\x03\x02\x03\x01"} {
		f.Add([]byte(s), true)
	}
	type target struct {
		kind storeKind
		eng  *engine.Engine
		st   store.Store
	}
	ctx := context.Background()
	var targets []target
	for _, kind := range bothStores {
		st := openStore(f, kind)
		eng, err := engine.New(engine.Config{Store: st, Runtime: testenv.Runtime(f)})
		if err != nil {
			f.Fatal(err)
		}
		if err := st.EnsureTenant(ctx, store.DefaultTenant); err != nil {
			f.Fatal(err)
		}
		if _, err := eng.Deploy(ctx, store.DefaultTenant, testenv.Fixture(f, "examples.wasm"), false); err != nil {
			f.Fatal(err)
		}
		targets = append(targets, target{kind, eng, st})
	}
	f.Fuzz(func(t *testing.T, data []byte, generate bool) {
		input := data
		if generate {
			input = generateJSON(data)
		}
		if len(input) == 0 {
			return // no input: the engine starts the run with null
		}
		rule := abi.CheckJSON(input)
		for _, tg := range targets {
			run, _, err := tg.eng.StartRun(ctx, store.DefaultTenant, engine.StartRequest{Workflow: "onboarding", Input: input})
			if rule != nil {
				if !errors.Is(err, engine.ErrInvalid) && !errors.Is(err, engine.ErrTooLarge) {
					t.Fatalf("%s: CheckJSON refuses %.200q (%v), and the engine answered %v", tg.kind, input, rule, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: CheckJSON accepts %.200q, and starting a run with it failed: %v", tg.kind, input, err)
			}
			stored, err := tg.st.GetRun(ctx, store.DefaultTenant, run.ID)
			if err != nil {
				t.Fatalf("%s: read back the run of %.200q: %v", tg.kind, input, err)
			}
			if err := sameJSON(input, stored.Input); err != nil {
				t.Fatalf("%s: %.200q came back as %.200q: %v", tg.kind, input, stored.Input, err)
			}
		}
	})
}

// sameJSON reports how two JSON texts differ in meaning: numbers compare by value, objects by
// their keys (the last of equal keys counts, as in Postgres's jsonb), strings exactly.
func sameJSON(a, b []byte) error {
	decode := func(text []byte) (any, error) {
		d := json.NewDecoder(bytes.NewReader(text))
		d.UseNumber()
		var v any
		return v, d.Decode(&v)
	}
	va, err := decode(a)
	if err != nil {
		return fmt.Errorf("the input does not decode: %w", err)
	}
	vb, err := decode(b)
	if err != nil {
		return fmt.Errorf("what was stored does not decode: %w", err)
	}
	return sameValue("$", va, vb)
}

func sameValue(at string, a, b any) error {
	switch a := a.(type) {
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(bm) != len(a) {
			return fmt.Errorf("%s: %v, not %v", at, b, a)
		}
		for k, v := range a {
			if err := sameValue(at+"."+k, v, bm[k]); err != nil {
				return err
			}
		}
	case []any:
		bs, ok := b.([]any)
		if !ok || len(bs) != len(a) {
			return fmt.Errorf("%s: %v, not %v", at, b, a)
		}
		for i := range a {
			if err := sameValue(fmt.Sprintf("%s[%d]", at, i), a[i], bs[i]); err != nil {
				return err
			}
		}
	case json.Number:
		bn, ok := b.(json.Number)
		x, okA := new(big.Rat).SetString(a.String())
		y, okB := new(big.Rat).SetString(string(bn))
		if !ok || !okA || !okB || x.Cmp(y) != 0 {
			return fmt.Errorf("%s: %v, not %v", at, b, a)
		}
	default:
		if a != b {
			return fmt.Errorf("%s: %#v, not %#v", at, b, a)
		}
	}
	return nil
}

// generateJSON makes a JSON text from the fuzzer's bytes, each byte choosing what comes next,
// with the pieces the storable rule is about: escapes and raw bytes a store refuses or keeps,
// exponents and digits after the point near their bounds, and deep nesting. Not every text it
// makes is valid JSON or storable: the test needs both kinds.
func generateJSON(data []byte) []byte {
	g := &jsonGenerator{in: data}
	g.value(0)
	return g.out.Bytes()
}

type jsonGenerator struct {
	in  []byte
	out bytes.Buffer
}

func (g *jsonGenerator) next() int {
	if len(g.in) == 0 {
		return 0
	}
	c := g.in[0]
	g.in = g.in[1:]
	return int(c)
}

var (
	generatedChars = []string{`a`, `\u0000`, `\ud800`, `\udc00`, `\ud83d\ude00`, `\ud800\u0041`, "\xff", "\xed\xa0\x80",
		`é`, `😀`, `\"`, `\\`, `\/`, `\n`, `\u0001`, "\x7f", `\u00e9`, `\uFFFF`, "\u2028", "\x00", `\x`}
	generatedExponents = []int{0, 1, -1, 2, 999, 1000, 1001, -999, -1000, -1001, 16383, -16383, -16384, 99999, -99999}
)

func (g *jsonGenerator) value(depth int) {
	switch g.next() % 9 {
	case 0:
		g.out.WriteString([]string{"null", "true", "false"}[g.next()%3])
	case 1, 2:
		g.number()
	case 3, 4:
		g.string()
	case 5:
		g.out.WriteByte('[')
		for i := range g.next() % 4 {
			if i > 0 {
				g.out.WriteByte(',')
			}
			g.value(depth + 1)
		}
		g.out.WriteByte(']')
	case 6:
		g.out.WriteByte('{')
		for i := range g.next() % 4 {
			if i > 0 {
				g.out.WriteByte(',')
			}
			g.string()
			g.out.WriteByte(':')
			g.value(depth + 1)
		}
		g.out.WriteByte('}')
	case 7:
		// Nesting around the bound: 505 to 520 levels.
		n := abi.MaxJSONDepth - 7 + g.next()%16 - depth
		g.out.WriteString(strings.Repeat("[", max(n, 0)))
		g.value(depth + n)
		g.out.WriteString(strings.Repeat("]", max(n, 0)))
	case 8:
		// Many digits after the point, around the scale bound.
		g.out.WriteString("0." + strings.Repeat("0", abi.MaxJSONScale-8+g.next()%16) + "1")
	}
}

func (g *jsonGenerator) number() {
	if g.next()%2 == 1 {
		g.out.WriteByte('-')
	}
	if lead := g.next() % 10; lead == 0 {
		g.out.WriteByte('0')
	} else {
		fmt.Fprintf(&g.out, "%d%s", lead, strings.Repeat("7", g.next()%5))
	}
	if n := g.next() % 4; n > 0 {
		g.out.WriteString("." + strings.Repeat("0", g.next()%3) + strings.Repeat("3", n))
	}
	if g.next()%2 == 1 {
		exp := generatedExponents[g.next()%len(generatedExponents)]
		fmt.Fprintf(&g.out, "e%d", exp)
	}
}

func (g *jsonGenerator) string() {
	g.out.WriteByte('"')
	for range g.next() % 5 {
		g.out.WriteString(generatedChars[g.next()%len(generatedChars)])
	}
	g.out.WriteByte('"')
}
