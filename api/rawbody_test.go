package api_test

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/store"
)

// TestUnreadableBodyIsAClientError: a body the server cannot read (broken chunked encoding) is
// the client's mistake, a 400, not an internal error.
func TestUnreadableBodyIsAClientError(t *testing.T) {
	t.Parallel()
	e := setupEnvOn(t, onPostgres, store.Limits{})
	a := newTenant(t, e, "acme", "")
	for _, route := range []string{"POST /v1/tokens", "POST /v1/events/e", "POST /v1/modules"} {
		method, path, _ := strings.Cut(route, " ")
		conn, err := net.Dial("tcp", e.srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_, err = conn.Write([]byte(method + " " + path + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + a.token +
			"\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\nzz\r\n"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		conn.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s with a broken chunked body: %d, want 400", route, resp.StatusCode)
		}
	}
	if n := e.errorsLogged.Load(); n != 0 {
		t.Errorf("%d requests were logged as internal errors", n)
	}
}
