// Command wfhost is the durable workflow daemon (`wfhost run`), its migrator, the tool for the
// keys that encrypt secrets (`wfhost secret-keys new|rewrap`), and a client for its REST API.
// `wfhost init --lang go|tinygo|rust|assemblyscript DIR` writes a new workflow project (init.go,
// templates in initdata/) that takes its guest SDK by path from a wfhost checkout (--sdk, else
// the one around the binary) and builds with `make`. Every flag can also be set through the
// WFHOST_* variable named in its help. The daemon's flags cover every engine setting, every
// tenant limit's default (limits.go) and every outbound bound; their defaults are
// internal/defaults', read through the engine and the host.
//
// The client commands print tables for people; with --output json (or --json) the server's
// JSON, with --output yaml the same as YAML:
//
//	deploy FILE.wasm [--replace]
//	modules list
//	workflows list
//	start WORKFLOW [--input JSON|@FILE|-] [--version V] [--idempotency-key K] [--retention-days N] [--priority S] [--wait [--timeout D]]
//	runs list [WORKFLOW] [--workflow W] [--status S] [--parent RUN_ID] [--since T] [--until T] [--input key.path=value]... [--limit N] [--cursor C] [--all]
//	runs get|steps|cancel WORKFLOW RUN_ID
//	runs export WORKFLOW RUN_ID [--file FILE]
//	runs log WORKFLOW RUN_ID [--follow [--interval D]]   (the lifecycle log; --follow until the run ends)
//	replay --module FILE.wasm EXPORT.json [--max-export-bytes N]   (offline: no daemon)
//	signal WORKFLOW RUN_ID EVENT [--payload JSON|@FILE|-]
//	events send EVENT [--payload JSON|@FILE|-] [--id EVENT_ID]
//	schedules create ID --workflow W (--cron EXPR [--timezone TZ] | --every D) [--input JSON] [--overlap P] [--catchup-window D] [--jitter D] [--paused]
//	schedules list | get|pause|resume|trigger|delete ID | next ID [-n N]
//	tenants create ID [--limits JSON] | list | get [ID] | set-limits ID --limits JSON
//	tokens create [--name N] | list | revoke TOKEN_ID, each with [--tenant ID]
//	version
//	completion bash|zsh|fish
//
// Tenant commands authenticate with --token (default: the token a local daemon keeps in its
// data directory); tenants and --tenant use --admin-token. Flags may follow the arguments,
// and --url, --token and --output (-o) may also come before the command (args.go). A JSON
// flag's value "@FILE" is read from the file, "-" from stdin.
//
// A failure prints one line on stderr ("wfhost: ..."), or under --output json one object,
// {"error": {"code", "message", "http_status", "exit_code"}} (YAML under --output yaml), and
// exits with its class's code; classify (errors.go) is the one mapping:
//
//	0  success
//	1  other: the server refused the request (400, 413, 429), or answered what the CLI cannot read
//	2  usage: unknown command or flag, missing argument, bad flag value, unreadable @FILE
//	3  auth: no token, or the server refused it (401, 403)
//	4  not found (404): no such workflow, run, tenant or token
//	5  conflict (409): a run already ended, a version bound to another module (deploy --replace)
//	6  run failed: start --wait saw the run end failed, cancelled or nondeterministic
//	7  timeout: start --wait gave up after --timeout, the run still going
//	8  unavailable: the daemon could not be reached, or answered 5xx (503 while its store is down)
//	9  diverged: replay found the module diverging from the exported run's journal
//	10 test failed: wfhost test saw a scenario, or one of its variants, end otherwise than it must
//
// Shell completion is urfave/cli's: the scripts `wfhost completion SHELL` prints run
// `wfhost WORDS... --generate-bash-completion`, which prints what may come next.
//
// Imports: what it wires (api, api/client, api/wire, engine, engine/wftest, host, store and its two
// implementations, internal/defaults, internal/envelope), urfave/cli, Prometheus and the
// OpenTelemetry SDK; nothing imports it.
package main
