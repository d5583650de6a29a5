# User-facing targets: `make demo` and `make test`. Both bootstrap .venv on first use.
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
BENCH  := .venv-bench
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: demo test bench clean

demo: $(STAMP)
	$(PY) -m graphagent.demo

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(PY) -m pytest

# Separate venv, so the `langchain` that bench compares against never leaks into the test venv.
bench: $(BENCH)/.installed
	$(BENCH)/bin/python -m bench

# Re-install only when pyproject.toml changes (or the venv is gone).
$(STAMP): pyproject.toml
	[ -x $(PY) ] || python3 -m venv $(VENV)
	$(PY) -m pip install -q -e ".[test]"
	touch $@

$(BENCH)/.installed: pyproject.toml
	[ -x $(BENCH)/bin/python ] || python3 -m venv $(BENCH)
	$(BENCH)/bin/python -m pip install -q -e ".[bench]"
	touch $@

clean:
	rm -rf $(VENV) $(BENCH) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
