package embedded

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
)

// contains reports whether JSON document doc contains JSON document sub, with the semantics of
// Postgres's jsonb @> (https://www.postgresql.org/docs/current/datatype-json.html#JSON-CONTAINMENT),
// which store/postgres uses for wait matches and input filters:
//
//   - scalars contain only an equal scalar; numbers compare by value (1 and 1.0 are equal);
//   - an object contains an object whose every key it has, with a value that contains that
//     key's value there (containment recurses; extra keys are ignored);
//   - an array contains an array each of whose elements is contained in some element of it
//     (order and duplicates ignored), a scalar element only by an equal scalar;
//   - at the top level only, an array contains a scalar that is one of its elements;
//   - otherwise a structure contains nothing of another kind.
func contains(doc, sub []byte) (bool, error) {
	d, err := decodeJSON(doc)
	if err != nil {
		return false, err
	}
	s, err := decodeJSON(sub)
	if err != nil {
		return false, err
	}
	if arr, ok := d.([]any); ok && isScalar(s) {
		for _, e := range arr {
			if isScalar(e) && scalarEqual(e, s) {
				return true, nil
			}
		}
		return false, nil
	}
	return containsValue(d, s), nil
}

// matcher tests many documents against one decoded sub-document.
type matcher struct{ sub any }

func newMatcher(sub []byte) (matcher, error) {
	s, err := decodeJSON(sub)
	return matcher{sub: s}, err
}

func (m matcher) match(doc []byte) bool {
	d, err := decodeJSON(doc)
	if err != nil {
		return false // stored documents are valid JSON; a broken one matches nothing
	}
	if arr, ok := d.([]any); ok && isScalar(m.sub) {
		for _, e := range arr {
			if isScalar(e) && scalarEqual(e, m.sub) {
				return true
			}
		}
		return false
	}
	return containsValue(d, m.sub)
}

func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: %v", errInvalidJSON, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data", errInvalidJSON)
	}
	return v, nil
}

func isScalar(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return false
	}
	return true
}

func containsValue(d, s any) bool {
	switch sv := s.(type) {
	case map[string]any:
		dv, ok := d.(map[string]any)
		if !ok {
			return false
		}
		for k, want := range sv {
			got, ok := dv[k]
			if !ok || !containsValue(got, want) {
				return false
			}
		}
		return true
	case []any:
		dv, ok := d.([]any)
		if !ok {
			return false
		}
	elements:
		for _, want := range sv {
			for _, got := range dv {
				if isScalar(want) != isScalar(got) {
					continue
				}
				if containsValue(got, want) {
					continue elements
				}
			}
			return false
		}
		return true
	default:
		return isScalar(d) && scalarEqual(d, s)
	}
}

func scalarEqual(a, b any) bool {
	switch av := a.(type) {
	case json.Number:
		bv, ok := b.(json.Number)
		if !ok {
			return false
		}
		if av == bv {
			return true
		}
		x, okx := new(big.Rat).SetString(string(av))
		y, oky := new(big.Rat).SetString(string(bv))
		return okx && oky && x.Cmp(y) == 0
	case string:
		bv, ok := b.(string)
		return ok && av == bv
	case bool:
		bv, ok := b.(bool)
		return ok && av == bv
	case nil:
		return b == nil
	}
	return false
}
