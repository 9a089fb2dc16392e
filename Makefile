# wfhost: `make help` lists the targets.
SHELL := /bin/bash
GO ?= go
# Root-module commands run outside the workspace: the guest modules build only for wasm.
ROOT := GOWORK=off
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/test?sslmode=disable
export TEST_DATABASE_URL
BIN := bin/wfhost

.PHONY: help build test test/go test/sdks test/scenarios test/console console/screenshots test/race test/short lint check testdata testdata/check testdata/tinygo run bench bench/api bench/scale bench/go bench/peers clean

help: ## list the targets
	@grep -E '^[a-zA-Z/_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

build: ## build bin/wfhost
	$(ROOT) $(GO) build -o $(BIN) ./cmd/wfhost

test: test/sdks test/go test/scenarios test/console ## every test: the guest SDKs' own, Go's with -race against the Postgres in TEST_DATABASE_URL, the example scenarios in every language, then the console's in Chromium

# The timeout is a liveness bound on each package's test binary, not a speed bound: on a slow
# two-core machine (2026-11-29) cmd/wfhost took 872 s of 15 minutes, so 30 leaves room.
test/go: ## the Go tests, with the race detector
	$(ROOT) $(GO) test -race -count=1 -timeout 30m ./...

# The example workflows' scenarios, run by wfhost test on each language's build of them (TinyGo's
# when make testdata/tinygo has built it).
# Each pair is a module and the directory of scenarios it runs.
SCENARIO_RUNS := testdata/examples.wasm:examples/wasm/scenarios testdata/examples_rust.wasm:examples/wasm/scenarios \
	testdata/examples_as.wasm:examples/wasm/scenarios testdata/extism_go.wasm:examples/wasm/scenarios \
	testdata/extism_as.wasm:examples/wasm/scenarios \
	testdata/capabilities.wasm:examples/wasm/scenarios/capabilities testdata/capabilities_rust.wasm:examples/wasm/scenarios/capabilities \
	testdata/capabilities_as.wasm:examples/wasm/scenarios/capabilities \
	$(if $(wildcard testdata/tinygo/examples.wasm),testdata/tinygo/examples.wasm:examples/wasm/scenarios)

test/scenarios: build ## the example workflows' scenarios (examples/wasm/scenarios) in every guest language: virtual time, a crash at every store write, duplicated, early and late events
	WFHOST_BIN=$(BIN) bash examples/wasm/scenarios/run-all.sh $(SCENARIO_RUNS)

test/sdks: ## the guest SDKs' unit tests that run outside wasm (Rust with Debian's rustc: .ci/toolchain-rust.sh)
	bash guest-sdk/rust/test.sh

test/console: build ## the web console's browser tests: Playwright and Debian's Chromium against bin/wfhost (.ci/toolchain-console.sh installs them)
	@test -d ui/browsertest/node_modules/playwright-core || { echo "ui/browsertest needs npm ci: run .ci/toolchain-console.sh"; exit 1; }
	cd ui/browsertest && WFHOST_CONSOLE_BINARY=$(CURDIR)/$(BIN) npm test --silent

console/screenshots: build ## retake docs/console-runs.png and docs/console-run.png (the README's) with the browser tests
	mkdir -p docs
	cd ui/browsertest && WFHOST_CONSOLE_BINARY=$(CURDIR)/$(BIN) WFHOST_CONSOLE_SCREENSHOTS=$(CURDIR)/docs npm test --silent

test/race: test/go ## same as test/go (Go tests always run with -race)

test/short: ## quick tests, no end-to-end crash tests
	$(ROOT) $(GO) test -short -count=1 ./...

lint: ## gofmt, go vet, Redocly CLI on api/openapi.json, promtool on the alerting rules
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(ROOT) $(GO) vet ./...
	cd guest-sdk/go && GOOS=wasip1 GOARCH=wasm $(GO) vet ./... && GOOS=wasip1 GOARCH=wasm $(GO) vet -tags extism ./... && GOWORK=off $(GO) test ./...
	cd examples/wasm/go && GOWORK=off GOOS=wasip1 GOARCH=wasm $(GO) vet ./... && GOWORK=off GOOS=wasip1 GOARCH=wasm $(GO) vet -tags extism .
	@test -x api/lint/node_modules/.bin/redocly || { echo "api/lint needs npm ci: run .ci/toolchain-openapi-lint.sh"; exit 1; }
	cd api/lint && REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true npm run --silent lint
	promtool check rules deploy/prometheus/alerts.yml
	promtool test rules deploy/prometheus/alerts_test.yml

check: lint testdata/check ## lint, and fail if the committed fixtures differ from a rebuild

testdata: ## rebuild the committed .wasm fixtures from source
	bash testdata/build.sh

testdata/tinygo: ## build the Go examples with TinyGo (guest-sdk/go/tinygo/install.sh, .ci/toolchain-tinygo.sh); the conformance suite then covers them
	bash guest-sdk/go/tinygo/build.sh

testdata/check: testdata ## rebuild the fixtures and fail if any differs from the committed one
	@git diff --exit-code --stat -- testdata || (echo "committed fixtures differ from a rebuild: run make testdata and commit" && exit 1)

run: build ## start the daemon on the embedded store (~/.local/share/wfhost, or WFHOST_DATA_DIR) with the example workflows deployed
	$(BIN) run --deploy testdata/examples.wasm

bench: ## wfbench: 10-step and 1-step throughput, 1-step latency, idle queries, latency under a hostile tenant (RESULT lines)
	$(ROOT) $(GO) build -o bin/wfbench ./cmd/wfbench
	bin/wfbench -mode=direct -steps=10 -n=1000 -c=32
	bin/wfbench -mode=direct -steps=1 -n=2000 -c=32
	bin/wfbench -mode=latency -steps=1 -n=300
	bin/wfbench -mode=idle -idle=10s
	bin/wfbench -mode=attack -steps=1 -n=300

bench/api: ## 1-step and 10-step direct runs at c=32 in process, then through the HTTP API (wfbench -via=http; BENCHMARKS.md, Through the API)
	$(ROOT) $(GO) build -o bin/wfbench ./cmd/wfbench
	for lang in assemblyscript go; do for steps in 1 10; do for via in engine http; do \
	  bin/wfbench -mode=direct -lang=$$lang -steps=$$steps -n=2000 -c=32 -via=$$via || exit 1; \
	done; done; done

bench/scale: ## wfbench -mode=scale at quick sizes, on Postgres then the embedded store (a few minutes; the issue's full sizes are the flags' defaults: BENCHMARKS.md, At scale)
	$(ROOT) $(GO) build -o bin/wfbench ./cmd/wfbench
	for st in postgres embedded; do \
	  bin/wfbench -mode=scale -lang=assemblyscript -store=$$st -scale-s=10,100,1000 -scale-timers=2000 -scale-signals=2000 \
	    -scale-neighbour-n=100 -scale-backlog=5000 -scale-sleeping=10000 -scale-recovery=10000 -scale-idle=5s || exit 1; \
	done

bench/go: ## the Go micro-benchmarks (activation, replay, store commits, drain)
	$(ROOT) $(GO) test -run='^$$' -bench=. -benchtime=2s ./...

bench/peers: ## wfhost beside DBOS (../shared/peers), 3 alternating rounds, medians
	bash bench/peers.sh 3

clean: ## remove build output
	rm -rf bin
