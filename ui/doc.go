// Package ui is wfhost's web console: a few static files (HTML, CSS and plain ES modules)
// embedded in the binary and served by the daemon at /ui. The console is a client of the REST
// API like any other: it signs in with a tenant token (or the admin token), keeps it in the
// browser's sessionStorage and sends it as the API's bearer token, so it can see and do nothing
// a token could not do with curl.
//
// The console renders tenant-controlled data (run inputs, outputs, errors, event payloads):
// the handler serves every file under a strict Content-Security-Policy, and the scripts build
// the page with textContent and DOM calls, never innerHTML. RATIONALE.md says why there is no
// front-end framework and no build step.
//
// ui/browsertest holds its browser tests (Playwright driving Chromium against a daemon built
// from the tree; make test/console), which are JavaScript, not part of this Go package.
//
// Imports: the standard library only, so api can mount it without a cycle.
package ui
