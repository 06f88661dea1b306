# The README's commands. Every target sets up what it needs itself.
SHELL   := /bin/bash
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
LOCK    := constraints.txt
EXTRAS  := dev,ray
DEMO_DB ?= data/rsr.duckdb
PORT    ?= 8501
ADDRESS ?= localhost
# One test worker more than the machine has cores (at most 8): the suite's tests spend part of their time
# waiting on containers, the browser and the scripted model's latency, and a third worker on two cores runs
# while the others wait (benchmarks/RESULTS.md, "Test suite time").
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); echo $$(( n + 1 < 8 ? n + 1 : 8 )))

.PHONY: app test check fmt bench lock venv pythons side-venvs docker base-image chromium compiler demo-db clean

# $(call timed,STEP,COMMAND): run COMMAND, then say how long STEP took (make test prints every step's time).
timed = @echo '$(subst ','\'',$(2))'; t0=$$(date +%s%N); { $(2); } || exit $$?; \
	ds=$$(( ($$(date +%s%N) - t0) / 100000000 )); echo "make: $(1): $$((ds / 10)).$$((ds % 10)) s"

# The default venv: the checkout (editable) with its dev extras, every package at its version in the lock. Its
# packages' bytecode is compiled once here: where the environment forbids Python to write it
# (PYTHONDONTWRITEBYTECODE), every process would compile pandas, pyarrow and streamlit again (`import pandas`
# 2 s instead of 0.5 s), and the tests start hundreds of processes.
$(STAMP): pyproject.toml setup.py $(wildcard rsr_core/*/_*.c rsr_core/*/_*.h) $(LOCK)
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip >/dev/null
	$(BIN)/pip install -q -c $(LOCK) uv
	$(call timed,venv,$(BIN)/uv pip install -q --compile-bytecode --python $(BIN)/python -e '.[$(EXTRAS)]' -c $(LOCK))
	touch $(STAMP)

venv: $(STAMP)

## The other Pythons make test runs the suite on (pyenv's 3.12 and 3.13): a missing one fails here, up front
pythons:
	scripts/test_pythons.sh --check

## The side venvs whose tools check our formats (harbor, trainers' libraries): tests/side_venv.py, cached
side-venvs: venv pythons
	$(call timed,side venvs,$(BIN)/python -m tests.side_venv)

## Docker engine (installs docker.io and starts dockerd when none answers; Debian, root)
docker:
	$(call timed,docker,scripts/ensure_docker.sh)

## Offline sandbox base image rsr-base:bookworm (debootstrap + docker import; tarball cached)
base-image: venv docker
	$(call timed,debootstrap,scripts/ensure_apt.sh debootstrap debootstrap)
	$(call timed,base image,$(BIN)/rsr sandbox build-base)

## A C compiler: the C builds of the ingest's per-step work (setup.py; made by `venv`, so it comes first), and
## the hostile-agent probe that builds an NSS module
compiler:
	$(call timed,gcc,scripts/ensure_apt.sh gcc gcc libc6-dev)

## Debian chromium (to look at the studio) and its headless shell (the real-browser tests drive it)
chromium:
	$(call timed,chromium,scripts/ensure_apt.sh chromium chromium && scripts/ensure_apt.sh chromium-headless-shell chromium-headless-shell)

## The demo database, built from data/demo when missing
demo-db: venv
	$(BIN)/rsr demo build --db $(DEMO_DB)

## Set up and start the app on the demo data
app: venv demo-db
	$(BIN)/rsr app --db $(DEMO_DB) --port $(PORT) --address $(ADDRESS)

## Set up everything the tests need (venvs, Docker engine, base image, chromium) and run them: the whole suite
## on the default Python (TEST_WORKERS workers, each test module on one of them, so that its fixtures start once, the longest modules first: tests/conftest.py), then the suite without Docker and browser on 3.12 (lowest declared versions) and 3.13
## (the lock), each with the wheel installed in a fresh venv (scripts/test_pythons.sh)
test: compiler venv pythons side-venvs docker base-image chromium
	$(call timed,check,$(MAKE) --no-print-directory check)
	$(call timed,pytest,$(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder)
	$(call timed,other Pythons,scripts/test_pythons.sh)

## Refresh constraints.txt from a fresh resolution of pyproject.toml (with dev and ray) for Python 3.11, every package
## pinned; its date is the cutoff for the indirect dependencies of the lowest-version run
lock:
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	test -x $(BIN)/uv || $(BIN)/pip install -q uv
	cutoff=$$(date -u +%Y-%m-%dT%H:%M:%SZ) && rm -f $(LOCK).new && \
	$(BIN)/uv pip compile -q pyproject.toml --extra dev --extra ray --python-version 3.11 --exclude-newer $$cutoff \
	  --custom-compile-command 'make lock' -o $(LOCK).new && \
	{ echo "# exclude-newer: $$cutoff (the resolution's date: scripts/test_pythons.sh resolves as of it)"; \
	  cat $(LOCK).new; } >$(LOCK) && rm $(LOCK).new
	$(MAKE) venv

## Static checks: ruff (lint and format), mypy over rsr_core, the import layering (import-linter contracts in
## pyproject.toml)
check: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

fmt: venv
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

## Benchmarks (figures and commands in benchmarks/RESULTS.md)
bench: venv docker base-image
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/sandbox_bench.py
	$(BIN)/python benchmarks/executor_bench.py --executions 12
	$(BIN)/python benchmarks/export_memory.py --sizes 10000,100000
	$(BIN)/python benchmarks/cli_startup.py

clean:
	rm -rf $(VENV) .cache/pythons .pytest_cache .ruff_cache test-artifacts
