// Package client is a small HTTP client for wfhost's REST API, used by the CLI and by tests.
// The requests it sends and the answers it returns have the shapes of package api/wire.
//
// Imports: api/wire (and through it abi) and the standard library, so a program that calls the
// API does not build the engine, the host or a store.
package client
