package paging

import (
	"cmp"
	"encoding/base64"
	"errors"
	"strings"
	"time"

	"github.com/wfhost/wfhost/store"
)

const (
	defaultPageSize = 50
	maxPageSize     = 500
)

// Size is the page size for a requested limit: 0 takes the default, and the rest is kept
// within 1 and the maximum.
func Size(limit int) int {
	return min(max(cmp.Or(limit, defaultPageSize), 1), maxPageSize)
}

// Cursor names the run a page ended with.
func Cursor(createdAt time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(createdAt.UTC().Format(time.RFC3339Nano) + "|" + id))
}

// Parse reads a cursor back; the caller checks the id's form.
func Parse(cursor string) (createdAt time.Time, id string, err error) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return time.Time{}, "", err
	}
	ts, id, ok := strings.Cut(string(b), "|")
	if !ok || id == "" {
		return time.Time{}, "", errors.New("malformed cursor")
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	return t, id, err
}

// Page cuts runs, read with a limit of size+1, to one page and names the next page's start ("" when
// this is the last page).
func Page(runs []store.Run, size int) ([]store.Run, string) {
	if len(runs) <= size {
		return runs, ""
	}
	runs = runs[:size]
	last := runs[size-1]
	return runs, Cursor(last.CreatedAt, last.ID)
}
