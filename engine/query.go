package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/store"
)

// A query reads a live run's state by asking the workflow itself (ABI.md §4.17): a dry pass
// over the run's journal as it stands (replay.go's dryPass: no store, no lease, nothing
// commits, no callback runs) whose frontier, the first durable call the journal does not
// answer, answers abi.StatusQuery; the handler the workflow registered replies through
// query_respond, and that reply is the query's answer. The frontier is found where a dry
// replay stops (dryPass.stopAt), so any kind of durable call is one.

// QueryTimeout bounds a query's dry pass in wall time: a query is a read a client waits for,
// and a workflow that replays longer than this is one to look at through its journal instead.
const QueryTimeout = 5 * time.Second

var (
	// ErrRunEnded: the run has ended, so it has no frontier to answer a query at (RATIONALE.md
	// "Queries").
	ErrRunEnded = fmt.Errorf("%w: the run has ended", store.ErrConflict)
	// ErrQueryUnsupported: the run's module does not declare abi.FeatureQuery.
	ErrQueryUnsupported = fmt.Errorf("%w: the run's module does not answer queries", store.ErrConflict)
	// ErrUnknownQuery: the workflow registered no handler of the query's name (its SDK
	// answered abi.QueryUnknownCode).
	ErrUnknownQuery = fmt.Errorf("%w: unknown query", store.ErrNotFound)
)

// QueryError is a query the workflow could not answer: its handler's error, or the dry pass's
// fault (a trap, a divergence from the journal, QueryTimeout passed, no frontier reached).
type QueryError struct{ Info abi.ErrorInfo }

func (e *QueryError) Error() string { return "query failed: " + e.Info.Code + ": " + e.Info.Message }

// QueryAnswer is a query's answer: the handler's result, and the frontier it was asked at.
type QueryAnswer struct {
	Result json.RawMessage `json:"result"`
	At     ReplayStop      `json:"at"`
}

// queryAnswered ends a query's pass: the reply query_respond handed the dry pass.
type queryAnswered struct {
	outcome abi.Outcome
	data    []byte
}

func (q *queryAnswered) Error() string { return "query answered" }

// errNotAnswered is the fault of a guest that made a durable call after it was asked a query.
func errNotAnswered(name string) error {
	return &host.GuestError{Info: abi.ErrorInfo{Code: abi.CodeABIViolation,
		Message: fmt.Sprintf("the workflow reached %q after it was asked a query; it must answer with %s first", name, abi.FuncQueryRespond)}}
}

// QueryRespond takes a query's answer (host.QueryResponder).
func (d *dryPass) QueryRespond(_ context.Context, outcome abi.Outcome, data []byte) error {
	if !d.asked {
		return &host.GuestError{Info: abi.ErrorInfo{Code: abi.CodeABIViolation, Message: abi.FuncQueryRespond + " called but no query was asked"}}
	}
	return &queryAnswered{outcome: outcome, data: data}
}

// QueryRun asks the tenant's run runID the query name with arg (nil: null) and returns the
// workflow's answer. Nothing of the run changes.
func (s *Service) QueryRun(ctx context.Context, tenantID, runID, name string, arg json.RawMessage) (*QueryAnswer, error) {
	if err := validName("query", name); err != nil {
		return nil, err
	}
	limits, err := s.Limits(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	if len(arg) == 0 {
		arg = json.RawMessage("null")
	}
	if len(arg) > limits.MaxInputBytes {
		return nil, fmt.Errorf("query %s: %w: arg is %d bytes, the tenant's input limit is %d", name, ErrTooLarge, len(arg), limits.MaxInputBytes)
	}
	if !json.Valid(arg) {
		return nil, invalid("arg", "is not valid JSON")
	}
	if err := checkJSON("arg", arg); err != nil {
		return nil, err
	}
	run, err := s.cfg.Store.GetRun(ctx, tenantID, runID)
	if err != nil {
		return nil, err
	}
	if run.Status.Terminal() {
		return nil, fmt.Errorf("query run %s: %w (%s)", runID, ErrRunEnded, run.Status)
	}
	mod, err := s.exec.modules.get(ctx, tenantID, run.Digest)
	if err != nil {
		return nil, fmt.Errorf("query run %s: load its module: %w", runID, err)
	}
	if !mod.Description.Has(abi.FeatureQuery) {
		return nil, fmt.Errorf("query run %s: %w (it declares no %q feature)", runID, ErrQueryUnsupported, abi.FeatureQuery)
	}
	journal, err := s.cfg.Store.ListSteps(ctx, tenantID, runID)
	if err != nil {
		return nil, err
	}
	hl := hostLimits(limits)
	hl.WallTime = min(cmp.Or(hl.WallTime, QueryTimeout), QueryTimeout)
	return query(ctx, s.cfg.Runtime, mod, Replay{
		Workflow: run.Workflow, Input: run.Input, RunID: run.ID, CreatedAt: run.CreatedAt,
		Journal: journal, Limits: hl,
	}, abi.Query{Name: name, Arg: arg})
}

// query runs q's dry pass over r on mod and returns the answer.
func query(ctx context.Context, rt *host.Runtime, mod *host.Module, r Replay, q abi.Query) (*QueryAnswer, error) {
	if err := CheckReplayJournal(r.Journal); err != nil {
		return nil, err
	}
	// The guest's records are the dry pass's, not the run's: they are dropped, as a replay's.
	logs := &replayLogs{max: 0}
	d := &dryPass{journal: r.Journal, seen: map[string]int{}, clock: r.CreatedAt.UTC().Truncate(time.Microsecond), query: &q}
	_, err := rt.Activate(ctx, mod, host.Activation{
		Workflow: r.Workflow, Input: r.Input, RunID: r.RunID, Handler: d, Limits: r.Limits,
		Logger: slog.New(logs),
	})
	var (
		answered *queryAnswered
		end      *dryEnd
		guest    *host.GuestError
	)
	switch {
	case errors.As(err, &answered):
		if answered.outcome == abi.OutcomeOK {
			return &QueryAnswer{Result: answered.data, At: *d.frontier}, nil
		}
		info := abi.ParseErrorInfo(answered.data)
		if info.Code == abi.QueryUnknownCode {
			return nil, fmt.Errorf("%w %q: %s", ErrUnknownQuery, q.Name, info.Message)
		}
		return nil, &QueryError{Info: info}
	case err == nil:
		return nil, &QueryError{Info: abi.ErrorInfo{Code: "no_frontier",
			Message: "the workflow ended within its journal without reaching a durable call to answer the query at"}}
	case errors.As(err, &end) && end.divergence != nil:
		return nil, &QueryError{Info: abi.ErrorInfo{Code: abi.CodeNondeterministic, Message: end.divergence.Message}}
	case errors.As(err, &guest):
		return nil, &QueryError{Info: guest.Info}
	case errors.Is(err, host.ErrInvalidModule):
		return nil, err
	}
	return nil, fmt.Errorf("query %s: %w", q.Name, err)
}
