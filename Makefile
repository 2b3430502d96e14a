# riverbpmn's developer commands. Every target that needs PostgreSQL gets it
# from scripts/testdb.sh: $TEST_DATABASE_URL if it answers, else the local
# server (started if stopped), else a throwaway cluster (installing PostgreSQL
# when absent).

SHELL := /bin/bash
GO ?= go

# Test packages run two at a time: each starts River clients against the one
# database, and the machine has two cores.
TEST_FLAGS ?= -count=1 -p 2 -timeout 10m

.PHONY: all test example check fmt-check vet fuzz help

all: check

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/'

test: ## run the whole test suite against a real PostgreSQL
	@url="$$(scripts/testdb.sh)" && TEST_DATABASE_URL="$$url" $(GO) test $(TEST_FLAGS) ./...

example: ## a narrated tour (examples/quickstart) against the test database
	@url="$$(scripts/testdb.sh)" && DATABASE_URL="$$url" $(GO) run ./examples/quickstart

check: fmt-check vet test ## what CI runs: gofmt, go vet, all tests

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
