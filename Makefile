# The README's commands. Every target sets up what it needs itself.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
DEMO_DB ?= data/rsr.duckdb
PORT    ?= 8501

.PHONY: app test check fmt bench venv docker base-image chromium demo-db clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip >/dev/null
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

## Docker engine (installs docker.io and starts dockerd when none answers; Debian, root)
docker:
	scripts/ensure_docker.sh

## Offline sandbox base image rsr-base:bookworm (debootstrap + docker import; tarball cached)
base-image: venv docker
	scripts/ensure_apt.sh debootstrap debootstrap
	$(BIN)/rsr sandbox build-base

## Debian chromium for the real-browser tests
chromium:
	scripts/ensure_apt.sh chromium chromium

## The demo database, built from data/demo when missing
demo-db: venv
	$(BIN)/rsr demo build --db $(DEMO_DB)

## Set up and start the app on the demo data
app: venv demo-db
	RSR_DB=$(DEMO_DB) $(BIN)/streamlit run app.py --server.port $(PORT) --server.headless true

## Set up everything the tests need (venv, Docker engine, base image, chromium) and run them
test: venv docker base-image chromium
	$(BIN)/ruff check .
	$(BIN)/pytest -q

check: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

fmt: venv
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

## Benchmarks (figures and commands in benchmarks/RESULTS.md)
bench: venv docker base-image
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/sandbox_bench.py
	$(BIN)/python benchmarks/executor_bench.py --executions 12
	$(BIN)/python benchmarks/export_memory.py --sizes 10000,100000

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache test-artifacts
