package embedded

import (
	"bytes"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

// scanner is what *sql.Row and *sql.Rows share.
type scanner interface{ Scan(dest ...any) error }

// now is the store's clock at the precision it keeps (microseconds, as Postgres), in UTC.
func (s *Store) now() time.Time { return s.clock.Now().UTC().Truncate(time.Microsecond) }

func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// timeArg passes an optional time, SQL NULL when nil.
func timeArg(t *time.Time) any {
	if t == nil {
		return nil
	}
	return micros(*t)
}

func timePtr(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := fromMicros(n.Int64)
	return &t
}

const day = int64(24 * time.Hour / time.Microsecond)

// scanRun reads the run columns every run query selects, in their order, after extra.
func scanRun(row scanner, extra ...any) (store.Run, error) {
	var (
		r                         store.Run
		status                    string
		input                     string
		output, errb              sql.NullString
		available, started, ended sql.NullInt64
		deadline                  sql.NullInt64
		created, updated          int64
		retry                     sql.NullString
		cancelAsked, cancelGrace  sql.NullInt64
		pausedAt                  sql.NullInt64
	)
	dest := append(extra, &r.ID, &r.TenantID, &r.Workflow, &r.Version, &r.Digest, &status, &input,
		&output, &errb, &r.IdempotencyKey, &r.RetentionDays, &r.Activations, &available,
		&created, &started, &ended, &updated, &deadline, &r.ContinuedFrom, &r.ContinuedAs, &r.Attempt, &retry, &cancelAsked, &cancelGrace, &r.RestartedFrom, &pausedAt)
	if err := row.Scan(dest...); err != nil {
		return store.Run{}, err
	}
	r.Retry = decodeRetry(retry)
	r.CancelRequestedAt, r.CancelGraceUntil = timePtr(cancelAsked), timePtr(cancelGrace)
	r.PausedAt = timePtr(pausedAt)
	r.Status = store.RunStatus(status)
	r.Input = json.RawMessage(input)
	if output.Valid {
		r.Output = json.RawMessage(output.String)
	}
	r.Error = decodeError(errb)
	r.AvailableAt, r.StartedAt, r.CompletedAt = timePtr(available), timePtr(started), timePtr(ended)
	r.CreatedAt, r.UpdatedAt = fromMicros(created), fromMicros(updated)
	r.Deadline = timePtr(deadline)
	return r, nil
}

// retryArg stores a run's retry policy as JSON text, NULL when it has none.
func retryArg(p *abi.RetryPolicy) any {
	if p == nil {
		return nil
	}
	b, _ := json.Marshal(p)
	return string(b)
}

// decodeRetry reads a run's retry policy column; a value this binary cannot read is no policy.
func decodeRetry(s sql.NullString) *abi.RetryPolicy {
	if !s.Valid {
		return nil
	}
	var p abi.RetryPolicy
	if err := json.Unmarshal([]byte(s.String), &p); err != nil {
		return nil
	}
	return &p
}

// scanStep reads the step columns every step query selects, in their order.
func scanStep(row scanner) (store.Step, error) {
	var (
		s                    store.Step
		kind, status         string
		output, errb, match  sql.NullString
		wake, ended, eventID sql.NullInt64
		started              int64
	)
	if err := row.Scan(&s.RunID, &s.Seq, &s.Key, &kind, &status, &output, &errb, &s.Attempt, &wake,
		&s.Event, &match, &eventID, &started, &ended); err != nil {
		return store.Step{}, err
	}
	s.Kind, s.Status = store.StepKind(kind), store.StepStatus(status)
	if output.Valid {
		s.Output = json.RawMessage(output.String)
	}
	if match.Valid {
		s.Match = json.RawMessage(match.String)
	}
	s.Error = decodeError(errb)
	s.WakeAt, s.CompletedAt = timePtr(wake), timePtr(ended)
	s.StartedAt = fromMicros(started)
	if eventID.Valid {
		id := eventID.Int64
		s.EventID = &id
	}
	return s, nil
}

func decodeError(b sql.NullString) *abi.ErrorInfo {
	if !b.Valid {
		return nil
	}
	var info abi.ErrorInfo
	if err := json.Unmarshal([]byte(b.String), &info); err != nil {
		info = abi.ErrorInfo{Message: b.String}
	}
	return &info
}

// errInvalidJSON is JSON that cannot be decoded: what Postgres's jsonb would refuse too.
var errInvalidJSON = fmt.Errorf("%w: invalid JSON", abi.ErrNotStorable)

// jsonArg passes raw JSON to a nullable column, SQL NULL when empty. JSON abi.CheckJSON does
// not allow (what Postgres's jsonb would refuse, \u0000 among it) is refused here too, so that
// a value one store keeps the other does not reject later.
func jsonArg(raw []byte) (any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	if err := abi.CheckJSON(raw); err != nil {
		return nil, err
	}
	return string(raw), nil
}

// jsonOrNull passes raw JSON to a NOT NULL column; no bytes mean JSON null. It refuses what
// jsonArg refuses.
func jsonOrNull(raw []byte) (string, error) {
	if len(raw) == 0 {
		return "null", nil
	}
	if err := abi.CheckJSON(raw); err != nil {
		return "", err
	}
	return string(raw), nil
}

// matchArg passes a wait's match, SQL NULL when it matches everything (empty or JSON null), as
// store/postgres does.
func matchArg(raw []byte) (any, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return nil, nil
	}
	return jsonArg(raw)
}

func errorArg(info *abi.ErrorInfo) any {
	if info == nil {
		return nil
	}
	b, _ := json.Marshal(info)
	return string(b)
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// stepArgs are the columns of upsert_step after run_id and tenant_id, in order.
func stepArgs(s store.Step) ([]any, error) {
	output, err := jsonArg(s.Output)
	if err != nil {
		return nil, fmt.Errorf("step %s output: %w", s.Key, err)
	}
	match, err := matchArg(s.Match)
	if err != nil {
		return nil, fmt.Errorf("step %s match: %w", s.Key, err)
	}
	var eventID any
	if s.EventID != nil {
		eventID = *s.EventID
	}
	return []any{s.Seq, s.Key, string(s.Kind), string(s.Status), output, errorArg(s.Error),
		s.Attempt, timeArg(s.WakeAt), nullIfEmpty(s.Event), match, eventID, micros(s.StartedAt), timeArg(s.CompletedAt)}, nil
}

// newUUID returns a random (version 4) UUID, the form run ids take in both stores.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// notFound maps "no row" to store.ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	return err
}

// scanSnapshot reads get_snapshot.sql's row: the snapshot of run runID, and whether the journal
// still holds the entry it was taken after.
func scanSnapshot(runID string, row scanner) (store.Snapshot, bool, error) {
	snap := store.Snapshot{RunID: runID}
	var created int64
	var whole bool
	if err := row.Scan(&snap.Seq, &snap.LastKey, &snap.Code, &snap.Data, &created, &whole); err != nil {
		return store.Snapshot{}, false, err
	}
	if snap.Data == nil {
		snap.Data = []byte{}
	}
	snap.CreatedAt = fromMicros(created)
	return snap, whole, nil
}
