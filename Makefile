# Quick start: `make demo` runs dcx on a fresh copy of the bundled example;
# `make test` runs every test. Both create .venv and install what they need.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.dcx-installed

.PHONY: demo test install bench bench-scan reliability lint clean

$(STAMP): pyproject.toml packages/dcx-obelisk/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test,browser]' --config-settings editable_mode=compat
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e ./packages/dcx-obelisk --config-settings editable_mode=compat
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	@PATH="$(CURDIR)/$(BIN):$$PATH" bash scripts/demo.sh

test: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python bench/startup.py

# minutes, and about 700 MB of temp files: 10k and 100k file trees against git status and b3sum
bench-scan: $(STAMP)
	$(BIN)/python bench/scan.py

# the figures the reliability tests measured in the last test run (see docs/reliability.md)
reliability: $(STAMP)
	$(BIN)/python bench/reliability.py

lint: $(STAMP)
	$(BIN)/python -m pip install --quiet ruff && $(BIN)/ruff check dcx tests

clean:
	rm -rf $(VENV) .demo .pytest_cache .reliability
