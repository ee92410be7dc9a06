# tunnelapi: see README.md. Every target installs what it needs into .local/ (git-ignored).
SHELL := /bin/bash
.DEFAULT_GOAL := help

GO        ?= go
STACK     := infra/stack/stack.sh
# FUNCTIONS, every Lambda as <logical id in template.yaml>:<folder under functions/>: generated
# from shared/app's lists by go generate ./... (see shared/app/gen).
include $(dir $(lastword $(MAKEFILE_LIST)))functions.mk
# The functions' build: SAM's provided.al2023 on arm64, which Lambda runs on Graviton2 or later
# (Armv8.2-A): with GOARM64=v8.2 the compiler emits its atomic instructions instead of testing
# for them at run time (about 14 KB less per zip).
LAMBDA_ENV := GOOS=linux GOARCH=arm64 GOARM64=v8.2 CGO_ENABLED=0
LAMBDA_FLAGS := -tags lambda.norpc -trimpath -ldflags "-s -w"

.PHONY: help run bootstrap sam-local test bench fuzz chaos build clean

help:
	@echo "make run        start the local stack and the all-in-one API on 127.0.0.1:$${PORT:-8080}"
	@echo "make bootstrap  create another account on the running local stack and print its admin token"
	@echo "make sam-local  env-vars file and filled sample events for sam local against the running local stack"
	@echo "make test       go vet + unit and integration tests against a freshly started local stack"
	@echo "make bench      benchmarks against the local stack, printed as ratios"
	@echo "make fuzz       every fuzz target for FUZZTIME (default 20s) against the local stack"
	@echo "make chaos      the fault tests at acceptance size (CHAOS_HISTORIES per fault class, default 50)"
	@echo "make build      one deployable zip per function in dist/"

run:
	@infra/run.sh

bootstrap:
	@eval "$$($(STACK) env)" && $(GO) run ./infra/local bootstrap

# sam-local: what `sam local invoke`/`start-api` need for the stack `make run` serves (see README).
sam-local:
	@eval "$$($(STACK) env)" && $(GO) run ./infra/local sam-local

test:
	@infra/test.sh

bench:
	@infra/bench.sh

fuzz:
	@infra/fuzz.sh

chaos:
	@infra/chaos.sh

# build: one zip per function, built as SAM's provided.al2023 arm64 runtime wants it.
build:
	@mkdir -p dist
	@set -e; for f in $(FUNCTIONS); do dir=$${f#*:}; \
	  $(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o dist/$$dir/bootstrap ./functions/$$dir; \
	  $(GO) run ./infra/stack/zipfn dist/$$dir.zip dist/$$dir/bootstrap; \
	  printf '%-24s %8d bytes\n' dist/$$dir.zip $$(stat -c %s dist/$$dir.zip); done

# sam build (BuildMethod: makefile) calls build-<LogicalId> with ARTIFACTS_DIR set.
define sam_target
build-$(1):
	$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $$(ARTIFACTS_DIR)/bootstrap ./functions/$(2)
endef
$(foreach f,$(FUNCTIONS),$(eval $(call sam_target,$(word 1,$(subst :, ,$(f))),$(word 2,$(subst :, ,$(f))))))

clean:
	rm -rf dist .aws-sam
