package e2e_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wfhost/wfhost/internal/testenv"
)

// The daemon binary is built once per test process, from this checkout.
var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// daemonBinary is the wfhost binary the tests run: built from this checkout, or the one
// WFHOST_E2E_BINARY names (to see a test fail against an older build).
func daemonBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("WFHOST_E2E_BINARY"); bin != "" {
		return bin
	}
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wfhost-e2e-bin")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "wfhost")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/wfhost")
		cmd.Dir = ".."
		cmd.Env = append(os.Environ(), "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

func databaseURL() string { return testenv.DatabaseURL() }

// freshSchema names a schema for one test and drops it when the test ends.
func freshSchema(t *testing.T) string { return testenv.Schema(t, "wfhost_e2e") }

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// daemon is one `wfhost run` process. Its stderr (JSON logs) is kept across restarts.
type daemon struct {
	t      *testing.T
	name   string
	addr   string
	args   []string
	cmd    *exec.Cmd
	logMu  sync.Mutex
	logs   bytes.Buffer
	exited chan struct{}
}

// e2eToken is the default tenant's token every test daemon accepts.
const e2eToken = "e2e-default-tenant-token"

// newDaemon prepares a daemon on store b; start runs it.
func newDaemon(t *testing.T, name string, b backend, extra ...string) *daemon {
	t.Helper()
	addr := freePort(t)
	storeArgs, dataDir := b.daemonArgs(t)
	args := append([]string{"run"}, storeArgs...)
	args = append(args,
		"--listen", addr,
		"--data-dir", dataDir,
		"--lease", "2s",
		"--poll-interval", "500ms",
		"--shutdown-grace", "2s",
		"--log-format", "json",
		"--log-level", "debug",
		"--owner", name,
		"--token", e2eToken,
	)
	d := &daemon{t: t, name: name, addr: addr, args: append(args, extra...)}
	t.Cleanup(func() { d.kill() })
	return d
}

func (d *daemon) url(path string) string { return "http://" + d.addr + path }

func (d *daemon) start() {
	d.t.Helper()
	d.cmd = exec.Command(daemonBinary(d.t), d.args...)
	d.cmd.Stdout = io.Discard
	pr, pw := io.Pipe()
	d.cmd.Stderr = pw
	d.exited = make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			d.logMu.Lock()
			d.logs.Write(sc.Bytes())
			d.logs.WriteByte('\n')
			d.logMu.Unlock()
		}
	}()
	if err := d.cmd.Start(); err != nil {
		d.t.Fatalf("start %s: %v", d.name, err)
	}
	go func() { _ = d.cmd.Wait(); pw.Close(); close(d.exited) }()
	err := testenv.Poll(d.t, 60*time.Second, func() error {
		select {
		case <-d.exited:
			d.t.Fatalf("%s exited during start:\n%s", d.name, d.logTail(4000))
		default:
		}
		resp, err := http.Get(d.url("/readyz"))
		if err != nil {
			return fmt.Errorf("%s is not ready: %w", d.name, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s is not ready: /readyz answers %s", d.name, resp.Status)
		}
		return nil
	})
	if err != nil {
		d.t.Fatalf("%v\n%s", err, d.logTail(4000))
	}
}

// kill sends SIGKILL: no shutdown code runs, as in a crash.
func (d *daemon) kill() {
	if d.cmd == nil || d.cmd.Process == nil {
		return
	}
	_ = d.cmd.Process.Signal(syscall.SIGKILL)
	<-d.exited
	d.cmd = nil
}

// terminate sends SIGTERM and waits for a clean exit.
func (d *daemon) terminate(timeout time.Duration) error {
	if d.cmd == nil {
		return nil
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
		err := d.cmd.ProcessState
		d.cmd = nil
		if !err.Success() {
			return fmt.Errorf("%s exited with %v", d.name, err)
		}
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("%s did not exit within %v of SIGTERM", d.name, timeout)
	}
}

func (d *daemon) logText() string {
	d.logMu.Lock()
	defer d.logMu.Unlock()
	return d.logs.String()
}

func (d *daemon) logTail(n int) string {
	s := d.logText()
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// logRecords returns the daemon's JSON log records whose message starts with prefix.
func (d *daemon) logRecords(prefix string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(d.logText(), "\n") {
		if !strings.Contains(line, prefix) {
			continue
		}
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if msg, _ := rec["msg"].(string); strings.HasPrefix(msg, prefix) {
			out = append(out, rec)
		}
	}
	return out
}

func (d *daemon) do(method, path string, body any) (int, []byte, error) {
	var rd io.Reader
	contentType := "application/json"
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
		contentType = "application/wasm"
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, d.url(path), rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+e2eToken)
	if rd != nil {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}

// metric sums the samples of a counter or gauge family in the daemon's /metrics.
func (d *daemon) metric(name string) float64 {
	d.t.Helper()
	out := d.mustDo("GET", "/metrics", nil, 200)
	var sum float64
	for _, line := range strings.Split(string(out), "\n") {
		// name may end with its labels: a series of them, not the metric's sum.
		if !strings.HasPrefix(line, name+" ") && !strings.HasPrefix(line, name+"{") && !(strings.HasSuffix(name, "}") && strings.HasPrefix(line, name)) {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			d.t.Fatalf("metric %s: %q: %v", name, line, err)
		}
		sum += v
	}
	return sum
}

func (d *daemon) mustDo(method, path string, body any, want int) []byte {
	d.t.Helper()
	code, out, err := d.do(method, path, body)
	if err != nil {
		d.t.Fatalf("%s %s: %v", method, path, err)
	}
	if code != want {
		d.t.Fatalf("%s %s: status %d, want %d: %s", method, path, code, want, out)
	}
	return out
}
