package ui

import (
	"net/http"
	"strings"
)

// Prefix is where the console is served.
const Prefix = "/ui/"

// ContentSecurityPolicy is sent with every file of the console. Run inputs, outputs, errors
// and payloads are tenant-controlled and shown in the page: should a script ever put one into
// the document as markup, the policy still refuses inline script and event handlers, scripts,
// styles, images and connections from anywhere but the daemon, plugins, <base> rewrites and
// being framed (clickjacking the cancel button).
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the console's files under Prefix (mount it at "GET /ui/"). It is safe for
// concurrent use.
func Handler() http.Handler {
	fileServer := http.StripPrefix(strings.TrimSuffix(Prefix, "/"), http.FileServerFS(files))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY") // frame-ancestors for browsers that predate it
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		// The files change with the binary, which has no build time to put in a Last-Modified:
		// no-cache makes the browser revalidate, so a new daemon never runs yesterday's scripts.
		h.Set("Cache-Control", "no-cache")
		// The console is its files, not a file browser: a directory other than the console's
		// own (whose index.html is the page) is not listed.
		if strings.HasSuffix(r.URL.Path, "/") && r.URL.Path != Prefix {
			http.NotFound(w, r)
			return
		}
		fileServer.ServeHTTP(w, r)
	})
}

// Redirect sends /ui to /ui/, where the console's relative URLs resolve.
func Redirect() http.Handler { return http.RedirectHandler(Prefix, http.StatusMovedPermanently) }
