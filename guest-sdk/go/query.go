package wf

import (
	"encoding/json"
	"fmt"
	"runtime/debug"
)

// statusQuery is the reply of the durable call a query's dry pass stops at (abi/ABI.md
// §4.17): the workflow answers the query there, and the call never returns.
const statusQuery = 6

// codeUnknownQuery answers a query no handler was registered for; the host reports it to the
// caller as an unknown query.
const codeUnknownQuery = "unknown_query"

type queryHandler func(arg json.RawMessage) ([]byte, error)

// OnQuery registers fn as the answer to the query name (abi/ABI.md §4.17): a client reads a
// running run's state with it (POST .../runs/{id}/query/{name}, wfhost runs query). The host
// replays the run's journal and, at the first durable call the journal does not answer, calls
// the handler last registered under name with the query's argument decoded into A (its zero
// value for none). fn sees the workflow's variables as they are at that call; it must only
// read them, and it must make no durable call: whatever it does is never committed. A later
// OnQuery of the same name replaces the handler, so a workflow can register the state of each
// stage as it reaches it.
func OnQuery[A, T any](ctx *Context, name string, fn func(arg A) (T, error)) {
	if ctx.queries == nil {
		ctx.queries = map[string]queryHandler{}
	}
	ctx.queries[name] = func(raw json.RawMessage) ([]byte, error) {
		var arg A
		if len(raw) > 0 && string(raw) != "null" {
			if err := json.Unmarshal(raw, &arg); err != nil {
				return nil, &Error{Code: "invalid_argument", Message: "decode the query's argument: " + err.Error()}
			}
		}
		out, err := fn(arg)
		if err != nil {
			return nil, err
		}
		return json.Marshal(out)
	}
}

// answerQuery answers the query a durable call's reply (statusQuery) carries with the handler
// registered for it, and never returns: the host ends the pass in query_respond.
func (c *Context) answerQuery(data []byte) {
	var q struct {
		Name string          `json:"name"`
		Arg  json.RawMessage `json:"arg"`
	}
	_ = json.Unmarshal(data, &q)
	var (
		out []byte
		err error
	)
	if h, ok := c.queries[q.Name]; ok {
		out, err = runQuery(h, q.Arg)
	} else {
		err = &Error{Code: codeUnknownQuery, Message: fmt.Sprintf("workflow %s has no query %q", c.workflow, q.Name)}
	}
	if err != nil {
		b, _ := json.Marshal(toErrorInfo(err))
		callQueryRespond(outcomeError, b)
	} else {
		callQueryRespond(outcomeOK, out)
	}
	panic("wfhost: query_respond returned")
}

// runQuery turns a panic in a query handler into the query's error.
func runQuery(h queryHandler, arg json.RawMessage) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &Error{Code: "panic", Message: fmt.Sprintf("query handler panicked: %v\n%s", r, debug.Stack())}
		}
	}()
	return h(arg)
}
