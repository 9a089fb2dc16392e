package embedded

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

// classify marks *err, when it is an error the store's callers must act on, with the sentinel
// that says how: store.ErrUnavailable when SQLite cannot write now (a full disk, an I/O error,
// the file locked, the store closed), store.ErrRefused for a value it will never keep (one
// abi.CheckJSON refuses, a constraint, a value past SQLite's limits). These are store/postgres's
// classes (its errors.go), so the engine and the API treat both stores alike. Every exported
// method defers it; errors already carrying a store sentinel are left as they are.
func classify(err *error) { *err = store.Classify(*err, unavailable, refused) }

func unavailable(err error) bool {
	// A closed store (the daemon shutting down) serves nothing more; database/sql says so
	// with a plain error.
	if errors.Is(err, errClosed) || errors.Is(err, sql.ErrConnDone) || errors.Is(err, context.DeadlineExceeded) ||
		strings.Contains(err.Error(), "sql: database is closed") {
		return true
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff { // the primary result code
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_NOMEM, sqlite3.SQLITE_READONLY,
		sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PROTOCOL:
		return true
	}
	return false
}

func refused(err error) bool {
	if errors.Is(err, abi.ErrNotStorable) {
		return true
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_TOOBIG, sqlite3.SQLITE_CONSTRAINT, sqlite3.SQLITE_MISMATCH, sqlite3.SQLITE_RANGE:
		return true
	}
	return false
}
