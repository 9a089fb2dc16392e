// Package api serves wfhost's REST API (DESIGN.md, Interfaces) over an engine: modules,
// workflows, runs, signals, broadcast events, journals, health and metrics. Errors are always
// {"error": {"code", "message"}} with a fitting status; no input can make it panic or leak an
// internal error. Requests are read strictly (strictjson.go, query.go): every client mistake
// is a 4xx whose message names the field, parameter or header. RATIONALE.md says why.
//
// The JSON shapes it reads and writes are declared once, in api/wire; views.go builds them from
// the engine's records.
//
// Imports: engine, store (types and sentinels), abi, api/wire, prometheus and the standard
// library; never host internals or a store implementation.
package api
