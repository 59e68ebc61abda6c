# Two commands do all the set-up on a fresh machine:
#   make tour   - create .venv, install funcad, run the tour (python -m funcad)
#   make test   - create .venv, install funcad with test extras, run the tests
#   make docs   - create .venv-docs, build the documentation site into docs/_build/html
# jax's newest releases need Python >= 3.12: use it where the machine has one.
PYTHON ?= $(shell for p in python3.12 $(HOME)/.pyenv/versions/3.12*/bin/python3.12 python3; do \
                    $$p -c '' 2>/dev/null && { echo $$p; break; }; done)
VENV ?= .venv
PY := $(VENV)/bin/python
# The oldest jax/jaxlib funcad supports (pyproject.toml's lower bound); CI runs
# the jit and XLA tests against it too (`make test-oldest`), every op-table row of them.
OLDEST_JAX := 0.6.0
OLD := .venv-oldest
XLA_TESTS := tests/transforms/test_jit.py tests/lowering/test_jaxlib_range.py \
             tests/transforms/test_dispatch.py tests/lax/test_control_flow.py tests/transforms/test_custom.py \
             tests/primitives/test_complex.py tests/numpy/test_fft.py tests/lowering/test_lapack_ffi.py \
             tests/linalg/test_cholesky_lu.py tests/linalg/test_eigh_svd_qr.py tests/sharding/test_sharding.py \
             tests/lax/test_conv.py tests/scipy/test_special_primitives.py tests/random/test_samplers.py \
             tests/sharding/test_shard_map.py tests/linalg/test_linalg_complex.py tests/config/test_x32.py \
             tests/lax/test_lax_ops.py tests/linalg/test_linalg_schur.py tests/debug/test_callbacks.py \
             tests/debug/test_callbacks_effects.py tests/random/test_rng_bits.py \
             tests/lax/test_dot_algorithm.py tests/lax/test_accuracy.py tests/random/test_rng_impls.py \
             tests/config/test_device_and_transfer_options.py tests/sharding/test_sharding_inspect.py \
             tests/toplevel/test_profiler.py tests/sharding/test_multihost_utils.py \
             tests/config/test_softmax_custom_jvp.py tests/export/test_export.py tests/lax/test_tokens.py \
             tests/lax/test_pcast.py tests/lax/test_lax_namespace.py tests/debug/test_breakpoint_and_log.py \
             tests/experimental/test_compilation_cache.py tests/sharding/test_shardy.py

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	@# Graphviz's `dot` draws jaxprs (funcad.viz); install it where we may.
	command -v dot >/dev/null || { [ "$$(id -u)" = 0 ] && (apt-get update -qq && apt-get install -y -qq graphviz >/dev/null); } || echo "note: Graphviz not installed; drawing tests will skip"
	touch $@

$(OLD)/.installed: pyproject.toml Makefile
	$(PYTHON) -m venv $(OLD)
	$(OLD)/bin/python -m pip install -q --upgrade pip
	$(OLD)/bin/python -m pip install -q 'jax==$(OLDEST_JAX)' 'jaxlib==$(OLDEST_JAX)' numpy scipy \
	    'flatbuffers>=2.0' 'pytest>=8' 'pytest-xdist>=3' 'hypothesis>=6'
	$(OLD)/bin/python -m pip install -q --no-deps -e .
	touch $@

# The ecosystem corpus (tests/ecosystem): JAX libraries pinned in its requirements.txt,
# their README-style programs under JAX and the drop-in, then their own test suites.
ECO := .venv-eco
$(ECO)/.installed: pyproject.toml tests/ecosystem/requirements.txt
	$(PYTHON) -m venv $(ECO)
	$(ECO)/bin/python -m pip install -q --upgrade pip
	$(ECO)/bin/python -m pip install -q -e '.[test]' -r tests/ecosystem/requirements.txt absl-py cloudpickle
	touch $@

# The documentation site: Sphinx with its own pinned tools (docs/requirements.txt);
# warnings (a broken reference, a docstring that is not valid reST) fail the build.
DOCS := .venv-docs
$(DOCS)/.installed: pyproject.toml docs/requirements.txt
	$(PYTHON) -m venv $(DOCS)
	$(DOCS)/bin/python -m pip install -q --upgrade pip
	$(DOCS)/bin/python -m pip install -q -e . -r docs/requirements.txt
	touch $@

.PHONY: tour test test-tables test-oldest bench bench-all ecosystem docs
tour: $(VENV)/.installed
	$(PY) -m funcad

test: $(VENV)/.installed
	$(PY) -m pytest -q -n 2 -p no:cacheprovider

# The op table's whole-table checks that the default run samples (tests/conftest.py's
# SAMPLED_CHECKS), every row of them: CI runs them after `make test`.
TABLE_CHECKS := test_op_table_under_jit_matches_eager or test_vmap_of_grad_and_grad_of_vmap or \
                test_complex_row_matches_jax or test_op_table_grad_jaxpr_optimised_is_bitwise_equal or \
                test_vmap_matches_jax
test-tables: $(VENV)/.installed
	$(PY) -m pytest -q -n 2 -p no:cacheprovider -m slow -k '$(TABLE_CHECKS)'

test-oldest: $(OLD)/.installed
	FUNCAD_FULL_TABLES=1 $(OLD)/bin/python -m pytest -q -n 2 -p no:cacheprovider $(XLA_TESTS)

# the speed guard: its table (with the machine and versions) goes into docs/benchmarks.md
bench: $(VENV)/.installed
	$(PY) bench/bench_speed.py

# every benchmark script, each printing its own tables
bench-all: $(VENV)/.installed
	for b in bench/bench_*.py; do $(PY) $$b || exit 1; done

ecosystem: $(ECO)/.installed
	$(ECO)/bin/python -m pytest -q -n 2 -p no:cacheprovider -m ecosystem tests/ecosystem
	$(ECO)/bin/python tests/ecosystem/suites.py --jobs 2

docs: $(DOCS)/.installed
	@# -E: autodoc reads the code, which Sphinx does not see change; reread every page
	$(DOCS)/bin/sphinx-build -b html -E -j 2 -W --keep-going -q docs docs/_build/html
