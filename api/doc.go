// Package api serves wfhost's REST API (DESIGN.md, Interfaces) over an engine: modules,
// workflows, runs, signals, broadcast events, journals, schedules, health and metrics. Errors
// are always {"error": {"code", "message"}} with a fitting status; no input can make it panic
// or leak an internal error. Requests are read strictly (strictjson.go, query.go): every client
// mistake is a 4xx whose message names the field, parameter or header. RATIONALE.md says why.
//
// The JSON shapes it reads and writes are declared once, in api/wire; views.go builds them from
// the engine's records.
//
// It asks two things of the daemon, each an interface declared here with the methods the
// handlers call (service.go): a Service for every request that checks, limits or changes
// something (the engine's Service satisfies it), and a Reader for the reads it serves as the
// store has them (any store.Store). It never names the concrete engine type.
//
// It also serves the web console's static files at /ui (package ui), and redirects / there.
//
// Imports: engine, store (types and sentinels), abi, api/wire, ui, prometheus and the standard
// library; never host internals or a store implementation.
package api
