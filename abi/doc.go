// Package abi is the contract between the wfhost host and a workflow module: import and export
// names and their signatures (one table, contract.go, from which the host's native and Extism
// transports and its load checks derive theirs), reply statuses, error codes, payload types,
// and the rules by which the host reads what a guest hands it (decode.go, storable.go), so that
// no rule of the contract is written anywhere else.
//
// ABI.md in this directory is the normative text; this package is its Go form, used by the
// host, the engine and the API, and a test (contract_test.go) fails when the two disagree. It
// imports nothing outside the standard library, so a guest could depend on it without pulling
// in any of the host; the guest SDKs (guest-sdk/) are modules of their own that write the same
// names and statuses themselves, held to the host by the engine's cross-language conformance
// suite. RATIONALE.md records the decisions that shaped it.
package abi
