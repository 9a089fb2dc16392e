package ui_test

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/api"
	"github.com/wfhost/wfhost/ui"
)

// TestServedWithSecurityHeaders: the daemon's handler serves the console at /ui/ and every file
// carries the policy that keeps tenant-controlled data from running as script, with types the
// browser must not second-guess (nosniff refuses a module script served as anything else).
func TestServedWithSecurityHeaders(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(api.New(api.Config{}))
	defer srv.Close()
	client := srv.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

	for _, tc := range []struct{ path, contentType, contains string }{
		{"/ui/", "text/html; charset=utf-8", `<script type="module" src="js/app.js">`},
		{"/ui/app.css", "text/css; charset=utf-8", "prefers-color-scheme"},
		{"/ui/js/app.js", "text/javascript; charset=utf-8", "import"},
		{"/ui/js/dom.js", "text/javascript; charset=utf-8", "textContent"},
	} {
		res, err := client.Get(srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", tc.path, res.StatusCode, body)
		}
		want := map[string]string{
			"Content-Type":            tc.contentType,
			"Content-Security-Policy": ui.ContentSecurityPolicy,
			"X-Content-Type-Options":  "nosniff",
			"X-Frame-Options":         "DENY",
			"Referrer-Policy":         "no-referrer",
		}
		for k, v := range want {
			if got := res.Header.Get(k); got != v {
				t.Errorf("GET %s: %s = %q, want %q", tc.path, k, got, v)
			}
		}
		if !strings.Contains(string(body), tc.contains) {
			t.Errorf("GET %s: the body does not contain %q", tc.path, tc.contains)
		}
	}
	for _, directive := range []string{"default-src 'self'", "script-src 'self'", "frame-ancestors 'none'", "object-src 'none'"} {
		if !strings.Contains(ui.ContentSecurityPolicy, directive) {
			t.Errorf("the policy lacks %q", directive)
		}
	}
	if strings.Contains(ui.ContentSecurityPolicy, "unsafe-") {
		t.Errorf("the policy allows something unsafe: %s", ui.ContentSecurityPolicy)
	}

	for path, to := range map[string]string{"/ui": "/ui/", "/": "/ui/"} {
		res, err := client.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusMovedPermanently || res.Header.Get("Location") != to {
			t.Errorf("GET %s: %d to %q, want a redirect to %s", path, res.StatusCode, res.Header.Get("Location"), to)
		}
	}
	for _, path := range []string{"/ui/no-such-file.js", "/ui/js/"} {
		res, err := client.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, res.StatusCode)
		}
	}
}

// TestNoMarkupFromStrings: the policy is the second line; the first is that no script turns a
// string into markup. Every way to do so, and every inline script, handler or style attribute
// the policy would refuse (and so break the page), is kept out of the static files.
func TestNoMarkupFromStrings(t *testing.T) {
	t.Parallel()
	sinks := regexp.MustCompile(`\b(innerHTML|outerHTML|insertAdjacentHTML|document\.write|createContextualFragment|DOMParser)\b|\beval\(|\bnew Function\b|setAttribute\(\s*['"](on|style)`)
	inline := regexp.MustCompile(`(?i)<script(\s[^>]*)?>\s*[^<\s]|\son[a-z]+\s*=|\sstyle\s*=|javascript:`)
	err := filepath.WalkDir("static", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		switch filepath.Ext(path) {
		case ".js":
			if m := sinks.Find(b); m != nil {
				t.Errorf("%s uses %q: build elements with dom.js's h() and textContent", path, m)
			}
		case ".html":
			if m := inline.Find(b); m != nil {
				t.Errorf("%s has %q, which the Content-Security-Policy refuses", path, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
