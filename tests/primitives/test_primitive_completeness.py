"""Every registered primitive states every rule.

A primitive is registered in the rule tables of funcad/core/trace.py. Each
must have an impl, a shape rule, a jvp, a batching rule, a StableHLO lowering
and a `to_python` template, and a transpose rule if it is linear in some
operand. The exceptions are listed below, each with its reason; a new
primitive belongs in none of them.

The interpretations outside core (sparsity patterns, jet, sparsify, checkify, key
reuse) keep tables keyed by Primitive too; `test_rule_table_has_no_unexplained_gap`
prints the whole primitive x interpretation table (`pytest -s`) and fails on a cell
that is neither a rule nor covered by a stated reason (`REASONS`).
"""
from __future__ import annotations

import importlib
import pkgutil

import numpy as np
import pytest

import funcad
from funcad.core import trace as T
from funcad.core.staging import partial_eval_rules
from funcad.extend.core import Primitive as LibraryPrimitive


def _import_all():
    """Import every funcad module, so that lazily imported owners register their rules too."""
    for info in pkgutil.walk_packages(funcad.__path__, "funcad."):
        if info.name != "funcad.__main__":
            importlib.import_module(info.name)


_import_all()
# funcad's own primitives: those a library defines through funcad.extend.core (a
# subclass), e.g. in tests/extend/test_extend.py, state only the rules the library gives.
PRIMS = sorted({p for table in (T.impl_rules, T.abstract_eval_rules, T.jvp_rules, T.transpose_rules,
                                T.batch_rules, T.lowering_rules, T.python_rules) for p in table
                if not isinstance(p, LibraryPrimitive)}, key=lambda p: p.name)
BY_NAME = {p.name: p for p in PRIMS}

# Staged custom_jvp/custom_vjp functions: their bind rebuilds the custom function
# and applies it under the current trace (Trace.process_custom_jvp/vjp), so jvp and
# vmap never see the primitive itself.
CUSTOM_BIND = {"custom_jvp_call", "custom_vjp_call"}
# Primitives with no batching rule, and why.
NO_BATCH = {
    *CUSTOM_BIND,
    # No operands: vmap binds it under the parent trace, never with a batched input.
    # (axis_index over a vmap's own axis_name is that trace's named rule, collectives.py.)
    "iota", "axis_index",
    # A custom_vjp function's linear part, staged only while linearizing; its impl,
    # jvp and lowering all raise the "custom_vjp is reverse-mode only" error, and
    # so does vmap of it (through the impl of its parent trace).
    "custom_lin",
}
# Primitives that to_python writes without a template of their own, and why.
NO_PYTHON = {
    # Call primitives (register_call): to_python writes their bodies inline, or as a
    # nested function where the body has constants.
    *(p.name for p in T.call_rules),
    # An effect: jit hoists it out of the program before lowering; printing source
    # for a program that prints is not supported.
    "debug_print",
    # A call of the user's Python function: NumPy source cannot name it.
    "pure_callback", "debug_callback", "io_callback", "inspect_sharding",
    # A call of a serialized StableHLO module (funcad.export): NumPy source cannot run it.
    "call_exported",
    # See NO_BATCH.
    "custom_lin",
    # Per-device programs over a mesh and their collectives: a NumPy program has no
    # devices to communicate between; to_python raises the clear error naming them.
    "shard_map", "psum", "psum_invariant", "pvary", "pmax", "pmin", "all_gather", "psum_scatter",
    "ppermute", "all_to_all", "axis_index",
}
# Primitives linear in at least one operand: they need a transpose rule.
LINEAR = {
    "neg", "add", "sub", "mul", "div", "select_n", "convert_element_type", "reduce_sum", "cumsum",
    "broadcast_in_dim", "reshape", "transpose", "squeeze", "rev", "slice", "pad", "concatenate",
    "dot_general", "conv_general_dilated", "dynamic_slice", "dynamic_update_slice", "gather", "scatter_add", "fft",
    "triangular_solve", "tridiagonal_solve", "optimization_barrier", "custom_lin", "real", "imag", "conj", "complex",
    "sharding_constraint", "psum", "psum_invariant", "pvary", "all_gather", "psum_scatter",
    "ppermute", "all_to_all", "shard_map", "reduce_precision",
    # linear_solve is linear in b (its transpose solves with the transposed operator);
    # linear_call in its linear inputs (its transpose is the user's).
    "linear_solve", "linear_call",
    # multihost_utils' conversions between a process's part and the global array.
    "host_local_array_to_global_array", "global_array_to_host_local_array",
    # Higher-order primitives transpose their bodies; debug_print and debug_callback
    # pass cotangents by.
    "jit", "checkpoint", "cond", "while", "scan", "debug_print", "debug_callback", "closed_call",
    # dce_sink is linear (as JAX's deflinear): its transpose gives no cotangent.
    "dce_sink",
}
# Higher-order primitives need a partial-evaluation rule (reverse mode stages their
# unknown part as one equation).
HIGHER_ORDER = {"jit", "checkpoint", "cond", "while", "scan", "shard_map", "closed_call"}


def test_the_registry_is_found():
    assert len(PRIMS) > 80
    assert {"sin", "add", "reduce_sum", "dot_general", "gather", "scan", "jit",
            "custom_jvp_call"} <= set(BY_NAME)
    assert len(BY_NAME) == len(PRIMS), "two primitives share a name"
    # every call primitive is declared once, by transforms/calls.define_call (examples in
    # docstrings and tests declare more, named my_*, when they ran first in this process)
    assert {p.name for p in T.call_rules if not p.name.startswith("my_")} == {"jit", "checkpoint", "custom_jvp_call", "custom_vjp_call",
                                                "linear_solve", "custom_vmap_call", "linear_call",
                                                "closed_call"}


def test_exception_lists_name_real_primitives():
    for name in NO_BATCH | NO_PYTHON | LINEAR | HIGHER_ORDER | CUSTOM_BIND | SPARSIFY_NONE:
        assert name in BY_NAME, f"{name} is listed but is no registered primitive"


@pytest.mark.parametrize("prim", PRIMS, ids=lambda p: p.name)
def test_primitive_has_every_rule(prim):
    missing = [kind for kind, table in [("impl", T.impl_rules), ("abstract eval", T.abstract_eval_rules),
                                        ("jvp", T.jvp_rules), ("lowering", T.lowering_rules)]
               if prim not in table and not (kind == "jvp" and prim.name in CUSTOM_BIND)]
    if prim not in T.batch_rules and prim.name not in NO_BATCH:
        missing.append("batching")
    if prim not in T.python_rules and prim.name not in NO_PYTHON:
        missing.append("to_python")
    if prim.name in LINEAR and prim not in T.transpose_rules:
        missing.append("transpose")
    if prim.name in HIGHER_ORDER and prim not in partial_eval_rules:
        missing.append("partial eval")
    assert not missing, f"primitive `{prim.name}` has no {', '.join(missing)} rule"


@pytest.mark.parametrize("prim", PRIMS, ids=lambda p: p.name)
def test_transpose_only_for_declared_linear(prim):
    # Keeps LINEAR honest: a transpose rule means the primitive is linear somewhere.
    if prim in T.transpose_rules:
        assert prim.name in LINEAR, f"`{prim.name}` has a transpose rule: add it to LINEAR"


def test_exceptions_are_still_needed():
    # A listed primitive that gained the rule should leave the list.
    for name in NO_BATCH:
        assert BY_NAME[name] not in T.batch_rules, f"{name} has a batching rule now"
    for name in CUSTOM_BIND:
        assert BY_NAME[name] not in T.jvp_rules, f"{name} has a jvp rule now"
    for name in NO_PYTHON:
        assert BY_NAME[name] not in T.python_rules, f"{name} has a to_python rule now"


def test_a_rule_missing_is_reported():
    # The check can fail: a fresh primitive with only impl and shape rule is incomplete.
    from funcad.primitives._base import new_primitive
    p = new_primitive("completeness_probe", lambda x: x, lambda x: x)
    try:
        with pytest.raises(AssertionError, match="no jvp, lowering, batching, to_python"):
            test_primitive_has_every_rule(p)
    finally:
        del T.impl_rules[p], T.abstract_eval_rules[p]


def test_a_new_unary_primitive_is_one_block():
    # What a new standard primitive takes: this block (in primitives/elementwise.py),
    # plus its name in funcad.lax's list. Everything else follows from the tables.
    import numpy as np
    from funcad.primitives.elementwise import _bind1, cosh, defjvp, mul, unop

    probe_p = unop("probe_sinh", np.sinh, hlo="chlo.sinh", py="np.sinh({0})")
    probe = _bind1(probe_p)
    defjvp(probe_p, lambda t, ans, x: mul(t, cosh(x)))
    try:
        test_primitive_has_every_rule(probe_p)
        x = np.linspace(-1.0, 1.0, 4)
        np.testing.assert_allclose(funcad.jit(probe)(x), np.sinh(x), rtol=1e-12)
        np.testing.assert_allclose(funcad.vmap(probe)(x), np.sinh(x), rtol=1e-12)
        np.testing.assert_allclose(funcad.vmap(funcad.grad(funcad.grad(probe)))(x), np.sinh(x), rtol=1e-12)
        assert "np.sinh(a)" in funcad.to_python(funcad.make_jaxpr(probe)(x))
    finally:
        for table in (T.impl_rules, T.abstract_eval_rules, T.jvp_rules, T.batch_rules, T.lowering_rules,
                      T.python_rules):
            table.pop(probe_p, None)


def test_every_primitive_has_a_sparsity_rule():
    """Sparse Jacobians read every primitive's dependency pattern (funcad/transforms/sparsity)."""
    from funcad.transforms.sparsity._interp import dep_rules
    assert [p.name for p in PRIMS if p not in dep_rules] == []


# ------------------------------------------------- the whole primitive x interpretation table ----

from funcad.experimental._checkify_interp import NAN_PRIMITIVES, checkify_rules  # noqa: E402
from funcad.experimental._jet_trace import jet_rules  # noqa: E402
from funcad.experimental.sparse._transform import bcsr_rules, sparse_rules  # noqa: E402
from funcad.primitives.elementwise import ELEMENTWISE  # noqa: E402
from funcad.random._key_reuse import key_reuse_rules  # noqa: E402
from funcad.transforms.sparsity import rules as _dep  # noqa: E402
from funcad.transforms.sparsity._interp import dep_rules  # noqa: E402

TABLES = {"impl": T.impl_rules, "shape": T.abstract_eval_rules, "jvp": T.jvp_rules,
          "transpose": T.transpose_rules, "batch": T.batch_rules, "lower": T.lowering_rules,
          "python": T.python_rules, "shard": T.sharding_rules, "pe": partial_eval_rules, "deps": dep_rules, "jet": jet_rules,
          "sparsify": sparse_rules, "bcsr": bcsr_rules, "checkify": checkify_rules, "keys": key_reuse_rules}

_names = lambda *groups: frozenset().union(*groups)
COLLECTIVES = frozenset({"psum", "psum_invariant", "pvary", "pmax", "pmin", "all_gather", "psum_scatter",
                         "ppermute", "all_to_all", "axis_index", "host_local_array_to_global_array",
                         "global_array_to_host_local_array"})
EFFECTS = frozenset({"debug_print", "debug_callback", "io_callback", "pure_callback", "inspect_sharding",
                     "create_token", "after_all", "dce_sink", "check", "random_consume", "random_clone",
                     "call_exported", "name", "optimization_barrier", "sharding_constraint"})
DECOMPOSITIONS = frozenset({"cholesky", "lu", "qr", "eig", "eigh", "svd", "schur", "geqrf", "geqp3",
                            "householder_product", "hessenberg", "tridiagonal", "triangular_solve",
                            "tridiagonal_solve"})
BODIES = HIGHER_ORDER | {p.name for p in T.call_rules}


# No sparse rule yet: a sparse operand raises NotImplementedError naming the primitive and
# saying to todense() first. JAX's sparsify has rules for some of these (reduce_max, gather,
# scan, the custom calls): future work, listed so that a new primitive is not silently added.
SPARSIFY_NONE = frozenset({
    "atan2", "clamp", "complex", "conv_general_dilated", "cummax", "cummin", "cumprod", "cumsum",
    "custom_vjp_call", "custom_vmap_call", "dynamic_update_slice", "fft", "gather", "linear_call",
    "linear_solve", "max", "min", "pad", "reduce_max", "reduce_min", "reduce_prod",
    "regularized_incomplete_beta", "scan", "scatter_add", "select_n", "sort"})


def _no_derivative(p) -> bool:  # the sparsity table's `zero` rule: constant in its inputs
    return dep_rules.get(p) is _dep.zero


def _keeps_zeros(p) -> bool:
    """Whether an elementwise op maps 0 to 0 (then sparsify could keep a BCOO result)."""
    if p not in ELEMENTWISE or p not in T.impl_rules:
        return False
    for args in ((np.float64(0.0),), (np.float64(0.0), np.float64(0.0))):
        try:
            with np.errstate(all="ignore"):
                out = T.impl_rules[p](*args)
            return bool(np.all(np.asarray(out) == 0))
        except Exception:
            continue
    return False


# interpretation -> [(short code, reason, does it cover this primitive?)]; the first that
# covers a primitive without a rule is the cell's entry.
REASONS: dict = {
    "jvp": [("cust", "custom_jvp/vjp: bind rebuilds the custom function under the trace", lambda p: p.name in CUSTOM_BIND)],
    "transpose": [("nl", "nonlinear in every operand: no transpose", lambda p: p.name not in LINEAR)],
    "batch": [("-", "see NO_BATCH", lambda p: p.name in NO_BATCH)],
    "python": [("-", "see NO_PYTHON", lambda p: p.name in NO_PYTHON)],
    "pe": [("1st", "first-order: reverse mode stages the whole equation", lambda p: p.name not in HIGHER_ORDER)],
    "shard": [
    ],
    "deps": [],
    "jet": [
        ("cust", "custom_jvp/vjp: bind rebuilds the custom function under the jet trace",
         lambda p: p.name in CUSTOM_BIND),
        ("coll", "collectives: only inside shard_map bodies, which jet does not enter (as JAX's)",
         lambda p: p.name in COLLECTIVES | {"shard_map"}),
        ("eff", "effects, tokens, markers: MissingJetRuleError names them (JAX's jet has none)",
         lambda p: p.name in EFFECTS),
        ("lin", "decompositions and solves: no Taylor rule here or in JAX's jet; jvp instead",
         lambda p: p.name in DECOMPOSITIONS),
        ("none", "no Taylor rule (none in JAX's jet either): MissingJetRuleError names it, says use jvp",
         lambda p: p.name in {"cbrt", "lgamma", "digamma", "polygamma", "igamma", "igammac", "igamma_grad_a",
                              "random_gamma_grad", "bessel_i0e", "bessel_i1e", "zeta", "reduce_prod",
                              "regularized_incomplete_beta", "reduce_precision", "sort", "iota",
                              "threefry2x32", "rng_bit_generator", "rng_uniform", "custom_lin"}),
        ("body", "not entered yet (future work): MissingJetRuleError names it when a series reaches it",
         lambda p: p.name in {"checkpoint", "linear_solve", "custom_vmap_call", "linear_call", "cond",
                              "while", "scan"}),
    ],
    "sparsify": [
        ("zero", "no derivative, integer or boolean: raises NotImplementedError naming it (as JAX's)",
         _no_derivative),
        ("dense", "f(0) != 0: a sparse operand would give a dense result; raises saying to todense()",
         lambda p: p in ELEMENTWISE and not _keeps_zeros(p)),
        ("coll", "collectives, effects, decompositions: raise NotImplementedError naming them (as JAX's)",
         lambda p: p.name in COLLECTIVES | EFFECTS | DECOMPOSITIONS | {"shard_map", "custom_lin"}),
        ("todo", "no sparse rule yet (SPARSIFY_NONE): raises NotImplementedError naming it",
         lambda p: p.name in SPARSIFY_NONE),
    ],
    "bcsr": [("bcoo", "BCSR has JAX's few rules; the rest raise naming the primitive", lambda p: True)],
    "checkify": [
        ("call", "call primitive: its body is checkified", lambda p: p in T.call_rules),
        ("nonan", "cannot make a NaN from non-NaN inputs (not in JAX's NaN list): runs unchecked",
         lambda p: p not in NAN_PRIMITIVES),
    ],
    "keys": [
        ("call", "call primitive: its body's signature", lambda p: p in T.call_rules),
        ("fresh", "holds no body and knows no keys: consumes none, its outputs are fresh",
         lambda p: p.name not in BODIES),
        ("smap", "shard_map's body is not analysed: keys consumed inside it are not tracked",
         lambda p: p.name == "shard_map"),
    ],
}


def _cell(prim, column: str) -> str:
    if prim in TABLES[column]:
        return "+"
    for code, _, covers in REASONS.get(column, ()):
        if covers(prim):
            return code
    return "GAP"


def rule_table() -> str:
    cols = list(TABLES)
    width = max(len(p.name) for p in PRIMS)
    head = " ".join(c[:6].ljust(6) for c in cols)
    lines = ["primitive".ljust(width) + " " + head]
    for p in PRIMS:
        lines.append(p.name.ljust(width) + " " + " ".join(_cell(p, c).ljust(6) for c in cols))
    lines.append("")
    lines.append("+ : a rule; otherwise the reason's code:")
    for c, reasons in REASONS.items():
        lines.extend(f"  {c}/{code}: {why}" for code, why, _ in reasons)
    return "\n".join(lines)


def test_rule_table_has_no_unexplained_gap():
    table = rule_table()
    print(table)
    gaps = [line.split()[0] for line in table.splitlines() if " GAP" in line]
    assert not gaps, f"primitives with a rule missing and no stated reason: {gaps}\n{table}"


def test_sparsify_exceptions_are_still_needed():
    assert [n for n in SPARSIFY_NONE if BY_NAME[n] in sparse_rules] == []


def test_rule_table_finds_a_gap():
    # The check can fail: a fresh primitive with only impl and shape rule has gaps.
    from funcad.primitives._base import new_primitive
    p = new_primitive("completeness_probe2", lambda x: x, lambda x: x)
    try:
        assert _cell(p, "jvp") == "GAP" and _cell(p, "deps") == "GAP"
        assert _cell(p, "impl") == "+"
    finally:
        del T.impl_rules[p], T.abstract_eval_rules[p]
