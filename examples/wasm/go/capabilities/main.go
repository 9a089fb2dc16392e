package main

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	wf "github.com/wfhost/wfhost/guest-sdk/go"
	"github.com/wfhost/wfhost/guest-sdk/go/wfhttp"
)

type fetchInput struct {
	URL     string `json:"url"`
	Method  string `json:"method"`
	Body    string `json:"body"`
	Secret  string `json:"secret"`  // a secret's name: sent as a bearer token
	Outside bool   `json:"outside"` // make the request outside any step (the host refuses)
	// Raw hands method and URL to the host exactly as given, as a hostile guest would; a
	// plain http.Client would first parse and re-encode them.
	Raw bool `json:"raw"`
	// ExitAfter ends the guest (a trap) right after the request, before the step's result
	// reaches the journal.
	ExitAfter bool `json:"exitAfter"`
	// TimeoutMs is the fetch step's attempt timeout (abi/ABI.md §4.4); 0: none.
	TimeoutMs int64 `json:"timeoutMs"`
}

type fetched struct {
	Status int    `json:"status"`
	Body   string `json:"body"`
}

func main() {}

func init() {
	// http-fetch makes one request through a plain http.Client (or, raw, through the SDK's
	// request as given) inside a step, and returns the status and body, or the host's error
	// (code and message) as the run's.
	wf.Register(wf.Workflow[fetchInput, fetched]{Name: "http-fetch", Version: "1",
		Retry: &wf.RetryPolicy{Attempts: 1},
		Run: func(ctx *wf.Context, in fetchInput) (fetched, error) {
			if in.Outside {
				_, err := (&wf.StepContext{}).Do(wf.HTTPRequest{Method: "GET", URL: in.URL})
				return fetched{}, err
			}
			return wf.Step(ctx, "fetch", func(sc *wf.StepContext) (fetched, error) {
				if in.ExitAfter {
					defer os.Exit(3)
				}
				if in.Raw {
					resp, err := sc.Do(wf.HTTPRequest{Method: in.Method, URL: in.URL, Body: []byte(in.Body)})
					return fetched{Status: resp.Status, Body: string(resp.Body)}, err
				}
				req, err := http.NewRequest(cmpOr(in.Method, "GET"), in.URL, bytes.NewReader([]byte(in.Body)))
				if err != nil {
					return fetched{}, wf.NonRetryable(err)
				}
				if in.Secret != "" {
					token, err := sc.Secret(in.Secret)
					if err != nil {
						return fetched{}, err
					}
					req.Header.Set("Authorization", "Bearer "+token)
				}
				resp, err := wfhttp.Client(sc).Do(req)
				if err != nil {
					return fetched{}, err
				}
				defer resp.Body.Close()
				body, _ := io.ReadAll(resp.Body)
				return fetched{Status: resp.StatusCode, Body: string(body)}, nil
			}, wf.WithTimeout(time.Duration(in.TimeoutMs)*time.Millisecond))
		}})

	// secret-leak tries every way a secret could escape: it logs it, prints it, returns it
	// from its step and fails the run with it. The host must redact it everywhere.
	wf.Register(wf.Workflow[struct{ Name string }, string]{Name: "secret-leak", Version: "1",
		Run: func(ctx *wf.Context, in struct{ Name string }) (string, error) {
			leaked, err := wf.Step(ctx, "leak", func(sc *wf.StepContext) (string, error) {
				v, err := sc.Secret(in.Name)
				if err != nil {
					return "", err
				}
				wf.Log(ctx, "the secret is %s", v)
				println("stderr: the secret is " + v)
				return "value=" + v, nil
			})
			if err != nil {
				return "", err
			}
			return "", wf.NewError("leak", "failing with %s", strings.TrimPrefix(leaked, "value="))
		}})
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
