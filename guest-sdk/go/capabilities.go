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

func decodeHostError(data []byte) error {
	var info errorInfo
	if err := json.Unmarshal(data, &info); err != nil || info.Message == "" {
		return &Error{Code: "host_error", Message: string(data)}
	}
	return &Error{Code: info.Code, Message: info.Message, NonRetryable: info.NonRetryable}
}
