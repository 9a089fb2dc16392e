// Package wire declares the JSON shapes of wfhost's REST API, once: the requests a client
// sends and the responses and error body the server answers with (runs and their pages,
// journal steps, outbound audit records, modules, workflows, tenants and their limits, tokens,
// secrets, event results). The API's handlers build them from the engine's records
// (api/views.go), and every reader of the API decodes them: the Go client (api/client), the
// CLI (cmd/wfhost) and the end-to-end tests. api/openapi.json describes the same shapes, and a
// test in api holds each type's JSON fields to its schema.
//
// A field's JSON name or shape changes only on purpose, here, with the OpenAPI document. The
// server's records (store.Run and the rest) are separate types, so a change to what is stored
// does not change what the API says.
//
// Imports: abi (ErrorInfo and RetryPolicy travel as they are) and the standard library only, so
// a client of the API does not build the engine, the host or a store.
package wire
