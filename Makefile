# User-facing targets: `make demo`, `make test`, `make docs` and `make notebooks-lab`. Each
# bootstraps .venv on first use: `demo` installs the package alone (seconds), `test` adds the test
# and docs extras, `notebooks-lab` the notebooks extra.
VENV       := .venv
PY         := $(VENV)/bin/python
DEMO_STAMP := $(VENV)/.installed-demo
TEST_STAMP := $(VENV)/.installed-test
BENCH      := .venv-bench
WHEEL_VENV := .venv-wheel
README_VENV := .venv-readme
export PIP_DISABLE_PIP_VERSION_CHECK := 1
# Material for MkDocs prints a long notice about MkDocs 2 on every build unless this is set.
export NO_MKDOCS_2_WARNING := 1

# Shell code: make the venv $(1) with the first Python >= 3.11 on PATH, unless it has one already
# (a venv left by an older Python is made anew).
NEW_ENOUGH := import sys; sys.exit(sys.version_info < (3, 11))
define venv
$(1)/bin/python -c '$(NEW_ENOUGH)' 2>/dev/null || { \
	for python in python3.13 python3.12 python3.11 python3; do \
		if $$python -c '$(NEW_ENOUGH)' 2>/dev/null; then \
			echo "Making $(1) with $$($$python --version)"; $$python -m venv --clear $(1); exit; \
		fi; \
	done; \
	echo "graphagent needs Python 3.11 or newer, and none of python3.13, python3.12, python3.11 and python3 on PATH is one: install one and run make again." >&2; \
	exit 1; }
endef

.PHONY: demo test test-under-load docs check-wheel notebooks notebooks-lab bench langchain-suite clean

demo: $(DEMO_STAMP)
	$(PY) -m graphagent.demo

test: $(TEST_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-cache
	$(VENV)/bin/mkdocs build --strict --quiet --site-dir build/site
	$(PY) -m pytest

# The test suite with every core kept busy by a spinning process, as on a loaded CI machine: a
# test that races a thread or a clock fails here first. The spinners end with the suite.
test-under-load: $(TEST_STAMP)
	@spinners=""; for core in $$(seq $$(nproc)); do \
		$(PY) -c 'while True: pass' & spinners="$$spinners $$!"; \
	done; \
	trap 'kill $$spinners 2>/dev/null' EXIT; \
	echo "running the suite beside $$(nproc) spinning processes"; \
	$(PY) -m pytest

# The docs site with its API reference, served at http://127.0.0.1:8000 while you edit.
docs: $(TEST_STAMP)
	$(VENV)/bin/mkdocs serve

# Build the sdist and, from it, the wheel; install the wheel alone into a fresh venv and run the
# demo and the README's first example there, outside the source tree (so nothing imports it),
# and check that the wheel's .pth file installs graphagent as langchain when asked to. Then run
# the README's own install lines as they are written (the blocks marked
# `<!-- check-wheel: clone -->` and `wheel`), each in a fresh venv put first on PATH as if
# activated, and the first example with what they installed.
check-wheel: $(TEST_STAMP)
	rm -rf dist $(WHEEL_VENV)
	$(PY) -m build --outdir dist .
	$(PY) -m venv $(WHEEL_VENV)
	$(WHEEL_VENV)/bin/python -m pip install -q dist/*.whl
	$(PY) .ci/first_example.py README.md > $(WHEEL_VENV)/readme_example.py
	cd $(WHEEL_VENV) && bin/python -c 'import graphagent; print(graphagent.__version__, graphagent.__file__)'
	cd $(WHEEL_VENV) && bin/python -m graphagent.demo
	cd $(WHEEL_VENV) && bin/python readme_example.py
	cd $(WHEEL_VENV) && GRAPHAGENT_AS_LANGCHAIN=1 bin/python -c 'import sys; assert "graphagent" not in sys.modules; import langchain.agents as a, graphagent as g; assert a is g, a; print("GRAPHAGENT_AS_LANGCHAIN: the wheel installs graphagent as langchain, at the first langchain import")'
	for way in clone wheel; do \
		rm -rf dist $(README_VENV) && $(PY) -m venv $(README_VENV) && \
		$(PY) .ci/readme_block.py README.md $$way > $(README_VENV)/install.sh && \
		PATH="$(CURDIR)/$(README_VENV)/bin:$$PATH" bash -eux $(README_VENV)/install.sh && \
		(cd $(README_VENV) && bin/python ../$(WHEEL_VENV)/readme_example.py) || exit 1; \
	done

# LangChain 1.5.2's own agent tests on graphagent, failures sorted into LangChain-private names,
# the migration guide's deliberate differences and real ones (tests/compat/langchain_suite).
# Not part of `make test`: it downloads LangChain's sdist, for its tests only.
langchain-suite: $(TEST_STAMP)
	$(PY) -m tests.compat.langchain_suite build/langchain-suite

# Runs every notebook and writes its outputs back into it (commit them: they read well on the web).
notebooks: $(TEST_STAMP)
	$(PY) -m tests.notebook_runner

# Opens the notebooks in JupyterLab; installs the package and the `notebooks` extra on first use.
notebooks-lab: $(VENV)/.installed-notebooks
	$(VENV)/bin/jupyter lab notebooks/

# Separate venv, so the `langchain` that bench compares against never leaks into the test venv.
bench: $(BENCH)/.installed
	$(BENCH)/bin/python -m bench

# Re-install only when pyproject.toml or the start-up hook (.pth, module) changes (or no venv).
$(DEMO_STAMP): pyproject.toml graphagent_as_langchain.pth _graphagent_as_langchain.py
	@$(call venv,$(VENV))
	$(PY) -m pip install -q -e .
	touch $@

# The libraries tests/ecosystem runs on graphagent require `langchain`, which must never be in
# this venv: they come without their requirements (the test extra has the others they need).
$(TEST_STAMP): pyproject.toml tests/ecosystem/requirements.txt graphagent_as_langchain.pth _graphagent_as_langchain.py
	@$(call venv,$(VENV))
	$(PY) -m pip install -q -e ".[test,docs]"
	$(PY) -m pip install -q --no-deps -r tests/ecosystem/requirements.txt
	touch $@ $(DEMO_STAMP)

$(VENV)/.installed-notebooks: pyproject.toml
	@$(call venv,$(VENV))
	$(PY) -m pip install -q -e ".[notebooks]"
	touch $@

$(BENCH)/.installed: pyproject.toml
	@$(call venv,$(BENCH))
	$(BENCH)/bin/python -m pip install -q -e ".[bench]"
	touch $@

clean:
	rm -rf $(VENV) $(BENCH) $(WHEEL_VENV) $(README_VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
