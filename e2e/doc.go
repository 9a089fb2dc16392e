// Package e2e holds end-to-end tests: they build the wfhost binary, run it as real processes
// against a real Postgres, deploy the committed example modules over the REST API and kill the
// daemons with SIGKILL mid-run. It has no non-test code.
package e2e
