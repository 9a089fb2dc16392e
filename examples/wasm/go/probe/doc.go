// Command probe is a workflow module that tries to leak a secret, and to write values no store
// can keep: it reads a tenant secret and writes it where its input says (a step's output or
// error, the run's output or error, a name, a wait, a log line, stdout or stderr, an outbound
// request's host or path), in the encoding its input says (as is, JSON-escaped, every character
// as a \u escape in either case, percent-encoded, placed across the host's 4 KiB log cut), or
// writes the bytes its input gives verbatim. The host's leak matrix and storability tests run
// it cell by cell.
//
// It speaks the ABI (abi/ABI.md) directly, without the SDK, so that what it writes is exactly
// the bytes the test asked for: an SDK would re-encode them.
package main
