// Package abi is the contract between the wfhost host and a workflow module: import and export
// names, reply statuses, payload types and their JSON encoding, and the ABI version.
//
// ABI.md in this directory is the normative text; this package is its Go form, shared by the
// host and by the Go guest SDK. It imports nothing outside the standard library, so a guest
// can depend on it without pulling in any of the host.
package abi
