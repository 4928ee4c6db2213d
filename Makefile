# agentnode: every build and test goes through here so that the README, CI
# and a newcomer run exactly the same commands.

GO        ?= go
GOTAGS    := libsecp256k1
GOFLAGS_  := -tags $(GOTAGS)
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.Version=$(VERSION)

.PHONY: run build test test-go interop-deps chromium postgres fuzz bench vet lint staticcheck deadcode

## run: build and start the node with embedded defaults (ws://127.0.0.1:7447, ./agentnode-data)
run: build
	./bin/agentnode serve

## build: the single binary, bin/agentnode
build:
	@test -x bin/agentnode || echo "building bin/agentnode: the first build compiles LMDB, libsecp256k1 and SQLite with cgo and takes a few minutes; later builds take seconds"
	$(GO) build $(GOFLAGS_) -ldflags '$(LDFLAGS)' -o bin/agentnode ./cmd/agentnode

## test: everything — installs the interop npm packages, chromium and postgresql, vets, runs every Go test (incl. the nostr-tools and browser suites), then lints (staticcheck, deadcode)
test: interop-deps chromium postgres vet test-go lint

interop-deps:
	cd interop && npm ci --no-audit --no-fund --loglevel=error

## chromium: Debian's chromium for the browser tests (interop/web_test.go); a no-op when installed.
## Where apt-get cannot install it (no root, no network) the browser tests skip and say why.
CHROMIUM := /usr/bin/chromium
chromium:
	@test -x $(CHROMIUM) || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium) \
		|| echo "chromium could not be installed: the browser tests (interop/web_test.go) will skip"

## postgres: Debian's PostgreSQL server binaries for the Postgres tests (internal/pgtest starts a
## throwaway cluster from them); a no-op when installed. Where apt-get cannot install them the
## Postgres tests skip and say why.
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql) \
		|| echo "postgresql could not be installed: the Postgres tests (internal/pgtest users) will skip"

vet:
	$(GO) vet $(GOFLAGS_) ./...

## lint: staticcheck and deadcode at pinned versions. `go run pkg@version` fetches each
## tool with its own released go.mod through the Go module proxy (checked against
## sum.golang.org) and builds it once into the build cache; nothing to install.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
DEADCODE    := golang.org/x/tools/cmd/deadcode@v0.52.0
lint: staticcheck deadcode

staticcheck:
	$(GO) run $(STATICCHECK) $(GOFLAGS_) ./...

## deadcode: no function the binary cannot reach (a test-only one belongs in a _test.go file)
deadcode:
	@out=$$($(GO) run $(DEADCODE) $(GOFLAGS_) ./cmd/agentnode) || exit 1; \
	if [ -n "$$out" ]; then echo "$$out"; \
		echo "deadcode: the binary cannot reach these: delete them, or move a test-only one into a _test.go file"; exit 1; fi

test-go:
	$(GO) test $(GOFLAGS_) -count=1 -timeout 15m ./...

## fuzz: run every fuzz target (events, ACP packages, JSON-RPC, ASM-QL, ...) for FUZZTIME (default 20s) each
FUZZTIME ?= 20s
FUZZPKGS := ./events/ ./capabilities/acp/ ./capabilities/llm/ ./capabilities/router/ ./jsonrpc/ \
	./agentd/agentrpc/ ./agentd/state/asmql/ ./lessons/
fuzz:
	for p in $(FUZZPKGS); do \
		for f in $$($(GO) test $(GOFLAGS_) -list '^Fuzz' $$p | grep ^Fuzz); do \
			$(GO) test $(GOFLAGS_) -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$p || exit 1; done; done

## bench: relay figures against plain khatru + lmdb: ingest, queries, fan-out (see docs/BENCHMARKS.md)
BENCHDIR ?= /tmp
bench: build
	./bin/agentnode bench ingest --dir $(BENCHDIR)
	./bin/agentnode bench query --dir $(BENCHDIR)
	./bin/agentnode bench fanout --dir $(BENCHDIR)
