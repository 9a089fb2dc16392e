// Package wfhttp lets a plain net/http client make its requests through the wfhost host from
// inside a step callback: the host applies the tenant's allowlist, size and time limits and
// records each request in the run's audit trail. It is a package of its own so that guests
// that make no HTTP requests do not link net/http.
//
//	resp, err := wfhttp.Client(sc).Post("https://api.example.com/charge", "application/json", body)
package wfhttp

import (
	"bytes"
	"io"
	"net/http"
	"time"

	wf "github.com/wfhost/wfhost/guest-sdk/go"
)

// Client returns an http.Client whose requests go through the host. Use it only inside the
// callback of sc's step.
func Client(sc *wf.StepContext) *http.Client {
	return &http.Client{Transport: Transport{sc}}
}

// Transport is an http.RoundTripper over the host's outbound HTTP. Redirects are followed by
// the host (each checked against the allowlist), so the client sees the final response.
type Transport struct{ Step *wf.StepContext }

// RoundTrip sends req through the host.
func (t Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	hr := wf.HTTPRequest{Method: req.Method, URL: req.URL.String(), Headers: req.Header, Body: body}
	if deadline, ok := req.Context().Deadline(); ok {
		// The guest's clock inside a step is real time, so a context deadline means what it says.
		hr.Timeout = max(0, time.Until(deadline))
	}
	resp, err := t.Step.Do(hr)
	if err != nil {
		return nil, err
	}
	return &http.Response{
		Status:        http.StatusText(resp.Status),
		StatusCode:    resp.Status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header(resp.Headers),
		Body:          io.NopCloser(bytes.NewReader(resp.Body)),
		ContentLength: int64(len(resp.Body)),
		Request:       req,
	}, nil
}
