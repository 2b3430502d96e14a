# riverbpmn's developer commands. Every target that needs PostgreSQL gets it
# from scripts/testdb.sh: $TEST_DATABASE_URL if it answers, else the local
# server (started if stopped), else a throwaway cluster (installing PostgreSQL
# when absent).

SHELL := /bin/bash
GO ?= go

# Test packages run two at a time: each starts River clients against the one
# database, and the machine has two cores. Within a package four parallel
# tests run at once: most of a test's time is spent waiting (polls, retry
# intervals, timers, the database), not computing. `make test` is meant to
# take at most 5 minutes on two cores and no package 2; its per-package
# timeout is the tripwire for a package that grew past that (twice over, for a
# loaded machine).
TEST_TIMEOUT ?= 4m
TEST_FLAGS ?= -count=1 -p 2 -parallel 4 -timeout $(TEST_TIMEOUT)
# `make test-long` adds the long proofs (internal/longtest): stress runs,
# SIGKILL'd processes, restarts, 100k-row tables, EXPLAIN matrices, benchmarks.
LONG_TEST_TIMEOUT ?= 30m
LONG_TEST_FLAGS ?= -count=1 -p 2 -timeout $(LONG_TEST_TIMEOUT)

# The console's browser test drives this Chromium (scripts/chromium.sh
# installs it); without it that test is skipped, and `make test` says so.
CHROMIUM ?= $(or $(RIVERBPMN_CHROMIUM),/usr/bin/chromium)
define no_chromium
	@[[ -x "$(CHROMIUM)" ]] || echo "*** no Chromium at $(CHROMIUM): the console's browser test (TestBrowserRetryIncident) is SKIPPED; scripts/chromium.sh installs it ***"
endef

.PHONY: all test test-long test-browser test-under-load example check fmt-check vet fuzz help

all: check

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/'

test: ## run the test suite against a real PostgreSQL (minutes; the long proofs are in test-long)
	$(no_chromium)
	@url="$$(scripts/testdb.sh)" && TEST_DATABASE_URL="$$url" $(GO) test $(TEST_FLAGS) ./...; rc=$$?; \
	[[ -x "$(CHROMIUM)" ]] || echo "*** the console's browser test was SKIPPED: no Chromium at $(CHROMIUM) ***"; exit $$rc

test-long: ## the whole suite with the long proofs (RIVERBPMN_TEST_LONG=1: stress, SIGKILL, restarts, 100k rows, EXPLAIN matrices, benchmarks)
	$(no_chromium)
	@url="$$(scripts/testdb.sh)" && TEST_DATABASE_URL="$$url" RIVERBPMN_TEST_LONG=1 $(GO) test $(LONG_TEST_FLAGS) ./...

test-browser: ## run every console browser test (the long ones too) and fail if one did not run (no Chromium)
	@url="$$(scripts/testdb.sh)" && out="$$(TEST_DATABASE_URL="$$url" RIVERBPMN_TEST_LONG=1 $(GO) test -count=1 -v -run '^TestBrowser' ./console/ 2>&1)"; rc=$$?; \
	echo "$$out" | grep -E '^(=== RUN|--- |\s+e2e_test|ok|FAIL|PASS)'; \
	if [[ $$rc -ne 0 ]]; then echo "$$out" | tail -40; exit $$rc; fi; \
	if echo "$$out" | grep -q -- '--- SKIP'; then echo "the browser test was skipped: it must run here"; exit 1; fi; \
	echo "$$out" | grep -q -- '--- PASS: TestBrowser' || { echo "no browser test ran"; exit 1; }

test-under-load: ## make test with the machine loaded to load average >= 8 (RUNS, LOAD_PROCS, TARGET_LOAD)
	@scripts/test-under-load.sh

example: ## a narrated tour (examples/quickstart) against the test database
	@url="$$(scripts/testdb.sh)" && DATABASE_URL="$$url" $(GO) run ./examples/quickstart

check: fmt-check vet test ## gofmt, go vet, make test (CI runs .ci/run: these, test-long, the browser test, the example)

fmt-check: ## fail if gofmt would change a file
	@files="$$(gofmt -l $$(git ls-files '*.go'))"; if [[ -n "$$files" ]]; then echo "gofmt would change:"; echo "$$files"; exit 1; fi

vet: ## go vet every package
	$(GO) vet ./...

FUZZTIME ?= 5m
fuzz: ## fuzz the retry cycle parser (FUZZTIME, default 5m)
	$(GO) test -run='^$$' -fuzz=FuzzParseCycle -fuzztime=$(FUZZTIME) ./retrypolicy/

# Docs that cannot rot: every Go snippet in README.md and docs/ mirrors code
# that compiles, every relative link and anchor resolves, nothing refers to
# outside the repository, and every command shown is a real CLI verb and
# flag, a CI make target, or listed with what verifies it
# (internal/docscheck).
.PHONY: docs-check
docs-check: ## check README.md and docs/ against the code
	$(GO) test -count=1 ./internal/docscheck/
