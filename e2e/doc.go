// Package e2e holds end-to-end tests: they build the wfhost binary, run it as real processes
// on each store (a real Postgres, and the embedded SQLite store in a temporary data
// directory), deploy the committed example modules over the REST API, signal, cancel and
// break runs, and kill the daemons with SIGKILL mid-run. It has no non-test code.
package e2e
