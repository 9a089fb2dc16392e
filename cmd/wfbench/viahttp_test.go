package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wfhost/wfhost/api/client"
	"github.com/wfhost/wfhost/api/wire"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/embedded"
)

// TestServeAPIAnswersTheLoadsRequest: the API -via=http serves over a real engine answers the
// load process's request (start and wait) with the completed run, for its token only.
func TestServeAPIAnswersTheLoadsRequest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := embedded.Open(ctx, embedded.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	eng, err := engine.New(engine.Config{Store: st, Runtime: testenv.Runtime(t), PollInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Stop)
	if err := st.EnsureTenant(ctx, store.DefaultTenant); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Deploy(ctx, store.DefaultTenant, testenv.Fixture(t, "examples_as.wasm"), false); err != nil {
		t.Fatal(err)
	}
	baseURL, token, stop, err := serveAPI(ctx, eng, st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	if !strings.HasPrefix(baseURL, "http://127.0.0.1:") || !strings.HasPrefix(token, "wfh_") {
		t.Fatalf("served at %s with token %.4s...", baseURL, token)
	}
	start := wire.StartRun{Input: json.RawMessage(`{"n":3}`)}
	c := &client.Client{BaseURL: baseURL, Token: token, HTTP: &http.Client{}}
	raw, err := c.Do(ctx, "POST", "/v1/workflows/steps/runs?wait=60", start)
	var run wire.Run
	if err == nil {
		err = json.Unmarshal(raw, &run)
	}
	if err != nil || run.Status != "completed" || string(run.Output) != `{"sum":3}` {
		t.Fatalf("start and wait: %+v %v", run, err)
	}
	c.Token = token + "x"
	var apiErr *client.Error
	if _, err := c.Do(ctx, "POST", "/v1/workflows/steps/runs?wait=60", start); !errors.As(err, &apiErr) || apiErr.Status != 401 {
		t.Fatalf("another token: %v, want 401", err)
	}
}

// TestCallInParallelCountsEveryCall: n calls from c callers, each latency kept, every error
// joined and its call's latency left out.
func TestCallInParallelCountsEveryCall(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	lats, err := callInParallel(50, 8, func() (time.Duration, error) {
		if calls.Add(1)%10 == 0 {
			return 0, errors.New("the tenth")
		}
		return time.Millisecond, nil
	})
	if calls.Load() != 50 || len(lats) != 45 || err == nil || strings.Count(err.Error(), "the tenth") != 5 {
		t.Fatalf("%d calls, %d latencies, %v", calls.Load(), len(lats), err)
	}
}
