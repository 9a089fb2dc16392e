package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wfhost/wfhost/store"
)

// classify marks *err, when it is a driver error the store's callers must act on, with the
// sentinel that says how: store.ErrUnavailable for a database that cannot serve now,
// store.ErrRefused for a value it will never keep. Every exported method defers it, so the
// rule is written once and no caller reads SQLSTATEs. Errors already carrying a store
// sentinel, and every other error, are left as they are.
func classify(err *error) { *err = store.Classify(*err, unavailable, refused) }

// unavailable reports an error that says the database could not serve the call now, not that
// the call was wrong: the same call may succeed once the database is back.
func unavailable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch class := pgErr.Code[:2]; {
		case class == "08": // connection exception
			return true
		case class == "53": // insufficient resources: disk full, out of memory, too many connections
			return true
		case class == "58": // system error: an I/O error of the server
			return true
		case pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03": // admin or crash shutdown, cannot connect now
			return true
		case pgErr.Code == "25006": // read-only transaction: a standby, or a primary demoted by a failover
			return true
		case pgErr.Code == "40001", pgErr.Code == "40P01": // serialization failure, deadlock: try again
			return true
		}
		return false
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	switch {
	case errors.As(err, &connectErr), errors.As(err, &netErr):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	case errors.Is(err, context.DeadlineExceeded):
		// The call's own deadline (a request's, the group commit's) ran out waiting for a
		// connection or an answer.
		return true
	case pgconn.SafeToRetry(err), pgconn.Timeout(err):
		// pgx says nothing was sent, or the connection timed out.
		return true
	}
	// A store being closed (the daemon shutting down) serves nothing more; pgxpool says so
	// with a plain error.
	return errors.Is(err, errClosed) || strings.Contains(err.Error(), "closed pool")
}

// refused reports an error that says the database will never keep this write as it is: a data
// exception (22: a string or JSON it cannot hold, a number out of range), an integrity
// violation (23) or a program limit (54: an index row or a value too big).
func refused(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	switch pgErr.Code[:2] {
	case "22", "23", "54":
		return true
	}
	return false
}
