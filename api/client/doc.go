// Package client is a small HTTP client for wfhost's REST API, used by the CLI and by tests.
// It imports only the standard library.
package client
