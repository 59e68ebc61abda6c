"""Differential fuzzing against JAX (see tests/fuzz.py).

The default run uses a fast, derandomized profile (the same programs every
time, well under a minute). By hand:

    FUNCAD_FUZZ=long .venv/bin/python -m pytest tests/transforms/test_fuzz.py      # 1500 random programs
    .venv/bin/python -m pytest -m slow tests/transforms/test_fuzz.py                # the same, as the slow test

Every program the fuzzer found that funcad got wrong is kept below as a
regression case, with the fix it led to.
"""
from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import funcad
import funcad.numpy as fnp
from tests.fuzz import (EDGE_DTYPES, EDGE_OPS, EDGE_TRANSFORMS, Program, Step, all_ops, compare,
                        compare_edge, edge_program, known, programs, run, table_ops)

LONG = os.environ.get("FUNCAD_FUZZ", "fast") == "long"
_CHECKS = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]
FAST = settings(max_examples=8, deadline=None, derandomize=True, database=None,
                suppress_health_check=_CHECKS)
SLOW = settings(max_examples=int(os.environ.get("FUNCAD_FUZZ_EXAMPLES", "1500")), deadline=None,
                database=None, suppress_health_check=_CHECKS)


@(SLOW if LONG else FAST)
@given(programs())
def test_random_programs_agree_with_jax(prog):
    compare(prog)


@pytest.mark.slow
@SLOW
@given(programs(max_steps=8, max_transforms=4))
def test_random_programs_agree_with_jax_long(prog):
    compare(prog)


def test_the_fuzzer_draws_from_most_of_the_op_table():
    names = {op.name for op in table_ops()}
    assert len(names) >= 60, sorted(names)
    assert {"sin", "log", "logaddexp", "hypot", "power", "arctan2", "lax_lgamma"} <= names
    assert {"sum", "logsumexp", "gram", "sort", "take0", "cumsum"} <= set(all_ops())
    # Every domain is inside the row's own sampled inputs: log and sqrt get positive ones.
    dom = {op.name: op.domains for op in table_ops()}
    assert dom["log"][0][0] > 0 and dom["sqrt"][0][0] > 0 and -1 < dom["arcsin"][0][0] < dom["arcsin"][0][1] < 1


def test_a_program_runs_the_same_under_both_backends():
    prog = Program(((2, 3), (3,)), (Step("multiply", (0, 1), ()), Step("logsumexp", (2,), (("axis", -1), ("keepdims", False)))),
                   (("vmap", (0, None), 2), "grad", "jit"), seed=7)
    got, want = run(prog, "funcad"), run(prog, "jax")
    assert [g.shape for g in got] == [(2, 2, 3), (3,)]  # the vmapped and the shared input
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)


# ------------------------------------------------ regressions found by fuzzing ----

REGRESSIONS = [
    # funcad.numpy.asarray called np.array(..., copy=False), which NumPy 2 rejects whenever a
    # copy is needed: asarray/zeros_like of a list, a Python or NumPy scalar, or with a dtype
    # all raised ValueError. The fuzzer hit it through an eager scan whose carry was
    # zeros_like(x[0]) of a 1-d x.
    Program(((3,),), (Step("scan", (0,), ()),), (), seed=1),
    Program(((3,),), (Step("scan", (0,), ()),), (), seed=1, dtype="float32"),
    Program(((2, 3),), (Step("scan", (0,), ()), Step("sum", (1,), (("axis", None), ("keepdims", False)))),
            ("grad",), seed=2),
]


@pytest.mark.parametrize("prog", REGRESSIONS)
def test_fuzzer_regressions(prog):
    compare(prog)


@pytest.mark.parametrize("value", [[1.0, 2.0], 1.5, np.float64(2.0), np.float32(2.0), np.ones(2, np.int32)])
def test_asarray_and_zeros_like_of_anything_array_like(value):
    """The asarray bug the fuzzer found, directly."""
    want = np.asarray(value)
    assert np.array_equal(fnp.asarray(value), want) and fnp.asarray(value).dtype == want.dtype
    assert fnp.asarray(value, np.float64).dtype == np.float64
    assert np.array_equal(fnp.zeros_like(value), np.zeros_like(want))
    a = fnp.asarray(np.ones(3))
    assert fnp.asarray(a) is a  # no copy when none is needed


# ------------------------------------------------------- edge programs ----
# Every dtype, edge values, 0-d and size-0 shapes, both precision modes, eight transform
# stacks, and structural, control-flow, linalg, fft, scipy.special, nn and random ops.

def _edge_mismatches(seeds):
    bad, skipped = [], {}
    for seed in seeds:
        p = edge_program(seed)
        name = known(p)
        if name:
            skipped[name] = skipped.get(name, 0) + 1
            continue
        r = compare_edge(p)
        if r:
            bad.append(r)
    return bad, skipped


def test_edge_programs_agree_with_jax():
    bad, _ = _edge_mismatches(range(40))
    assert not bad, "\n".join(bad)


@pytest.mark.slow
def test_edge_programs_agree_with_jax_long():
    n = int(os.environ.get("FUNCAD_FUZZ_EDGE", "3000"))
    from tests.fuzz import EXPLAINED
    EXPLAINED.clear()
    bad, skipped = _edge_mismatches(range(1000, 1000 + n))
    print(f"{n} edge programs, {sum(skipped.values())} skipped under a known difference "
          f"(docs/numerics.md), {len(bad)} mismatches")
    for name, k in sorted({**skipped, **EXPLAINED}.items()):
        print(f"  {k:5d}  {name}")
    assert not bad, "\n".join(bad)


def test_edge_programs_cover_the_dimensions():
    progs = [edge_program(s) for s in range(2000)]
    assert {p.dtype for p in progs} == set(EDGE_DTYPES)
    assert {p.transform for p in progs} == set(EDGE_TRANSFORMS)
    assert {p.x64 for p in progs} == {True, False}
    assert {(), (0,), (0, 2)} <= {p.shape for p in progs}
    assert {"solve", "fft", "erf", "softmax", "uniform", "scan", "cond", "at_add"} <= set(EDGE_OPS)
    assert len({p.op for p in progs}) == len(EDGE_OPS)


def test_edge_comparison_can_fail():
    # a wrong dtype and a wrong value are both reported
    from tests import fuzz
    p = fuzz.EdgeProgram("sin", "float32", (3,), "value", False, 5)
    assert compare_edge(p) is None
    orig = fuzz.EDGE_OPS[p.op]
    try:
        fuzz.EDGE_OPS[p.op] = orig[:3] + ((lambda L, *xs: orig[3](L, *xs) + (L.np is fnp)),)
        assert compare_edge(p) is not None
    finally:
        fuzz.EDGE_OPS[p.op] = orig


def test_eager_edge_values_give_no_numpy_warnings():
    """Every edge op on edge values of every dtype, eagerly and with warnings as errors (as
    under `-W error`): NumPy's IEEE RuntimeWarnings from funcad's own lines never surface,
    as JAX computes the same numbers silently (`debug_nans`/`debug_infs` ask for errors).
    Run in a fresh interpreter: the warnings state other tests leave behind (filter lists,
    `__warningregistry__`s) is not what a user's `-W error` program starts with."""
    import os
    import subprocess
    import sys
    import warnings
    if os.environ.get("FUNCAD_FRESH_WARNINGS") != "1":
        node = "tests/transforms/test_fuzz.py::test_eager_edge_values_give_no_numpy_warnings"
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                               node], cwd=root, capture_output=True, text=True, timeout=600,
                              env=dict(os.environ, FUNCAD_FRESH_WARNINGS="1"))
        assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
        return
    from tests.fuzz import _Lib, _edge_values, _kind_of, _np_dtype
    raised = []
    for x64 in (True, False):
        with funcad.enable_x64(x64):
            lib = _Lib("funcad")
            for op, (arity, kinds, _, body) in sorted(EDGE_OPS.items()):
                for dt in EDGE_DTYPES:
                    if _kind_of(dt) not in kinds:
                        continue
                    rng = np.random.default_rng(0)
                    xs = [_edge_values(rng, _np_dtype(dt), 14, False).reshape(2, 7) for _ in range(arity)]
                    with warnings.catch_warnings():
                        warnings.simplefilter("error")
                        # JAX's own warning for a 64-bit dtype asked for with x64 off (JAX gives it too)
                        warnings.filterwarnings("ignore", "Explicitly requested dtype", UserWarning)
                        try:
                            body(lib, *xs)
                        except Warning as w:
                            raised.append(f"{op}({dt}, x64={x64}): {type(w).__name__}: {w}")
                        except Exception:
                            pass  # not a valid program for this dtype (compare_edge checks JAX's verdict)
    assert not raised, "\n".join(raised)
