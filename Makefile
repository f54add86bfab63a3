# The two entry points of the README. Each does all set-up itself on a fresh machine:
# a virtualenv, the package, and (through the CLI) a real Neo4j from Maven Central jars.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# The tests' own local server (never the one `make demo` fills); see docs/local-neo4j.md.
TEST_STATE_DIR := $(CURDIR)/.investigator/test-neo4j
# Test processes, each with its own local server (the second in test-neo4j-gw1); one when
# NEO4J_URI names a database (tests wipe the database they use). `make test TEST_WORKERS=0`
# runs in one process.
TEST_WORKERS ?= $(if $(NEO4J_URI),0,2)

.PHONY: install demo test lint eval test-eval templates clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

install: $(BIN)/.installed

demo: install
	$(BIN)/investigator demo

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

# Lint, types, the test suite, then the golden-set evaluation with its gates.
test: lint
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadfile
	$(MAKE) --no-print-directory test-eval

# The evaluation on the tests' server (or on NEO4J_URI when set), stopped afterwards.
test-eval: install
	@status=0; \
	INVESTIGATOR_STATE_DIR=$(TEST_STATE_DIR) $(BIN)/investigator eval || status=$$?; \
	INVESTIGATOR_STATE_DIR=$(TEST_STATE_DIR) $(BIN)/investigator db stop >/dev/null; \
	exit $$status

# The evaluation on the server you use (starts the local one if nothing is configured).
eval: install
	$(BIN)/investigator eval

# After editing cypher_templates/manifest.yaml or cypher_templates/templates/*: render every
# template variant into cypher_templates/compiled.json and commit it with your edit. A new
# process reads its texts from that file instead of parsing YAML and running Jinja2; while
# it is stale the sources are rendered instead, and tests/test_compiled_templates.py fails.
templates: install
	$(BIN)/python -m cypher_templates.build

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
