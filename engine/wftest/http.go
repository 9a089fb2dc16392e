package wftest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
)

// fakes is an http.RoundTripper that answers from a scenario's fakes and dials nothing.
type fakes map[string]HTTPFake

func fakeTransport(hs []HTTPFake) http.RoundTripper {
	if len(hs) == 0 {
		return nil
	}
	f := fakes{}
	for _, h := range hs {
		f[h.Method+" "+h.URL] = h
	}
	return f
}

// RoundTrip answers req from its fake; a request no fake answers is an unreachable host.
func (f fakes) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		_ = req.Body.Close()
	}
	h, ok := f[req.Method+" "+req.URL.String()]
	if !ok {
		return nil, fmt.Errorf("wfhost test: no http fake answers %s %s", req.Method, req.URL)
	}
	for k, v := range h.RequestHeaders {
		if req.Header.Get(k) != v {
			return nil, fmt.Errorf("wfhost test: the http fake for %s %s wants header %s, the request has another value or none", req.Method, req.URL, k)
		}
	}
	body := h.body()
	resp := &http.Response{
		StatusCode: h.Status, Status: strconv.Itoa(h.Status) + " " + http.StatusText(h.Status),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{},
		Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: req,
	}
	for k, v := range h.Headers {
		resp.Header.Set(k, v)
	}
	return resp, nil
}

// fakeHosts is the allowlist that lets the run reach the fakes: each URL's scheme and host.
func fakeHosts(hs []HTTPFake) []string {
	var out []string
	for _, h := range hs {
		u, err := url.Parse(h.URL)
		if err != nil {
			continue
		}
		if e := u.Scheme + "://" + u.Host; !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}
