package abi

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The rules every value a run writes must meet before any store sees it. Both stores keep what
// these allow and nothing else, so a value that passes here is never refused by Postgres or
// SQLite later (a refusal there would leave the run retrying the same write forever). ABI.md
// §4.2 and §5 state them; the API applies them to what clients send, the host to what guests
// write.

// MaxJSONDepth bounds the nesting of a stored JSON value. SQLite's JSON functions stop at 1,000
// levels; half of that leaves room for the objects the host wraps values in.
const MaxJSONDepth = 512

// MaxJSONExponent bounds the magnitude of a JSON number: its most significant digit lies at
// most this many decimal places from the point, either way. Postgres's numeric refuses numbers
// much past 1e131071 or 1e-16383, and expands 1e1000 into a thousand digits when it prints one
// back; the bound keeps both a refusal and that growth out of reach.
const MaxJSONExponent = 1000

// MaxJSONScale bounds the digits after a number's decimal point once its exponent is applied
// (1.50 has 2, 1e-3 has 3, 15e-1 has 1): Postgres's numeric keeps at most 16,383 and refuses
// the rest, whatever the number's magnitude, so 1.000... with 16,384 zeros is refused too.
const MaxJSONScale = 16383

// ErrNotStorable is wrapped by every CheckJSON and CheckText error.
var ErrNotStorable = errors.New("not storable")

// CheckName applies ABI.md §4.2 to a name of kind what ("workflow", "step", "event", ...): 1 to
// MaxNameLen bytes of UTF-8, with no control character, no SuffixSep (it marks repeated steps)
// and no "/" (names are URL path segments in the API). One rule for every kind of name, so a
// name the host accepts from a module is one the API can address.
func CheckName(what, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%s name is empty", what)
	case len(name) > MaxNameLen:
		return fmt.Errorf("%s name is %d bytes, the limit is %d", what, len(name), MaxNameLen)
	case !utf8.ValidString(name):
		return fmt.Errorf("%s name is not valid UTF-8", what)
	case strings.Contains(name, SuffixSep):
		return fmt.Errorf("%s name %q contains %q, which marks repeated steps", what, name, SuffixSep)
	case strings.Contains(name, "/"):
		return fmt.Errorf("%s name %q contains \"/\"", what, name)
	}
	for _, r := range name {
		if isControl(r) {
			return fmt.Errorf("%s name %q contains the control character %U", what, name, r)
		}
	}
	return nil
}

// CheckText requires a stored string (an idempotency key, a version, a token's name) to be
// valid UTF-8 without NUL, which no Postgres text column can hold, and at most max bytes
// (max <= 0: no bound).
func CheckText(what, s string, max int) error {
	switch {
	case max > 0 && len(s) > max:
		return fmt.Errorf("%w: %s is %d bytes, the limit is %d", ErrNotStorable, what, len(s), max)
	case !utf8.ValidString(s):
		return fmt.Errorf("%w: %s is not valid UTF-8", ErrNotStorable, what)
	case strings.IndexByte(s, 0) >= 0:
		return fmt.Errorf("%w: %s contains a NUL character", ErrNotStorable, what)
	}
	return nil
}

// StorableText is s made storable as text: invalid UTF-8 and NUL become U+FFFD. For text the
// host keeps whatever its writer meant (guest log lines, error messages), where refusing would
// lose the rest of it.
func StorableText(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

// Storable returns info with its code and message made storable (StorableText) and its details
// dropped unless CheckJSON accepts them: the guest's words survive, and a run's error can always
// be written.
func (e ErrorInfo) Storable() ErrorInfo {
	e.Code = StorableText(e.Code)
	e.Message = StorableText(e.Message)
	if len(e.Details) > 0 && CheckJSON(e.Details) != nil {
		e.Details = nil
	}
	return e
}

// CheckJSON reports why b is not one JSON value that every store keeps as it means: it must be
// valid JSON (RFC 8259) in valid UTF-8, with no \u0000 escape and no unpaired surrogate escape
// (Postgres's jsonb refuses both, though Go's encoding/json writes the first), nesting at most
// MaxJSONDepth deep, and numbers whose most significant digit (a zero's exponent) is within
// MaxJSONExponent and with at most MaxJSONScale digits after the point. Surrounding whitespace
// is allowed.
func CheckJSON(b []byte) error {
	c := jsonChecker{b: b}
	c.space()
	if c.pos >= len(b) {
		return fmt.Errorf("%w: empty JSON", ErrNotStorable)
	}
	if err := c.value(0); err != nil {
		return err
	}
	c.space()
	if c.pos != len(b) {
		return c.errf("more than one JSON value")
	}
	return nil
}

// jsonChecker is a single-pass validator of CheckJSON's rules; it allocates nothing.
type jsonChecker struct {
	b   []byte
	pos int
}

func (c *jsonChecker) errf(format string, args ...any) error {
	return fmt.Errorf("%w: at byte %d: %s", ErrNotStorable, c.pos, fmt.Sprintf(format, args...))
}

func (c *jsonChecker) space() {
	for c.pos < len(c.b) {
		switch c.b[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

func (c *jsonChecker) value(depth int) error {
	if c.pos >= len(c.b) {
		return c.errf("unexpected end of JSON")
	}
	switch ch := c.b[c.pos]; {
	case ch == '{' || ch == '[':
		if depth >= MaxJSONDepth {
			return c.errf("nested more than %d deep", MaxJSONDepth)
		}
		return c.container(depth + 1)
	case ch == '"':
		return c.string()
	case ch == '-' || ch >= '0' && ch <= '9':
		return c.number()
	case c.literal("true"), c.literal("false"), c.literal("null"):
		return nil
	default:
		return c.errf("invalid character %q", ch)
	}
}

func (c *jsonChecker) literal(word string) bool {
	if strings.HasPrefix(string(c.b[c.pos:min(len(c.b), c.pos+len(word))]), word) {
		c.pos += len(word)
		return true
	}
	return false
}

// container checks an object or an array, its opening bracket at c.pos.
func (c *jsonChecker) container(depth int) error {
	object := c.b[c.pos] == '{'
	closing := byte(']')
	if object {
		closing = '}'
	}
	c.pos++
	c.space()
	if c.pos < len(c.b) && c.b[c.pos] == closing {
		c.pos++
		return nil
	}
	for {
		c.space()
		if object {
			if c.pos >= len(c.b) || c.b[c.pos] != '"' {
				return c.errf("an object key must be a string")
			}
			if err := c.string(); err != nil {
				return err
			}
			c.space()
			if c.pos >= len(c.b) || c.b[c.pos] != ':' {
				return c.errf("expected ':' after an object key")
			}
			c.pos++
			c.space()
		}
		if err := c.value(depth); err != nil {
			return err
		}
		c.space()
		if c.pos >= len(c.b) {
			return c.errf("unexpected end of JSON")
		}
		switch c.b[c.pos] {
		case ',':
			c.pos++
		case closing:
			c.pos++
			return nil
		default:
			return c.errf("expected ',' or %q", closing)
		}
	}
}

// string checks a string, its opening quote at c.pos.
func (c *jsonChecker) string() error {
	c.pos++
	for c.pos < len(c.b) {
		ch := c.b[c.pos]
		switch {
		case ch == '"':
			c.pos++
			return nil
		case ch == '\\':
			if err := c.escape(); err != nil {
				return err
			}
		case ch < 0x20:
			return c.errf("control character %#x in a string", ch)
		case ch < utf8.RuneSelf:
			c.pos++
		default:
			r, n := utf8.DecodeRune(c.b[c.pos:])
			if r == utf8.RuneError && n <= 1 {
				return c.errf("invalid UTF-8")
			}
			c.pos += n
		}
	}
	return c.errf("unterminated string")
}

// escape checks one escape sequence, its backslash at c.pos.
func (c *jsonChecker) escape() error {
	if c.pos+1 >= len(c.b) {
		return c.errf("unterminated escape")
	}
	switch c.b[c.pos+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		c.pos += 2
		return nil
	case 'u':
	default:
		return c.errf("invalid escape \\%c", c.b[c.pos+1])
	}
	r, ok := c.hex4(c.pos + 2)
	if !ok {
		return c.errf("invalid \\u escape")
	}
	switch {
	case r == 0:
		return c.errf("\\u0000 (NUL) cannot be stored")
	case r >= 0xDC00 && r <= 0xDFFF:
		return c.errf("unpaired surrogate \\u%04x", r)
	case r >= 0xD800 && r <= 0xDBFF:
		// A high surrogate must be followed at once by an escaped low one.
		if c.pos+7 < len(c.b) && c.b[c.pos+6] == '\\' && c.b[c.pos+7] == 'u' {
			if lo, ok := c.hex4(c.pos + 8); ok && lo >= 0xDC00 && lo <= 0xDFFF {
				c.pos += 12
				return nil
			}
		}
		return c.errf("unpaired surrogate \\u%04x", r)
	}
	c.pos += 6
	return nil
}

func (c *jsonChecker) hex4(at int) (rune, bool) {
	if at+4 > len(c.b) {
		return 0, false
	}
	var r rune
	for _, h := range c.b[at : at+4] {
		r <<= 4
		switch {
		case h >= '0' && h <= '9':
			r |= rune(h - '0')
		case h >= 'a' && h <= 'f':
			r |= rune(h - 'a' + 10)
		case h >= 'A' && h <= 'F':
			r |= rune(h - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}

// number checks a number's grammar and that its magnitude is within MaxJSONExponent.
func (c *jsonChecker) number() error {
	start := c.pos
	if c.b[c.pos] == '-' {
		c.pos++
	}
	// Integer part: 0, or a digit 1-9 and more digits.
	intStart := c.pos
	if c.pos < len(c.b) && c.b[c.pos] == '0' {
		c.pos++
	} else if !c.digits() {
		return c.errf("invalid number")
	}
	intDigits := c.pos - intStart
	// lead is the decimal position of the first nonzero digit: intDigits-1 for 123 (2), -3 for
	// 0.00123; it stays at 0 for a zero value.
	lead, nonzero := 0, false
	for i := intStart; i < intStart+intDigits; i++ {
		if c.b[i] != '0' {
			lead, nonzero = intStart+intDigits-1-i, true
			break
		}
	}
	fracDigits := 0
	if c.pos < len(c.b) && c.b[c.pos] == '.' {
		c.pos++
		fracStart := c.pos
		if !c.digits() {
			return c.errf("invalid number")
		}
		fracDigits = c.pos - fracStart
		if !nonzero {
			for i := fracStart; i < c.pos; i++ {
				if c.b[i] != '0' {
					lead, nonzero = -(i - fracStart + 1), true
					break
				}
			}
		}
	}
	exp := 0
	if c.pos < len(c.b) && (c.b[c.pos] == 'e' || c.b[c.pos] == 'E') {
		c.pos++
		neg := false
		if c.pos < len(c.b) && (c.b[c.pos] == '+' || c.b[c.pos] == '-') {
			neg = c.b[c.pos] == '-'
			c.pos++
		}
		expStart := c.pos
		if !c.digits() {
			return c.errf("invalid number")
		}
		for _, d := range c.b[expStart:c.pos] {
			if exp = exp*10 + int(d-'0'); exp > 10*MaxJSONScale {
				break // already far out of range; stop before it can overflow
			}
		}
		if neg {
			exp = -exp
		}
		lead += exp
	}
	literal := func() string { return truncate(string(c.b[start:min(len(c.b), start+40)]), 40) }
	switch {
	case nonzero && (lead > MaxJSONExponent || lead < -MaxJSONExponent):
		c.pos = start
		return c.errf("number %s is out of range (magnitude 1e%d; the bound is 1e±%d)", literal(), lead, MaxJSONExponent)
	case !nonzero && (exp > MaxJSONExponent || exp < -MaxJSONExponent):
		c.pos = start
		return c.errf("number %s is out of range (a zero with the exponent %d; the bound is ±%d)", literal(), exp, MaxJSONExponent)
	case fracDigits-exp > MaxJSONScale:
		c.pos = start
		return c.errf("number %s is out of range (%d digits after the decimal point; the bound is %d)", literal(), fracDigits-exp, MaxJSONScale)
	}
	return nil
}

func (c *jsonChecker) digits() bool {
	start := c.pos
	for c.pos < len(c.b) && c.b[c.pos] >= '0' && c.b[c.pos] <= '9' {
		c.pos++
	}
	return c.pos > start
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// isControl reports the C0 and C1 control characters and DEL.
func isControl(r rune) bool {
	return r < 0x20 || r >= 0x7f && r < 0xa0
}
