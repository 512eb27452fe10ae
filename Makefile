# Quick start: `make demo` runs dcx on a fresh copy of the bundled example;
# `make test` runs every test. Both create .venv and install what they need.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.dcx-installed

.PHONY: demo test deep-test install bench bench-scan reliability lint lint-imports clean compare wheel-check

$(STAMP): pyproject.toml packages/dcx-obelisk/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test,mcp,compare,dev,fast]'
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e ./packages/dcx-obelisk
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	@PATH="$(CURDIR)/$(BIN):$$PATH" bash scripts/demo.sh

# every test, one worker per CPU and one more (pytest-xdist): a worker waiting on a subprocess,
# a deadline or a socket leaves its CPU to the extra one (docs/performance.md, the test suite);
# tests/README.md says what a test must respect; DCX_TEST_WORKERS=1 runs them in one process
DCX_TEST_WORKERS ?= $(shell expr $$(nproc) + 1)
test: $(STAMP) lint-imports
	@# bytecode once, as an installed dcx has it: with PYTHONDONTWRITEBYTECODE set (as on
	@# some machines) every dcx a test starts would compile its modules again
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m compileall -q dcx tests packages/dcx-obelisk > /dev/null
	$(BIN)/python -m pytest -q -n $(DCX_TEST_WORKERS) --dist loadfile

# the import contracts of .importlinter: floors, planes side by side, pure packets
lint-imports: $(STAMP)
	$(BIN)/lint-imports

# the model-based cycle test and differential recall at 5-50x their CI size (tens of minutes)
deep-test: $(STAMP)
	DCX_HYPOTHESIS_PROFILE=deep $(BIN)/python -m pytest -q -n $(DCX_TEST_WORKERS) --dist loadfile tests/model tests/providers/test_recall_differential.py

bench: $(STAMP)
	$(BIN)/python bench/startup.py

# minutes, and about 700 MB of temp files: 10k and 100k file trees against git status and b3sum
bench-scan: $(STAMP)
	$(BIN)/python bench/scan.py

# the figures the reliability tests measured in the last test run (see docs/reliability.md)
reliability: $(STAMP)
	$(BIN)/python bench/reliability.py

# the provider comparison of fixtures/compare/ (bm25, OpenViking, an extension); see docs/compare.md
compare: $(STAMP)
	$(BIN)/python fixtures/compare/run.py

# dcx as a user installs it: wheel + sdist built and checked, the wheel installed into a
# fresh venv outside the checkout and a first hour run there (.ci/run: with pipx and uv too)
wheel-check:
	PYTHON=$(PYTHON) bash scripts/wheel_smoke.sh

lint: $(STAMP)
	$(BIN)/python -m pip install --quiet ruff mypy && $(BIN)/ruff check dcx tests && $(BIN)/ruff format --check . && $(BIN)/mypy

clean:
	rm -rf $(VENV) .demo .pytest_cache .reliability
