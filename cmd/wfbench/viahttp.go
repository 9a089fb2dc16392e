package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/wfhost/wfhost/api"
	"github.com/wfhost/wfhost/api/client"
	"github.com/wfhost/wfhost/api/wire"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/store"
)

// -via=http (issue 17, point 3): the direct and latency modes driven through the daemon's
// real HTTP API instead of engine calls. The daemon is this process (the engine, api.Handler
// on a loopback listener, as `wfhost run` wires them); the callers are a second process, this
// binary started with -load-url, so the CPU this process reports is the daemon's alone, as it
// is in process (where the callers are goroutines that cost next to nothing beside the
// engine). Each caller sends POST /v1/workflows/steps/runs?wait=60, the request a client that
// wants a run's result sends, over kept-alive connections.

// loadTokenEnv hands the load process its token: not on its command line, which any user of
// the machine can read.
const loadTokenEnv = "WFBENCH_LOAD_TOKEN"

// serveAPI serves eng's API on a loopback port and returns its base URL, a token of the
// default tenant and a stop func. Access records are Info: the Warn logger drops them before
// formatting, as a daemon that does not log them would.
func serveAPI(ctx context.Context, eng *engine.Engine, st store.Store) (baseURL, token string, stop func(), err error) {
	token, _ = engine.NewSecret()
	if err := eng.EnsureToken(ctx, store.DefaultTenant, token, "wfbench"); err != nil {
		return "", "", nil, err
	}
	handler := api.New(api.Config{
		Service: eng.Service, Store: st, Ready: func(context.Context) error { return nil },
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", "", nil, err
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), token, func() { _ = srv.Close() }, nil
}

// loadResult is what the load process reports: its measured part's wall time and each run's
// latency, or why it failed.
type loadResult struct {
	ElapsedNs int64   `json:"elapsedNs"`
	LatsNs    []int64 `json:"latsNs"`
	Error     string  `json:"error,omitempty"`
}

// loadProcess is a started load process that has warmed up and waits for go.
type loadProcess struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

// startLoad starts this binary as the load process against baseURL and waits until it has
// made its warm-up runs (compiled code, idle instances, connections), so the measured part
// can start with go.
func startLoad(ctx context.Context, o options, baseURL, token string) (*loadProcess, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, self, "-load-url", baseURL, "-mode", o.mode,
		"-n", fmt.Sprint(o.n), "-c", fmt.Sprint(o.c), "-steps", fmt.Sprint(o.steps))
	cmd.Env = append(os.Environ(), loadTokenEnv+"="+token)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &loadProcess{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	line, err := p.out.ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("load process: %q, %v", line, err)
	}
	return p, nil
}

// run starts the measured part and returns its wall time and latencies.
func (p *loadProcess) run() (time.Duration, []time.Duration, error) {
	var res loadResult
	_, err := io.WriteString(p.stdin, "go\n")
	if err == nil {
		err = json.NewDecoder(p.out).Decode(&res)
	}
	_ = p.stdin.Close()
	err = errors.Join(err, p.cmd.Wait())
	if res.Error != "" {
		err = errors.Join(errors.New(res.Error), err)
	}
	if err != nil {
		return 0, nil, fmt.Errorf("load process: %w", err)
	}
	lats := make([]time.Duration, len(res.LatsNs))
	for i, ns := range res.LatsNs {
		lats[i] = time.Duration(ns)
	}
	return time.Duration(res.ElapsedNs), lats, nil
}

// runLoadProcess is this binary as the load process (-load-url): 20 warm-up runs, "ready",
// then on "go" the mode's runs, and one loadResult on stdout.
func runLoadProcess(o options, baseURL string) error {
	ctx := context.Background()
	c := &client.Client{BaseURL: baseURL, Token: os.Getenv(loadTokenEnv), HTTP: &http.Client{
		Transport: &http.Transport{MaxIdleConnsPerHost: o.c, MaxIdleConns: o.c, IdleConnTimeout: time.Minute},
	}}
	one := func() (time.Duration, error) {
		began := time.Now()
		raw, err := c.Do(ctx, "POST", "/v1/workflows/steps/runs?wait=60", wire.StartRun{Input: json.RawMessage(fmt.Sprintf(`{"n":%d}`, o.steps))})
		if err != nil {
			return 0, err
		}
		var run wire.Run
		if err := json.Unmarshal(raw, &run); err != nil {
			return 0, err
		}
		if run.Status != "completed" {
			return 0, fmt.Errorf("run %s ended %s: %+v", run.ID, run.Status, run.Error)
		}
		return time.Since(began), nil
	}
	report := func(res loadResult) error { return json.NewEncoder(os.Stdout).Encode(res) }
	for range 20 {
		if _, err := one(); err != nil {
			return report(loadResult{Error: "warm-up: " + err.Error()})
		}
	}
	fmt.Println("ready")
	if line, _ := bufio.NewReader(os.Stdin).ReadString('\n'); strings.TrimSpace(line) != "go" {
		return errors.New("the daemon process went away")
	}
	callers := o.c
	if o.mode == "latency" {
		callers = 1
	}
	began := time.Now()
	lats, err := callInParallel(o.n, callers, one)
	res := loadResult{ElapsedNs: int64(time.Since(began))}
	for _, d := range lats {
		res.LatsNs = append(res.LatsNs, int64(d))
	}
	if err != nil {
		res.Error = err.Error()
	}
	return report(res)
}

// callInParallel calls one n times from c goroutines and returns each call's latency.
func callInParallel(n, c int, one func() (time.Duration, error)) ([]time.Duration, error) {
	jobs := make(chan struct{}, n)
	for range n {
		jobs <- struct{}{}
	}
	close(jobs)
	var (
		mu   sync.Mutex
		lats []time.Duration
		errs []error
		wg   sync.WaitGroup
	)
	for range c {
		wg.Go(func() {
			for range jobs {
				d, err := one()
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					lats = append(lats, d)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return lats, errors.Join(errs...)
}
