// Command wfhost is the durable workflow daemon (`wfhost run`), its migrator, the tool for the
// keys that encrypt secrets (`wfhost secret-keys new|rewrap`), and a client for its REST API.
// Every flag can also be set through the WFHOST_* variable named in its help. The daemon's
// flags cover every engine setting, every tenant limit's default (limits.go) and every
// outbound bound; their defaults are internal/defaults', read through the engine and the host.
//
// The client commands print tables for people and, with --json, the server's JSON:
//
//	deploy FILE.wasm [--replace]
//	modules list
//	workflows list
//	start WORKFLOW [--input JSON] [--version V] [--idempotency-key K] [--retention-days N] [--wait [--timeout D]]
//	runs list [WORKFLOW] [--workflow W] [--status S] [--since T] [--until T] [--input key.path=value]... [--limit N] [--cursor C] [--all]
//	runs get|steps|cancel WORKFLOW RUN_ID
//	signal WORKFLOW RUN_ID EVENT [--payload JSON]
//	events send EVENT [--payload JSON] [--id EVENT_ID]
//	tenants create ID [--limits JSON] | list | get [ID] | set-limits ID --limits JSON
//	tokens create [--name N] | list | revoke TOKEN_ID, each with [--tenant ID]
//
// Tenant commands authenticate with --token (default: the token a local daemon keeps in its
// data directory); tenants and --tenant use --admin-token. Flags may follow the arguments.
package main
