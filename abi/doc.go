// Package abi is the contract between the wfhost host and a workflow module: import and export
// names, reply statuses, payload types and their JSON encoding, and the ABI version.
//
// ABI.md in this directory is the normative text; this package is its Go form, used by the
// host, the engine and the API. It imports nothing outside the standard library, so a guest
// could depend on it without pulling in any of the host; the guest SDKs (guest-sdk/) are
// modules of their own that write the same names and statuses themselves, held to the host by
// the engine's cross-language conformance suite.
package abi
