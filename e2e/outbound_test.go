package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wfhost/wfhost/api/wire"
)

// TestAllowPrivateHostsFlag: a daemon refuses a tenant's request to a server on this machine,
// without connecting to it, even with the server on the tenant's allowlist; started again with
// --allow-private-hosts, the same run reaches the server. Local development needs nothing more
// than the flag.
func TestAllowPrivateHostsFlag(t *testing.T) {
	var (
		mu              sync.Mutex
		conns, requests int
	)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests++
		mu.Unlock()
		fmt.Fprint(w, "hello from this machine")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			conns++
			mu.Unlock()
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	seen := func() (int, int) {
		mu.Lock()
		defer mu.Unlock()
		return conns, requests
	}

	const admin = "e2e-admin-token"
	b := newEmbeddedBackend(t)
	fetch := func(d *daemon) wire.Run {
		t.Helper()
		r := d.startRun("http-fetch", map[string]any{"url": srv.URL + "/hello"})
		return d.awaitRun("http-fetch", r.ID)
	}

	d := newDaemon(t, "no-private", b, "--admin-token", admin)
	d.start()
	limits, _ := json.Marshal(map[string]any{"limits": map[string]any{"allowedHosts": []string{srv.URL}}})
	if code, body := adminCall(t, d, "PATCH", "/v1/tenants/default", admin, limits); code != 200 {
		t.Fatalf("set the default tenant's allowlist: %d %s", code, body)
	}
	d.deployFixture("capabilities.wasm")
	if r := fetch(d); r.Status != "failed" || r.Error == nil || r.Error.Code != "http_denied" || !strings.Contains(r.Error.Message, "not public") {
		t.Fatalf("without --allow-private-hosts: %+v", r)
	}
	if c, n := seen(); c != 0 || n != 0 {
		t.Fatalf("without --allow-private-hosts the server saw %d connections and %d requests", c, n)
	}
	if err := d.terminate(10 * time.Second); err != nil {
		t.Fatal(err)
	}

	d = newDaemon(t, "private", b, "--admin-token", admin, "--allow-private-hosts")
	d.start()
	if r := fetch(d); r.Status != "completed" || !strings.Contains(string(r.Output), "hello from this machine") {
		t.Fatalf("with --allow-private-hosts: %+v %s", r, r.Output)
	}
	if _, n := seen(); n != 1 {
		t.Fatalf("with --allow-private-hosts the server saw %d requests, want 1", n)
	}
	if len(d.logRecords("--allow-private-hosts is on")) != 1 {
		t.Fatalf("the daemon did not warn that private addresses are allowed:\n%s", d.logTail(2000))
	}
}

func adminCall(t *testing.T, d *daemon, method, path, token string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, d.url(path), bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if len(body) > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}
