//go:build extism

package main

import (
	crand "crypto/rand"
	"encoding/binary"
	"math/rand"
	"time"

	"github.com/extism/go-pdk"
	wf "github.com/wfhost/wfhost/guest-sdk/go"
)

// With -tags extism these examples are an Extism plug-in (the SDK's Extism transport, on
// Extism's Go PDK; testdata/extism_go.wasm), and this file adds three workflows for the host's
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

// observed has the shape of examples/wasm/go/hostile's determinism workflow output.
type observed struct {
	Now        int64    `json:"now"`
	Elapsed    int64    `json:"elapsed"`
	MathRand   int64    `json:"mathRand"`
	CryptoRand uint64   `json:"cryptoRand"`
	MapOrder   []string `json:"mapOrder"`
	Step       inside   `json:"step"`
	AfterStep  int64    `json:"afterStep"`
}

type inside struct {
	Now        int64  `json:"now"`
	CryptoRand uint64 `json:"cryptoRand"`
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

	// determinism reports the clock, random numbers and map order it sees outside a step and
	// inside one.
	wf.Register(wf.Workflow[struct{}, observed]{Name: "determinism", Version: "1",
		Run: func(ctx *wf.Context, _ struct{}) (observed, error) {
			var o observed
			start := time.Now()
			o.Now = start.UnixNano()
			o.MathRand = rand.Int63()
			var b [8]byte
			_, _ = crand.Read(b[:])
			o.CryptoRand = binary.LittleEndian.Uint64(b[:])
			for k := range map[string]int{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7, "h": 8} {
				o.MapOrder = append(o.MapOrder, k)
			}
			o.Elapsed = int64(time.Since(start))
			in, err := wf.Step(ctx, "observe", func(sc *wf.StepContext) (inside, error) {
				var b [8]byte
				_, _ = crand.Read(b[:])
				return inside{Now: time.Now().UnixNano(), CryptoRand: binary.LittleEndian.Uint64(b[:])}, nil
			})
			if err != nil {
				return o, err
			}
			o.Step = in
			o.AfterStep = time.Now().UnixNano()
			return o, nil
		}})
}
