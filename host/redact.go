package host

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/wfhost/wfhost/abi"
)

// Redaction: every secret value the host handed this instance (secret_get; st.secrets) is
// replaced by abi.Redacted in everything the pass writes out, matched in the form a store and a
// log keep it rather than in the bytes the guest wrote:
//
//   - a JSON value (a step output, the run's output, an error's details, a wait's match) is
//     read token by token: every string, key or value, is matched decoded (so "\u0073k_live"
//     is "sk_live") and also as each writer escapes it; a number as written, as Postgres prints
//     it back (1.2345678e7 is 12345678) and as Go formats it; a value a secret spans across
//     tokens (a secret holding JSON structure) is matched as written, compacted and as Postgres
//     renders it. A string or number that holds a secret is rewritten with the secret replaced;
//     a value a secret spans becomes the string "[redacted]".
//   - text (a name, a log line, an error's code and message, an audit record's host and path)
//     is matched as it is and as each writer escapes or quotes it (encoding/json, slog's JSON
//     and text handlers, Postgres's jsonb); text in which a rendering would still show a secret
//     after the replacement becomes "[redacted]" whole.
//
// Values are matched exactly, not by guessing: a secret a guest transforms (base64, reversed,
// cut in two by the guest itself) is not recognised, and cannot be. What redaction promises is
// that no value the host hands a guest reaches the store, the API, the logs or the traces in
// the form it was handed, however the guest escapes it and wherever the host cuts the text.
// RATIONALE.md says which secrets are in the set and why.

// maxRedactRounds bounds the replacement rounds of one text: a replacement can complete another
// secret that overlaps the marker ("ed]xyz..."); after this many rounds the text is replaced whole.
const maxRedactRounds = 4

// redactSet is the instance's secrets as the redaction functions use them, longest first so a
// secret that contains another is replaced whole. Rebuilt when secret_get has added one.
type redactSet struct {
	of      int                 // len(st.secrets) this set was built from
	values  []string            // distinct, non-empty, longest first
	raw     [][]byte            // values, as bytes
	framing bool                // a value holds a byte some writer frames or escapes text with
	spans   bool                // a value holds JSON structure or whitespace, so it can span tokens
	numeric bool                // a value is made of the bytes of a JSON number only
	escapes map[string][]string // escapesOf, by character
}

func (st *state) secretSet() *redactSet {
	if st.redactions != nil && st.redactions.of == len(st.secrets) {
		return st.redactions
	}
	rs := &redactSet{of: len(st.secrets)}
	for _, s := range st.secrets {
		v := string(s)
		if v == "" || slices.Contains(rs.values, v) {
			continue
		}
		rs.values = append(rs.values, v)
		rs.framing = rs.framing || !plainText(v)
		rs.spans = rs.spans || strings.ContainsAny(v, "{}[]:,\" \t\r\n")
		rs.numeric = rs.numeric || strings.Trim(v, "0123456789+-.eE") == ""
	}
	slices.SortStableFunc(rs.values, func(a, b string) int { return len(b) - len(a) })
	for _, v := range rs.values {
		rs.raw = append(rs.raw, []byte(v))
	}
	st.redactions = rs
	return rs
}

// plainText reports whether no writer escapes or frames any byte of s: ASCII letters, digits and
// punctuation that no JSON, slog or Postgres rendering touches.
func plainText(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_.~+/!#$%()*;?@^|", c) >= 0) {
			return false
		}
	}
	return true
}

func (rs *redactSet) in(s string) bool {
	for _, v := range rs.values {
		if strings.Contains(s, v) {
			return true
		}
	}
	return false
}

func (rs *redactSet) inBytes(b []byte) bool {
	for _, v := range rs.raw {
		if bytes.Contains(b, v) {
			return true
		}
	}
	return false
}

// redactText is s with every secret replaced by abi.Redacted; abi.Redacted alone when a
// writer's rendering of the result would still show one.
func (st *state) redactText(s string) string {
	rs := st.secretSet()
	if len(rs.values) == 0 {
		return s
	}
	for round := 0; rs.in(s); round++ {
		if round == maxRedactRounds {
			return abi.Redacted
		}
		for _, v := range rs.values {
			s = strings.ReplaceAll(s, v, abi.Redacted)
		}
	}
	if rs.renderedIn(s) {
		return abi.Redacted
	}
	return s
}

// redact is redactText over bytes, for callers that hold bytes.
func (st *state) redact(b []byte) []byte {
	if len(st.secrets) == 0 {
		return b
	}
	return []byte(st.redactText(string(b)))
}

// renderedIn reports whether a secret shows in s as some writer renders s: encoding/json (with
// and without HTML escaping), slog's JSON and text handlers, Postgres's jsonb, strconv.Quote.
//
// When a secret holds a byte some writer escapes or frames text with (a quote, a space, a
// backslash, "="), s is rendered by each writer and searched. Otherwise, which is the usual
// case and must be cheap, a secret can only show in a rendering by starting inside the escape
// sequence of one of s's characters (after its backslash: "nbcdefgh" in the "\nbcdefgh" of
// "a\x0abcdefgh") and going on with the characters that follow it; only that is checked.
func (rs *redactSet) renderedIn(s string) bool {
	if rs.framing {
		for _, r := range renderings(s) {
			if rs.in(r) {
				return true
			}
		}
		return false
	}
	for i := 0; i < len(s); {
		if c := s[i]; c >= ' ' && c < utf8.RuneSelf && c != 0x7f && strings.IndexByte(`"\<>&`, c) < 0 {
			i++
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		for _, e := range rs.escapesOf(s[i : i+size]) {
			for k := 1; k < len(e); k++ {
				tail := e[k:]
				for _, v := range rs.values {
					if strings.Contains(tail, v) || strings.HasPrefix(v, tail) && strings.HasPrefix(s[i+size:], v[len(tail):]) {
						return true
					}
				}
			}
		}
		i += size
	}
	return false
}

// escapesOf are the escape sequences the writers render one character (or invalid byte) as,
// each starting with its backslash; none for a character every writer keeps as it is.
func (rs *redactSet) escapesOf(ch string) []string {
	if e, ok := rs.escapes[ch]; ok {
		return e
	}
	var out []string
	for _, r := range renderings(ch) {
		r = strings.TrimSuffix(r, "\n")
		for _, frame := range []string{`{"msg":`, `msg=`} {
			if rest, ok := strings.CutPrefix(r, frame); ok {
				r, _, _ = strings.Cut(rest, ",")
				r, _, _ = strings.Cut(r, " v=")
			}
		}
		r = strings.TrimSuffix(strings.TrimPrefix(r, `"`), `"`)
		if i := strings.IndexByte(r, '\\'); i >= 0 && !slices.Contains(out, r[i:]) {
			out = append(out, r[i:])
		}
	}
	if rs.escapes == nil {
		rs.escapes = map[string][]string{}
	}
	rs.escapes[ch] = out
	return out
}

// renderings are s as each writer of runs, logs and API answers puts it.
func renderings(s string) []string {
	out := make([]string, 0, 6)
	html, _ := json.Marshal(s)
	out = append(out, string(html), string(jsonString(s)), pgEscape(s), strconv.Quote(s))
	for _, newHandler := range []func(*bytes.Buffer) slog.Handler{
		func(b *bytes.Buffer) slog.Handler {
			return slog.NewJSONHandler(b, &slog.HandlerOptions{ReplaceAttr: dropLevel})
		},
		func(b *bytes.Buffer) slog.Handler {
			return slog.NewTextHandler(b, &slog.HandlerOptions{ReplaceAttr: dropLevel})
		},
	} {
		var b bytes.Buffer
		// The zero time is left out by both handlers; the value is given as a message and as
		// an attribute, the two places the daemon's records carry guest text.
		r := slog.Record{Message: s}
		r.AddAttrs(slog.String("v", s))
		_ = newHandler(&b).Handle(context.Background(), r)
		out = append(out, b.String())
	}
	return out
}

func dropLevel(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.LevelKey {
		return slog.Attr{}
	}
	return a
}

// jsonString is s as a JSON string, without HTML escaping: the form the host writes.
func jsonString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// pgEscape is s as Postgres's jsonb output quotes it (escape_json).
func pgEscape(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		default:
			if c < ' ' {
				b.WriteString(`\u00`)
				b.WriteByte("0123456789abcdef"[c>>4])
				b.WriteByte("0123456789abcdef"[c&0xf])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// redactName is a step, sleep, wait or event name with its secrets redacted, still a valid
// name (abi.CheckName): cut to abi.MaxNameLen when the marker made it longer. The same name and
// the same secrets give the same result, so a replay reaches the same journal key.
func (st *state) redactName(name string) string {
	if len(st.secrets) == 0 {
		return name
	}
	r := st.redactText(name)
	for len(r) > abi.MaxNameLen {
		_, n := utf8.DecodeLastRuneInString(r[:abi.MaxNameLen+1])
		r = r[:abi.MaxNameLen+1-n]
	}
	return r
}

// storableText is guest text (a log line, an error's code or message) made storable
// (abi.StorableText) and redacted, cut to at most limit bytes (limit <= 0: no cut) only after
// the redaction, so no cut can leave part of a secret behind. Redacting before and after
// StorableText also catches a secret that its replacement of invalid bytes would complete.
func (st *state) storableText(b []byte, limit int) string {
	return st.cutText(st.redactText(abi.StorableText(st.redactText(string(b)))), limit)
}

// cutText is redacted text s cut to at most limit bytes (limit <= 0: no cut) on a rune
// boundary, and redacted again.
func (st *state) cutText(s string, limit int) string {
	if limit <= 0 || len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	// The cut keeps a prefix of redacted text; only its renderings can differ.
	return st.redactText(s[:cut])
}

// storableError is a guest's ErrorInfo made storable (abi.ErrorInfo.Storable) and redacted. Its
// code and message are redacted before they are made storable too, as storableText does: a
// secret holding a NUL, which the guest may write as \u0000, would no longer be found once the
// NUL became U+FFFD.
func (st *state) storableError(info abi.ErrorInfo) abi.ErrorInfo {
	if len(st.secrets) == 0 {
		return info.Storable()
	}
	info.Code = st.redactText(info.Code)
	info.Message = st.redactText(info.Message)
	info = info.Storable()
	info.Code = st.redactText(info.Code)
	info.Message = st.redactText(info.Message)
	if len(info.Details) > 0 {
		info.Details = st.redactJSON(info.Details)
	}
	return info
}

// auditPath is an escaped URL path made storable and redacted, in its escaped form and in the
// form it stands for: "/%73k_live..." names the same secret as "/sk_live...".
func (st *state) auditPath(escaped string) string {
	p := st.storableText([]byte(escaped), 0)
	if len(st.secrets) == 0 {
		return p
	}
	if plain, err := url.PathUnescape(p); err == nil && plain != st.redactText(plain) {
		return (&url.URL{Path: st.storableText([]byte(plain), 0)}).EscapedPath()
	}
	return p
}

// redactedJSON is what a JSON value that a secret spans across its tokens becomes.
var redactedJSON = []byte(`"` + abi.Redacted + `"`)

// redactJSON is the JSON value b, which abi.CheckJSON accepts, with every secret redacted in
// the form the stores keep it (see the top of this file). A value without secrets comes back
// as it was, byte for byte.
func (st *state) redactJSON(b []byte) []byte {
	rs := st.secretSet()
	if len(rs.values) == 0 {
		return b
	}
	if !rs.framing && !rs.numeric && !rs.inBytes(b) && plainJSON(b) {
		return b // nothing escaped, nothing a writer escapes: no token can hold a secret unseen
	}
	var out []byte // nil until a token changes
	last := 0
	for i := 0; i < len(b); {
		c := b[i]
		var end int
		var repl []byte
		switch {
		case c == '"':
			end = stringEnd(b, i)
			repl = st.redactJSONString(rs, b[i:end])
		case c == '-' || c >= '0' && c <= '9':
			end = numberEnd(b, i)
			if rs.numeric && numberHolds(rs, string(b[i:end])) {
				repl = redactedJSON
			}
		default:
			i++
			continue
		}
		if repl != nil {
			out = append(append(out, b[last:i]...), repl...)
			last = end
		}
		i = end
	}
	if out != nil {
		b = append(out, b[last:]...)
	}
	if rs.spans && spannedBy(rs, b) {
		return slices.Clone(redactedJSON)
	}
	return b
}

// redactJSONString returns the replacement of one string token, or nil to keep it.
func (st *state) redactJSONString(rs *redactSet, tok []byte) []byte {
	inner := tok[1 : len(tok)-1]
	if rs.inBytes(tok) {
		return jsonString(st.redactText(decodeJSONString(inner)))
	}
	// Most strings have nothing to decode and nothing a writer escapes: then the decoded
	// string is the token's inside, already searched.
	if !rs.framing && plainBytes(inner) {
		return nil
	}
	s := decodeJSONString(inner)
	if !rs.in(s) && !rs.renderedIn(s) {
		return nil
	}
	return jsonString(st.redactText(s))
}

// plainJSON reports whether the JSON value b has no escape and no byte a writer escapes
// inside its strings (it is ASCII without '\\', '<', '>', '&' or DEL; JSON allows no raw
// control byte in a string).
func plainJSON(b []byte) bool {
	for _, c := range b {
		if c >= 0x7f || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// plainBytes reports whether b is printable ASCII that no writer escapes.
func plainBytes(b []byte) bool {
	for _, c := range b {
		if c < ' ' || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// decodeJSONString is the inside of a JSON string token (between its quotes) decoded. The
// token is valid (CheckJSON accepted its value): every escape is complete and every
// surrogate escape paired.
func decodeJSONString(inner []byte) string {
	i := bytes.IndexByte(inner, '\\')
	if i < 0 {
		return string(inner)
	}
	var b strings.Builder
	b.Grow(len(inner))
	b.Write(inner[:i])
	for i < len(inner) {
		c := inner[i]
		if c != '\\' {
			b.WriteByte(c)
			i++
			continue
		}
		switch e := inner[i+1]; e {
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r := hex4(inner[i+2 : i+6])
			if utf16.IsSurrogate(r) && i+12 <= len(inner) {
				r = utf16.DecodeRune(r, hex4(inner[i+8:i+12]))
				i += 6
			}
			b.WriteRune(r)
			i += 4
		default: // '"', '\\', '/'
			b.WriteByte(e)
		}
		i += 2
	}
	return b.String()
}

func hex4(h []byte) rune {
	var r rune
	for _, c := range h {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		default:
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}

// stringEnd is the index just past the string token that opens at b[i].
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// numberEnd is the index just past the number token that starts at b[i].
func numberEnd(b []byte, i int) int {
	for i < len(b) && strings.IndexByte("+-0123456789.eE", b[i]) >= 0 {
		i++
	}
	return i
}

// numberHolds reports whether a secret shows in the number tok as written, as Postgres prints
// it back, or as Go formats it.
func numberHolds(rs *redactSet, tok string) bool {
	forms := []string{tok, pgNumber(tok)}
	if f, err := strconv.ParseFloat(tok, 64); err == nil {
		forms = append(forms, strconv.FormatFloat(f, 'f', -1, 64), strconv.FormatFloat(f, 'g', -1, 64), strconv.FormatFloat(f, 'e', -1, 64))
	}
	for _, f := range forms {
		if rs.in(f) {
			return true
		}
	}
	return false
}

// pgNumber is a JSON number as Postgres's numeric prints it back: plain decimal notation, the
// exponent applied, with as many fraction digits as the written ones less the exponent.
// CheckJSON bounds the exponent, so the result is at most a few thousand digits.
func pgNumber(tok string) string {
	neg := strings.HasPrefix(tok, "-")
	tok = strings.TrimPrefix(tok, "-")
	mant, expText, _ := strings.Cut(strings.ToLower(tok), "e")
	exp, _ := strconv.Atoi(expText)
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	point := len(intPart) + exp // the decimal point's place in digits
	scale := max(0, len(frac)-exp)
	var whole, fraction string
	switch {
	case point <= 0:
		whole, fraction = "0", strings.Repeat("0", -point)+digits
	case point >= len(digits):
		whole = digits + strings.Repeat("0", point-len(digits))
	default:
		whole, fraction = digits[:point], digits[point:]
	}
	whole = strings.TrimLeft(whole, "0")
	if whole == "" {
		whole = "0"
	}
	if len(fraction) < scale {
		fraction += strings.Repeat("0", scale-len(fraction))
	}
	fraction = fraction[:scale]
	out := whole
	if scale > 0 {
		out += "." + fraction
	}
	if neg && strings.Trim(whole+fraction, "0") != "" {
		out = "-" + out
	}
	return out
}

// spannedBy reports whether a secret shows across the tokens of the JSON value b: as written,
// compacted (and HTML-escaped, as encoding/json serves a json.RawMessage), or as Postgres's
// jsonb renders it (keys sorted and deduplicated, ", " and ": " between tokens) and compacted.
func spannedBy(rs *redactSet, b []byte) bool {
	pg := pgRender(b)
	forms := [][]byte{b, pg}
	for _, f := range [][]byte{b, pg} {
		var c bytes.Buffer
		if json.Compact(&c, f) == nil {
			forms = append(forms, c.Bytes())
			var h bytes.Buffer
			json.HTMLEscape(&h, c.Bytes())
			forms = append(forms, h.Bytes())
		}
	}
	for _, f := range forms {
		if rs.inBytes(f) {
			return true
		}
	}
	return false
}

// pgRender is the JSON value b as Postgres's jsonb output writes it.
func pgRender(b []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return b
	}
	var out bytes.Buffer
	pgWrite(&out, b, v)
	return out.Bytes()
}

func pgWrite(out *bytes.Buffer, raw []byte, v any) {
	switch v := v.(type) {
	case map[string]any:
		// jsonb keeps the last of duplicate keys (the decoder did too) and orders keys by
		// length, then bytes.
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b string) int {
			if len(a) != len(b) {
				return len(a) - len(b)
			}
			return strings.Compare(a, b)
		})
		out.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				out.WriteString(", ")
			}
			out.WriteString(pgEscape(k))
			out.WriteString(": ")
			pgWrite(out, raw, v[k])
		}
		out.WriteByte('}')
	case []any:
		out.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				out.WriteString(", ")
			}
			pgWrite(out, raw, e)
		}
		out.WriteByte(']')
	case string:
		out.WriteString(pgEscape(v))
	case json.Number:
		out.WriteString(pgNumber(string(v)))
	case bool:
		out.WriteString(strconv.FormatBool(v))
	default:
		out.WriteString("null")
	}
}
