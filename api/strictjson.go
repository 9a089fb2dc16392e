package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/wfhost/wfhost/abi"
)

// Every JSON body the API reads goes through jsonBody and then decodeStrict or checkStrict:
// one strict reading for every endpoint. encoding/json alone is lenient where a client's
// mistake should be an answer: it matches field names in any case, keeps the last of two equal
// keys, and turns invalid UTF-8 and unpaired surrogates into U+FFFD without a word (Go 1.26's
// encoding/json/v2, which is strict about all of this, still needs GOEXPERIMENT=jsonv2). So a
// body is first scanned once, refusing what encoding/json would let through, and only then
// decoded. Every refusal names the field, as a path such as input.items[2].id.

// maxBodyDepth bounds the nesting the scan follows: a run's input or a payload may be nested
// abi.MaxJSONDepth deep inside the request's own object.
const maxBodyDepth = abi.MaxJSONDepth + 1

// bodyEnvelopeBytes is what a request body may hold beyond the input or payload a tenant's
// limits allow: the request's own fields around it.
const bodyEnvelopeBytes = 64 << 10

// bodyLimit is the most of a JSON body a request reads: h.cfg.MaxBodyBytes, or for a tenant
// whose limits allow a larger input or event, that and bodyEnvelopeBytes, so that what a
// tenant may start or send fits the request that carries it.
func (h *Handler) bodyLimit(r *http.Request) int64 {
	limit := h.cfg.MaxBodyBytes
	t, _ := r.Context().Value(tenantKey{}).(string)
	if t == "" || h.cfg.Service == nil {
		return limit
	}
	l, err := h.cfg.Service.Limits(r.Context(), t)
	if err != nil {
		return limit
	}
	return max(limit, int64(max(l.MaxInputBytes, l.MaxEventBytes))+bodyEnvelopeBytes)
}

// jsonBody reads a JSON request body, at most h.bodyLimit of it (413 past that). A body
// must come with Content-Type application/json, with no charset but UTF-8 (415 otherwise). No
// body at all, or only white space, is nil: the routes whose body is optional take that as
// empty.
func (h *Handler) jsonBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	types := r.Header.Values("Content-Type")
	if len(types) > 1 {
		return nil, unsupportedMediaType("Content-Type is given %d times", len(types))
	}
	if len(types) == 1 {
		if err := checkJSONMediaType(types[0]); err != nil {
			return nil, err
		}
	}
	body, err := readBody(w, r, h.bodyLimit(r))
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil
	}
	if len(types) == 0 {
		return nil, unsupportedMediaType("Content-Type: the request has a body, and it must be application/json")
	}
	return body, nil
}

func checkJSONMediaType(contentType string) error {
	mediaType, params, err := mime.ParseMediaType(contentType)
	if err != nil || mediaType != "application/json" {
		return unsupportedMediaType("Content-Type must be application/json, not %q", contentType)
	}
	if charset, ok := params["charset"]; ok && !strings.EqualFold(charset, "utf-8") {
		return unsupportedMediaType("Content-Type: JSON is UTF-8, not charset %q", charset)
	}
	return nil
}

func unsupportedMediaType(format string, args ...any) error {
	return &requestError{status: http.StatusUnsupportedMediaType, code: "unsupported_media_type", message: fmt.Sprintf(format, args...)}
}

// decodeJSON reads a JSON object body into v (a pointer to a struct) strictly; no body leaves
// v as it is.
func (h *Handler) decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := h.jsonBody(w, r)
	if err != nil || body == nil {
		return err
	}
	return decodeStrict(body, v)
}

// decodeRequiredJSON is decodeJSON for an operation whose body the document says is required:
// no body, or only white space, is a 400 rather than the zero value of v, which would
// otherwise reach the service as a request the client never made (a tenant's limits
// replaced by none, a schedule of nothing).
func (h *Handler) decodeRequiredJSON(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := h.jsonBody(w, r)
	if err != nil {
		return err
	}
	if body == nil {
		return errBodyRequired("a JSON object (Content-Type: application/json)")
	}
	return decodeStrict(body, v)
}

// errBodyRequired is the 400 of a required body that is missing or empty; what says what to
// send.
func errBodyRequired(what string) error {
	return badRequest("invalid_request", "the request body is required: send "+what)
}

// decodeStrict decodes body into v (a pointer to a struct) after checkStrict: each key of an
// object that maps to a struct must be one of its fields' JSON names, exactly.
func decodeStrict(body []byte, v any) error {
	if err := checkStrict(body, "", reflect.TypeOf(v).Elem()); err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return badRequest("invalid_json", fmt.Sprintf("%s: want %s, not %s", fieldName(typeErr.Field), describeType(typeErr.Type), typeErr.Value))
		}
		return badRequest("invalid_json", "request body: "+err.Error())
	}
	return nil
}

// checkStrict scans one JSON value, the whole of body, and refuses: a syntax error; anything
// after the value; a key given twice in one object; a key that is not a field of the struct
// the object decodes into (t says which; nil takes any keys); a string, key or number that
// abi.CheckJSON refuses (NUL, unpaired surrogates, invalid UTF-8, numbers out of range); and
// nesting past maxBodyDepth. root names the value in messages: "" for a request's own object,
// whose fields are named by themselves, or a name such as "payload".
//
// The scan only finds where each token ends and checks the structure around it; each string
// and number is checked by abi.CheckJSON, so the rule for what a store keeps stays in abi. It
// allocates only the keys it compares, which keeps it within a small factor of encoding/json
// (api/RATIONALE.md has the numbers).
func checkStrict(body []byte, root string, t reflect.Type) error {
	s := &strictScanner{b: body, root: root}
	s.space()
	if err := s.value(t, 0, true); err != nil {
		return err
	}
	s.space()
	if s.pos < len(s.b) {
		return badRequest("invalid_json", fmt.Sprintf("request body: more than one JSON value (%s follows at byte %d)", abbreviate(string(s.b[s.pos:]), 20), s.pos))
	}
	return nil
}

// strictScanner is checkStrict's state: the text, where it is, and the path to the value it
// is in (rendered only for a message).
type strictScanner struct {
	b    []byte
	pos  int
	root string
	path []pathStep
	// keys holds the keys of the objects being scanned, each object's after those of the
	// objects it is in: one slice for the whole body instead of one per object.
	keys [][]byte
}

// pathStep is one step of a path: a key, or an index when index >= 0.
type pathStep struct {
	key   []byte
	index int
}

// at renders the current path: root, then .key and [index] steps.
func (s *strictScanner) at() string {
	var b strings.Builder
	b.WriteString(s.root)
	for _, p := range s.path {
		if p.index >= 0 {
			fmt.Fprintf(&b, "[%d]", p.index)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.Write(p.key)
	}
	return b.String()
}

func (s *strictScanner) syntaxError(want string) error {
	found := "the end of the body"
	if s.pos < len(s.b) {
		found = fmt.Sprintf("%q", abbreviate(string(s.b[s.pos:]), 10))
	}
	return badRequest("invalid_json", fmt.Sprintf("request body: invalid JSON at byte %d%s: want %s, found %s", s.pos, in(s.at()), want, found))
}

func (s *strictScanner) fieldError(err error) error {
	return badRequest("invalid_request", fmt.Sprintf("%s: %v", fieldName(s.at()), err))
}

func (s *strictScanner) space() {
	for s.pos < len(s.b) {
		switch s.b[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// value scans the value at s.pos, which decodes into t. top is true for the body's own value.
func (s *strictScanner) value(t reflect.Type, depth int, top bool) error {
	if s.pos >= len(s.b) {
		return s.syntaxError("a value")
	}
	t = shapeOf(t)
	wantObject := top && t != nil && t.Kind() == reflect.Struct
	c := s.b[s.pos]
	switch {
	case c == '{' || c == '[':
		if depth >= maxBodyDepth {
			return badRequest("invalid_json", fmt.Sprintf("%s: nested more than %d deep", fieldName(s.at()), abi.MaxJSONDepth))
		}
		if c == '{' {
			return s.object(t, depth+1)
		}
		if wantObject {
			return badRequest("invalid_json", "request body: want a JSON object, not an array")
		}
		return s.array(t, depth+1)
	case c == '"':
		token, err := s.stringToken()
		if err != nil {
			return err
		}
		if err := abi.CheckJSON(token); err != nil {
			return s.fieldError(err)
		}
	case c == '-' || c >= '0' && c <= '9':
		start := s.pos
		for s.pos < len(s.b) && strings.IndexByte("+-.eE0123456789", s.b[s.pos]) >= 0 {
			s.pos++
		}
		if err := abi.CheckJSON(s.b[start:s.pos]); err != nil {
			return s.fieldError(err)
		}
	case s.literal("true"), s.literal("false"), s.literal("null"):
	default:
		return s.syntaxError("a value")
	}
	if wantObject {
		return badRequest("invalid_json", fmt.Sprintf("request body: want a JSON object, not %s", abbreviate(string(bytes.TrimSpace(s.b)), 20)))
	}
	return nil
}

func (s *strictScanner) literal(word string) bool {
	if bytes.HasPrefix(s.b[s.pos:], []byte(word)) {
		s.pos += len(word)
		return true
	}
	return false
}

// stringToken returns the string whose opening quote is at s.pos, quotes included, and moves
// past it. What is inside is for abi.CheckJSON to judge.
func (s *strictScanner) stringToken() ([]byte, error) {
	start := s.pos
	for i := start + 1; i < len(s.b); i++ {
		switch s.b[i] {
		case '\\':
			i++ // whatever is escaped cannot end the string
		case '"':
			s.pos = i + 1
			return s.b[start:s.pos], nil
		}
	}
	s.pos = len(s.b)
	return nil, s.syntaxError("the end of a string")
}

func (s *strictScanner) object(t reflect.Type, depth int) error {
	var (
		fields map[string]reflect.Type // nil: any key
		values reflect.Type            // what each value decodes into
		first  = len(s.keys)           // this object's keys are s.keys[first:], until there are many
		many   map[string]bool
	)
	switch {
	case t != nil && t.Kind() == reflect.Struct:
		fields = jsonFields(t)
	case t != nil && t.Kind() == reflect.Map:
		values = t.Elem()
	}
	s.pos++ // {
	s.space()
	if s.pos < len(s.b) && s.b[s.pos] == '}' {
		s.pos++
		return nil
	}
	for {
		s.space()
		if s.pos >= len(s.b) || s.b[s.pos] != '"' {
			return s.syntaxError("a key (a string)")
		}
		token, err := s.stringToken()
		if err != nil {
			return err
		}
		if err := abi.CheckJSON(token); err != nil {
			return badRequest("invalid_request", fmt.Sprintf("%s: a key: %v", fieldName(s.at()), err))
		}
		key := keyOf(token)
		switch {
		case many != nil && many[string(key)], many == nil && slices.ContainsFunc(s.keys[first:], func(k []byte) bool { return bytes.Equal(k, key) }):
			return badRequest("invalid_json", fmt.Sprintf("%s: duplicate key %q", fieldName(s.at()), key))
		case many != nil:
			many[string(key)] = true
		case len(s.keys)-first < 16:
			s.keys = append(s.keys, key)
		default:
			many = map[string]bool{string(key): true}
			for _, k := range s.keys[first:] {
				many[string(k)] = true
			}
			s.keys = s.keys[:first]
		}
		child := values
		if fields != nil {
			ft, ok := fields[string(key)]
			if !ok {
				return badRequest("invalid_json", fmt.Sprintf("%s: unknown field %q; the fields are %s (names are case-sensitive)",
					fieldName(s.at()), key, strings.Join(slices.Sorted(mapKeys(fields)), ", ")))
			}
			child = ft
		}
		s.space()
		if s.pos >= len(s.b) || s.b[s.pos] != ':' {
			return s.syntaxError("':' after a key")
		}
		s.pos++
		s.space()
		s.path = append(s.path, pathStep{key: key, index: -1})
		if err := s.value(child, depth, false); err != nil {
			return err
		}
		s.path = s.path[:len(s.path)-1]
		s.space()
		if s.pos < len(s.b) && s.b[s.pos] == ',' {
			s.pos++
			continue
		}
		if s.pos < len(s.b) && s.b[s.pos] == '}' {
			s.pos++
			s.keys = s.keys[:first]
			return nil
		}
		return s.syntaxError("',' or '}'")
	}
}

func (s *strictScanner) array(t reflect.Type, depth int) error {
	var elems reflect.Type
	if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
		elems = t.Elem()
	}
	s.pos++ // [
	s.space()
	if s.pos < len(s.b) && s.b[s.pos] == ']' {
		s.pos++
		return nil
	}
	for i := 0; ; i++ {
		s.space()
		s.path = append(s.path, pathStep{index: i})
		if err := s.value(elems, depth, false); err != nil {
			return err
		}
		s.path = s.path[:len(s.path)-1]
		s.space()
		if s.pos < len(s.b) && s.b[s.pos] == ',' {
			s.pos++
			continue
		}
		if s.pos < len(s.b) && s.b[s.pos] == ']' {
			s.pos++
			return nil
		}
		return s.syntaxError("',' or ']'")
	}
}

// keyOf is the text a key token (already checked) stands for: the body's own bytes unless the
// key has escapes.
func keyOf(token []byte) []byte {
	if bytes.IndexByte(token, '\\') < 0 {
		return token[1 : len(token)-1]
	}
	var key string
	_ = json.Unmarshal(token, &key) // abi.CheckJSON accepted it, so it decodes
	return []byte(key)
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// shapeOf is the type whose shape a JSON value must have: pointers followed, nil for a type
// that takes any JSON (json.RawMessage, interfaces).
func shapeOf(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t == rawMessageType || t.Kind() == reflect.Interface {
		return nil
	}
	return t
}

// fieldsOf caches jsonFields by type: request bodies are a handful of struct types.
var fieldsOf sync.Map // reflect.Type -> map[string]reflect.Type

// jsonFields maps a struct's JSON field names to their types, as encoding/json names them.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if fields, ok := fieldsOf.Load(t); ok {
		return fields.(map[string]reflect.Type)
	}
	fields := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		fields[name] = f.Type
	}
	fieldsOf.Store(t, fields)
	return fields
}

func mapKeys[V any](m map[string]V) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// fieldName is how a message names the value at path: "request body" for the body itself, and
// at most 100 bytes of a long path.
func fieldName(path string) string {
	if path == "" {
		return "request body"
	}
	return abbreviate(path, 100)
}

// in says where in the body a syntax error is, when it is inside a field.
func in(path string) string {
	if path == "" {
		return ""
	}
	return " (in " + fieldName(path) + ")"
}

func abbreviate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// describeType says what JSON a Go type takes.
func describeType(t reflect.Type) string {
	shape := shapeOf(t)
	if shape == nil {
		return "any JSON value"
	}
	switch shape.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Bool:
		return "true or false"
	case reflect.Struct, reflect.Map:
		return "a JSON object"
	case reflect.Slice, reflect.Array:
		return "a JSON array"
	}
	return t.String()
}
