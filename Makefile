# Two entry points a newcomer needs: `make run` and `make test`.
# Both create .venv on first use and reinstall only when pyproject.toml changes.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint typecheck unit bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,dev]'
	touch $(STAMP)

## run: the main job: start the daemon (offline demo model), one chat turn, stop it.
## Runs in its own runtime and data dirs under .venv, so a daemon of yours is left alone.
DEMO_ENV := env -u ANTHROPIC_API_KEY HERMES_RUNTIME_DIR=$(CURDIR)/$(VENV)/demo/run \
	HERMES_DATA_DIR=$(CURDIR)/$(VENV)/demo/data HERMES_CONFIG=$(CURDIR)/$(VENV)/demo/none.toml
run: $(STAMP)
	@$(DEMO_ENV) $(BIN)/hermes chat "list the files here"; rc=$$?; \
	$(DEMO_ENV) $(BIN)/hermes daemon stop; exit $$rc

## test: lint, type-check and run the whole test suite
test: lint typecheck unit

lint: $(STAMP)
	$(BIN)/ruff check actors supervisors hermes bench tests

typecheck: $(STAMP)
	$(BIN)/mypy

## unit: the tests in TEST_JOBS pytest-xdist workers (TEST_JOBS=0: serially, in one process).
## Each test file goes to one worker (module fixtures start once); PYTHONDEVMODE puts the
## workers in development mode like -X dev would the main process.
TEST_JOBS ?= 2
unit: $(STAMP)
	PYTHONDEVMODE=1 $(BIN)/python -m pytest -q -n $(TEST_JOBS) --dist loadfile \
		--junitxml=$(VENV)/junit.xml

bench: $(STAMP)
	$(BIN)/python -m bench $(ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
