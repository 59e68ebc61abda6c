# Two commands do all the set-up on a fresh machine:
#   make tour   - create .venv, install funcad, run the tour (python -m funcad)
#   make test   - create .venv, install funcad with test extras, run the tests
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	@# Graphviz's `dot` draws jaxprs (funcad.viz); install it where we may.
	command -v dot >/dev/null || { [ "$$(id -u)" = 0 ] && (apt-get update -qq && apt-get install -y -qq graphviz >/dev/null); } || echo "note: Graphviz not installed; drawing tests will skip"
	touch $@

.PHONY: tour test bench
tour: $(VENV)/.installed
	$(PY) -m funcad

test: $(VENV)/.installed
	$(PY) -m pytest -q -n 2 -p no:cacheprovider

bench: $(VENV)/.installed
	for b in bench/bench_*.py; do $(PY) $$b || exit 1; done
