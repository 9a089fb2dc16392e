//go:build extism

package main

import (
	"github.com/extism/go-pdk"
	wf "github.com/wfhost/wfhost/guest-sdk/go"

	"github.com/wfhost/wfhost/examples/wasm/go/probes"
)

// With -tags extism these examples are an Extism plug-in (the SDK's Extism transport, on
// Extism's Go PDK; testdata/extism_go.wasm), and this file adds four workflows for the host's
// tests of the Extism door (host/extism_test.go). It sorts after the conformance workflows'
// files, so they are declared first and in the same order as in the native build.

type fetchInput struct {
	URL    string `json:"url"`
	Secret string `json:"secret"` // a secret's name: sent as a bearer token
}

type fetched struct {
	Status int    `json:"status"`
	Body   string `json:"body"`
}

type extismFetchInput struct {
	URL     string            `json:"url"`
	Method  string            `json:"method"` // GET unless one of POST, PUT, DELETE
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
	Outside bool              `json:"outside"` // make the request outside a step
}

type extismFetched struct {
	Status  int               `json:"status"`
	Body    string            `json:"body"`
	Headers map[string]string `json:"headers"`
}

func init() {
	// http-fetch makes one request inside a step and returns its status and body, or fails
	// with the host's error.
	wf.Register(wf.Workflow[fetchInput, fetched]{Name: "http-fetch", Version: "1",
		Run: func(ctx *wf.Context, in fetchInput) (fetched, error) {
			return wf.Step(ctx, "fetch", func(sc *wf.StepContext) (fetched, error) {
				req := wf.HTTPRequest{Method: "GET", URL: in.URL}
				if in.Secret != "" {
					token, err := sc.Secret(in.Secret)
					if err != nil {
						return fetched{}, err
					}
					req.Headers = map[string][]string{"Authorization": {"Bearer " + token}}
				}
				resp, err := sc.Do(req)
				if err != nil {
					return fetched{}, err
				}
				return fetched{Status: resp.Status, Body: string(resp.Body)}, nil
			}, wf.WithRetry(wf.RetryPolicy{Attempts: 1}))
		}})

	// extism-http makes one request with the PDK's own HTTP (extism:host/env http_request,
	// which the host holds to the tenant's outbound policy) inside a step, or outside one if
	// asked, and returns the status, body and headers. A refused request traps.
	wf.Register(wf.Workflow[extismFetchInput, extismFetched]{Name: "extism-http", Version: "1",
		Run: func(ctx *wf.Context, in extismFetchInput) (extismFetched, error) {
			send := func() extismFetched {
				method := map[string]pdk.HTTPMethod{"POST": pdk.MethodPost, "PUT": pdk.MethodPut, "DELETE": pdk.MethodDelete}[in.Method]
				req := pdk.NewHTTPRequest(method, in.URL)
				for k, v := range in.Headers {
					req.SetHeader(k, v)
				}
				if in.Body != "" {
					req.SetBody([]byte(in.Body))
				}
				resp := req.Send()
				return extismFetched{Status: int(resp.Status()), Body: string(resp.Body()), Headers: resp.Headers()}
			}
			if in.Outside {
				return send(), nil
			}
			return wf.Step(ctx, "fetch", func(*wf.StepContext) (extismFetched, error) { return send(), nil }, wf.WithRetry(wf.RetryPolicy{Attempts: 1}))
		}})

	// determinism is the hostile module's, for the Extism door's determinism test.
	wf.Register(wf.Workflow[struct{}, probes.Observed]{Name: "determinism", Version: "1", Run: probes.Determinism})

	// panic is the hostile module's, for the Extism door's panic test.
	wf.Register(wf.Workflow[probes.PanicInput, int]{Name: "panic", Version: "1", Run: probes.Panic})
}
