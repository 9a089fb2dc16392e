package wf

import (
	"encoding/json"
	"time"
)

// HTTPRequest is an outbound request made from a step callback through the host, which
// checks it against the tenant's allowlist and records it in the run's audit trail. The
// guest-sdk/go/wfhttp package wraps it as an http.RoundTripper for a plain http.Client.
type HTTPRequest struct {
	Method  string              `json:"method"`
	URL     string              `json:"url"`
	Headers map[string][]string `json:"headers,omitempty"`
	Body    []byte              `json:"body,omitempty"`
	// Timeout bounds the request below the host's own limit; 0 takes the host's.
	Timeout time.Duration `json:"-"`
}

// HTTPResponse is what the host got back.
type HTTPResponse struct {
	Status  int                 `json:"status"`
	Headers map[string][]string `json:"headers,omitempty"`
	Body    []byte              `json:"body,omitempty"`
}

// statusError is the host's reply status for a refused or failed capability call.
const statusError = 4

// Do makes an outbound HTTP request. It works only inside a step callback: outside one the
// host refuses it (a request there would be made again on every replay). A refusal or a
// failure to get a response is an *Error with the host's code (http_denied, http_timeout,
// http_too_large, http_failed, outside_step); any HTTP status, 500 included, is a response.
func (sc *StepContext) Do(req HTTPRequest) (HTTPResponse, error) {
	wire := struct {
		HTTPRequest
		TimeoutMs int64 `json:"timeoutMs,omitempty"`
	}{req, req.Timeout.Milliseconds()}
	b, err := json.Marshal(wire)
	if err != nil {
		return HTTPResponse{}, err
	}
	status, data := callHTTPRequest(b)
	if status == statusError {
		return HTTPResponse{}, decodeHostError(data)
	}
	var resp HTTPResponse
	if err := json.Unmarshal(data, &resp); err != nil {
		return HTTPResponse{}, &Error{Code: "http_failed", Message: "the host's response is not valid JSON: " + err.Error()}
	}
	return resp, nil
}

// Secret returns one of the tenant's secrets. It works only inside a step callback. The host
// redacts the value from the step's result, logs and errors of this pass, so keep it out of
// what the step returns: a replay would see "[redacted]" where the first pass saw the value.
func (sc *StepContext) Secret(name string) (string, error) {
	status, data := callSecretGet([]byte(name))
	if status == statusError {
		return "", decodeHostError(data)
	}
	return string(data), nil
}

// EventSent is what became of an event a step sent: to a run, State is "delivered" (a wait
// of the run took it) or "buffered" (kept for its next matching wait); to the tenant, the
// waiting runs it Resolved and the runs it Started. Duplicate says the callback made this
// send before, in an earlier attempt: nothing changed.
type EventSent struct {
	State     string   `json:"state,omitempty"`
	Resolved  int      `json:"resolved,omitempty"`
	Started   []string `json:"started,omitempty"`
	Duplicate bool     `json:"duplicate,omitempty"`
}

// Signal sends event with payload to the run runID of the same tenant, as a client's signal
// would (abi/ABI.md §4.13). It works only inside a step callback, and lands once however
// often the callback runs, as long as it makes its sends in the same order. An error with the
// code "event_refused" says the event was not taken: no such run, the run ended, its buffer
// is full, or the payload is over the tenant's limit.
func (sc *StepContext) Signal(runID, event string, payload any) (EventSent, error) {
	return sendEvent(map[string]any{"runId": runID, "event": event, "payload": payload})
}

// Broadcast sends event with payload to the whole tenant, as a client's broadcast would:
// it resolves the runs waiting on it and starts the workflows it triggers. Only inside a step
// callback, and once however often the callback runs, as Signal.
func (sc *StepContext) Broadcast(event string, payload any) (EventSent, error) {
	return sendEvent(map[string]any{"broadcast": true, "event": event, "payload": payload})
}

func sendEvent(req map[string]any) (EventSent, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return EventSent{}, &Error{Code: "invalid_event", Message: "encode the event: " + err.Error(), NonRetryable: true}
	}
	status, data := callEventSend(b)
	if status == statusError {
		return EventSent{}, decodeHostError(data)
	}
	var sent EventSent
	if err := json.Unmarshal(data, &sent); err != nil {
		return EventSent{}, &Error{Code: "event_refused", Message: "the host's answer is not valid JSON: " + err.Error()}
	}
	return sent, nil
}

func decodeHostError(data []byte) error {
	var info errorInfo
	if err := json.Unmarshal(data, &info); err != nil || info.Message == "" {
		return &Error{Code: "host_error", Message: string(data)}
	}
	return &Error{Code: info.Code, Message: info.Message, NonRetryable: info.NonRetryable}
}
