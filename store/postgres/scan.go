package postgres

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

// scanRun reads the run columns every run query selects, in their order, after extra.
func scanRun(row pgx.Row, extra ...any) (store.Run, error) { return scanRunWith(row, extra, nil) }

// scanRunThen is scanRun of a row with more columns after the run's, read into after.
func scanRunThen(row pgx.Row, after ...any) (store.Run, error) { return scanRunWith(row, nil, after) }

func scanRunWith(row pgx.Row, before, after []any) (store.Run, error) {
	var (
		r      store.Run
		status string
		output []byte
		errb   []byte
		retry  []byte
	)
	dest := append(before, &r.ID, &r.TenantID, &r.Workflow, &r.Version, &r.Digest, &status, &r.Input,
		&output, &errb, &r.IdempotencyKey, &r.RetentionDays, &r.Activations, &r.AvailableAt,
		&r.CreatedAt, &r.StartedAt, &r.CompletedAt, &r.UpdatedAt, &r.Deadline,
		&r.ContinuedFrom, &r.ContinuedAs, &r.Attempt, &retry, &r.CancelRequestedAt, &r.CancelGraceUntil, &r.RestartedFrom, &r.PausedAt)
	if err := row.Scan(append(dest, after...)...); err != nil {
		return store.Run{}, err
	}
	r.Retry = decodeRetry(retry)
	r.Status = store.RunStatus(status)
	if output != nil {
		r.Output = json.RawMessage(output)
	}
	r.Error = decodeError(errb)
	return r, nil
}

// scanStep reads the step columns every step query selects, in their order.
func scanStep(row pgx.Row) (store.Step, error) {
	var (
		s            store.Step
		kind, status string
		output, errb []byte
		match        []byte
	)
	if err := row.Scan(&s.RunID, &s.Seq, &s.Key, &kind, &status, &output, &errb, &s.Attempt, &s.WakeAt,
		&s.Event, &match, &s.EventID, &s.StartedAt, &s.CompletedAt); err != nil {
		return store.Step{}, err
	}
	s.Kind, s.Status = store.StepKind(kind), store.StepStatus(status)
	setPayloads(&s, output, match, errb)
	return s, nil
}

func decodeError(b []byte) *abi.ErrorInfo {
	if b == nil {
		return nil
	}
	var info abi.ErrorInfo
	if err := json.Unmarshal(b, &info); err != nil {
		info = abi.ErrorInfo{Message: string(b)}
	}
	return &info
}

// retryArg passes a run's retry policy to a jsonb parameter, SQL NULL when it has none.
func retryArg(p *abi.RetryPolicy) any {
	if p == nil {
		return nil
	}
	b, _ := json.Marshal(p)
	return string(b)
}

// decodeRetry reads a run's retry policy column; a value this binary cannot read is no policy.
func decodeRetry(b []byte) *abi.RetryPolicy {
	if b == nil {
		return nil
	}
	var p abi.RetryPolicy
	if err := json.Unmarshal(b, &p); err != nil {
		return nil
	}
	return &p
}

// jsonArg passes raw JSON to a jsonb parameter, SQL NULL when empty.
func jsonArg(raw []byte) any {
	if len(raw) == 0 {
		return nil
	}
	return string(raw)
}

// jsonOrNull passes raw JSON to a NOT NULL jsonb parameter; no bytes mean JSON null.
func jsonOrNull(raw []byte) string {
	if len(raw) == 0 {
		return "null"
	}
	return string(raw)
}

// matchArg passes a wait's match, SQL NULL when it matches everything: JSON null would
// otherwise match no object payload at all.
func matchArg(raw []byte) any {
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return nil
	}
	return string(raw)
}

func errorArg(info *abi.ErrorInfo) any {
	if info == nil {
		return nil
	}
	b, _ := json.Marshal(info)
	return string(b)
}

func millis(d time.Duration) int64 { return d.Milliseconds() }

// stepArgs are the step columns commit_step, suspend_step and insert_step take after their
// own leading parameters, in order.
func stepArgs(s store.Step) []any {
	return []any{s.Seq, s.Key, string(s.Kind), string(s.Status), jsonArg(s.Output), errorArg(s.Error),
		s.Attempt, s.WakeAt, s.Event, matchArg(s.Match), s.EventID, s.StartedAt, s.CompletedAt}
}

// journalEntry is one row of load_journals.sql: a journal entry of a claimed run, or its
// snapshot.
type journalEntry struct {
	runID    string
	step     store.Step
	snapshot *store.Snapshot
}

// scanJournalEntry reads a row of load_journals.sql.
func scanJournalEntry(row pgx.Row) (journalEntry, error) {
	var (
		e                    journalEntry
		isSnapshot           bool
		seq                  int
		key                  string
		kind, status, event  *string
		output, errb, match  []byte
		attempt              *int
		wake, started, ended *time.Time
		eventID              *int64
		code                 *string
		data                 []byte
	)
	if err := row.Scan(&e.runID, &isSnapshot, &seq, &key, &kind, &status, &output, &errb, &attempt, &wake,
		&event, &match, &eventID, &started, &ended, &code, &data); err != nil {
		return journalEntry{}, err
	}
	if isSnapshot {
		e.snapshot = &store.Snapshot{RunID: e.runID, Seq: seq, LastKey: key, Data: data}
		if code != nil {
			e.snapshot.Code = *code
		}
		if e.snapshot.Data == nil {
			e.snapshot.Data = []byte{}
		}
		if started != nil {
			e.snapshot.CreatedAt = *started
		}
		return e, nil
	}
	s := store.Step{RunID: e.runID, Seq: seq, Key: key, WakeAt: wake, EventID: eventID, CompletedAt: ended}
	if kind != nil {
		s.Kind = store.StepKind(*kind)
	}
	if status != nil {
		s.Status = store.StepStatus(*status)
	}
	if attempt != nil {
		s.Attempt = *attempt
	}
	if event != nil {
		s.Event = *event
	}
	if started != nil {
		s.StartedAt = *started
	}
	setPayloads(&s, output, match, errb)
	e.step = s
	return e, nil
}

// scanStepOrNone reads a row of journal_page.sql: a step, or nil for the row that only says
// the lease holds (its step columns null).
func scanStepOrNone(row pgx.Row) (*store.Step, error) {
	var (
		runID                string
		seq, attempt         *int
		key, kind, status    *string
		event                string
		output, errb, match  []byte
		wake, started, ended *time.Time
		eventID              *int64
	)
	if err := row.Scan(&runID, &seq, &key, &kind, &status, &output, &errb, &attempt, &wake, &event, &match,
		&eventID, &started, &ended); err != nil {
		return nil, err
	}
	if seq == nil {
		return nil, nil
	}
	s := &store.Step{RunID: runID, Seq: *seq, Key: *key, Kind: store.StepKind(*kind), Status: store.StepStatus(*status),
		Attempt: *attempt, WakeAt: wake, Event: event, EventID: eventID, StartedAt: *started, CompletedAt: ended}
	setPayloads(s, output, match, errb)
	return s, nil
}

// setPayloads puts a step row's JSON columns (NULL when absent) into s.
func setPayloads(s *store.Step, output, match, errb []byte) {
	if output != nil {
		s.Output = json.RawMessage(output)
	}
	if match != nil {
		s.Match = json.RawMessage(match)
	}
	s.Error = decodeError(errb)
}
