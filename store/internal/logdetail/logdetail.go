package logdetail

import (
	"encoding/json"
	"fmt"
	"time"
)

// timeKeys are the detail members that hold a time.
var timeKeys = []string{"until", "graceUntil"}

// Normalize returns detail with its times as RFC 3339 UTC strings (microseconds, the
// precision both stores keep); nil or empty detail is nil.
func Normalize(detail []byte) (json.RawMessage, error) {
	if len(detail) == 0 {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(detail, &m); err != nil {
		return nil, fmt.Errorf("log detail: %w", err)
	}
	changed := false
	for _, k := range timeKeys {
		v, ok := m[k]
		if !ok {
			continue
		}
		t, err := parseTime(v)
		if err != nil {
			return nil, fmt.Errorf("log detail %s: %w", k, err)
		}
		b, _ := json.Marshal(t.UTC().Format("2006-01-02T15:04:05.000000Z07:00"))
		m[k], changed = b, true
	}
	if !changed {
		return json.RawMessage(detail), nil
	}
	return json.Marshal(m)
}

// parseTime reads a time as a number of microseconds since the epoch or as RFC 3339 text.
func parseTime(v json.RawMessage) (time.Time, error) {
	var us int64
	if err := json.Unmarshal(v, &us); err == nil {
		return time.UnixMicro(us), nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return time.Time{}, fmt.Errorf("not a time: %s", v)
	}
	return time.Parse(time.RFC3339Nano, s)
}
