# provision: build, test, demo, bench.
#
#   make demo    install the servers, start them on loopback, plan and apply specs/
#   make test    install the servers, then vet and run every test against them
#
# Servers (Consul 1.15.4, Traefik 1.7.34, 2.11.10 and 3.6.0, Elasticsearch 2.4.1) are built or
# unpacked once into $${XDG_CACHE_HOME:-$$HOME/.cache}/provision, outside the
# repository, by .ci/install-servers.

GO      ?= go
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

.PHONY: all build servers demo-servers test demo bench fuzz lint release clean

all: build

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/provision ./cmd/provision
	$(GO) build -o bin/gated-api ./cmd/gated-api

# make test needs every server; make demo runs one Consul agent, one
# Traefik (2) and Elasticsearch, and builds those alone, beside bin/.
servers:
	bash .ci/install-servers

DEMO_SERVERS := consul traefik2 elasticsearch
demo-servers:
	bash .ci/install-servers $(DEMO_SERVERS)

# provision test specs: the shipped specs' own golden plans, offline.
# TestRelease (make release twice, byte for byte) runs alone after the
# others: its twelve cross-builds would otherwise slow the packages beside
# it past their fuzz inputs' time limit.
# The last line runs make fuzz itself for a few seconds a target, so that
# the command CONTRIBUTING.md documents keeps working.
test: servers
	$(GO) vet ./...
	$(GO) run ./cmd/provision test specs
	$(GO) test -race -count=1 -timeout 40m ./...
	PROVISION_RELEASE_TEST=1 $(GO) test -count=1 -timeout 30m -run '^TestRelease$$' ./provision/internal/release
	$(MAKE) --no-print-directory fuzz FUZZTIME=3s

demo:
	@$(MAKE) --no-print-directory -j2 demo-servers build
	$(GO) run ./provision/internal/demo

# Micro-benchmarks (each with a baseline measured in the same run), then
# the whole binary against real servers on generated specs: one table,
# also written to bench.json (see provision/internal/bench). A number of
# services above 30,000 (BENCH_SERVICES=1000,10000,100000) is not
# registered: its validate and plan -snapshot rows plan from a live state
# synthesized from the largest real snapshot (-synthesize-above N).
BENCH_SERVICES ?= 1000,10000
BENCH_INDICES  ?= 10,100
BENCH_DOCUMENTS ?= 1000
BENCH_AGENTS   ?= 10
# The fleet rows' own numbers of services, spread over BENCH_AGENTS client
# agents without one agent holding them (BENCH_FLEET=10000 BENCH_AGENTS=20:
# an organisation's estate); empty: the registered BENCH_SERVICES.
BENCH_FLEET    ?=
# The revision the paired A/B runs against: the last release tag, else the
# merge base with the upstream branch; BENCH_BASE=REV picks another, and
# BENCH_BASE= (empty) runs no A/B. It is built into .cache/bench-base.
BENCH_BASE ?= $(shell git describe --tags --abbrev=0 2>/dev/null || git merge-base HEAD @{upstream} 2>/dev/null)
BENCH_PAIRS ?= 10
# More flags for the harness: -plain (services without weights and
# tagged_addresses, for a base older than them), -jobs REGEXP.
BENCH_FLAGS ?=
bench: servers build
	$(GO) test -run '^$$' -bench . -benchmem ./...
	@if [ -n "$(BENCH_BASE)" ]; then bash .ci/build-revision "$(BENCH_BASE)" .cache/bench-base; else echo "bench: no base revision (no release tag, no upstream): give BENCH_BASE=REV for the A/B"; fi
	$(GO) run ./provision/internal/bench -services $(BENCH_SERVICES) -indices $(BENCH_INDICES) -agents $(BENCH_AGENTS) -documents $(BENCH_DOCUMENTS) -json bench.json \
		$(if $(BENCH_FLEET),-fleet $(BENCH_FLEET)) $(if $(BENCH_BASE),-base .cache/bench-base/provision -pairs $(BENCH_PAIRS)) $(BENCH_FLAGS)

# Each fuzz target for FUZZTIME, then the mapping-pairs property test against
# a real Elasticsearch for as long; fuzz inputs that fail (also one slower than
# FUZZ_INPUT_TIMEOUT) are written under the package's testdata/fuzz and rerun by
# make test from then on. The test binary's own flags come after -args: before
# the package, go test would take their values for packages. The fuzzing
# runs on Go 1.27.3 (fetched from the Go module proxy by the go command on
# first use): Go 1.26's fuzz coordinator can fail a target with a bare
# "context deadline exceeded" at the end of -fuzztime, no input found
# (golang/go#75804, fixed in 1.27), as CI saw on 2026-11-25.
FUZZTIME ?= 5m
FUZZ_INPUT_TIMEOUT ?= 3s
FUZZ_GO ?= GOTOOLCHAIN=go1.27.3 $(GO)
FUZZ_TARGETS := ./schema:FuzzLoad ./provision/traefik/labels:FuzzParseRule ./schema:FuzzNesting ./provision/consul:FuzzReadTags \
	./provision/plans:FuzzReadPlanFile ./provision/search:FuzzMapping ./provision/adapter:FuzzDecodeObject
fuzz: servers
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$name ($$pkg) for $(FUZZTIME)"; \
		$(FUZZ_GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) $$pkg -args -fuzz-input-timeout=$(FUZZ_INPUT_TIMEOUT) || exit 1; \
	done
	@echo "mapping pairs against a real Elasticsearch 2.4.1 for $(FUZZTIME)"
	$(GO) test -run '^TestMappingPairs$$' -timeout 0 -v ./provision/search -args -pairs-time $(FUZZTIME) -pairs-seed 0

# make release VERSION=v1.2.0: the binaries for linux, darwin and windows on
# amd64 and arm64 in archives, a CycloneDX bill of materials of each, and
# SHA256SUMS, in dist/; byte-identical from one commit (see
# provision/internal/release).
release:
	@case "$(VERSION)" in v*.*.*) ;; *) echo "make release VERSION=vX.Y.Z (not $(VERSION))"; exit 1 ;; esac
	$(GO) run ./provision/internal/release -version $(VERSION) -out dist

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

clean:
	rm -rf bin dist
