"""Indexing and `.at[...]` updates on Explicit mesh axes, against JAX.

Static slices keep a split dimension's axes only where its new size stays divisible
(else JAX's error); an update typed without ambiguity (x[idx] and the updates split
alike) keeps x's type; other updates raise JAX's error, which names
`.at[...].set(out_sharding=)`; `out_sharding=` runs the gather or scatter on Auto axes.
The default run compares types and errors on an AbstractMesh; the slow suite the
values, types and layouts on 8 simulated CPU devices.
"""
from __future__ import annotations

import jax
import numpy as np
import pytest

import funcad
from funcad.core.errors import ShardingTypeError
from tests.multidevice import on_eight_devices, on_one_device, run_in_child
from tests.sharding.typed_cases import eval_shape, run, specs

A = np.arange(128.0, dtype=np.float32).reshape(16, 8)
ROWS = np.array([0, 2])
IDX = (np.arange(128).reshape(16, 8) * 3 % 8).astype(np.int32)

# name -> (f(lib, x), [(operand, spec)]): the same type (and values) as JAX's
CASES = {
    "slice_even": (lambda lib, x: x[0:8], [(A, ("X", "Y"))]),
    "slice_half_columns": (lambda lib, x: x[:, 0:4], [(A, ("X", "Y"))]),
    "stride_rows": (lambda lib, x: x[::2], [(A, ("X", "Y"))]),
    "stride_columns": (lambda lib, x: x[:, ::2], [(A, ("X", "Y"))]),
    "new_axis": (lambda lib, x: x[None, 2:4], [(A, ("X", "Y"))]),
    "scalar": (lambda lib, x: x[3, 5], [(A, ("X", "Y"))]),
    "lax_slice": (lambda lib, x: lib.lax.slice(x, (0, 0), (2, 8)), [(A, ("X", "Y"))]),
    "lax_slice_one_element": (lambda lib, x: lib.lax.slice(x, (0, 0), (1, 1)), [(A, ("X", "Y"))]),
    "split": (lambda lib, x: lib.np.split(x, 4, axis=0), [(A, ("X", "Y"))]),
    "row_of_unsplit_rows": (lambda lib, x: x[0], [(A, (None, "Y"))]),
    "dynamic_rows": (lambda lib, x: lib.lax.dynamic_slice_in_dim(x, 3, 2, 0), [(A, ("X", "Y"))]),
    "take_along_batch": (lambda lib, x, i: lib.np.take_along_axis(x, i, axis=1), [(A, ("X",)), (IDX, ("X",))]),
    "take_along_untyped_indices": (lambda lib, x, i: lib.np.take_along_axis(x, i, axis=1), [(A, ("X",)), (IDX, None)]),
    "take_along_untyped_operand": (lambda lib, x, i: lib.np.take_along_axis(x, i, axis=1), [(A, None), (IDX, ("X",))]),
    "update_replicated": (lambda lib, x: x.at[0].set(1.0), [(A, ())]),
    "update_typed_alike": (lambda lib, x, u: x.at[ROWS].add(u), [(A, (None, "Y")), (np.ones((2, 8), np.float32),
                                                                               (None, "Y"))]),
}

# name -> (f, operands, JAX's words): JAX's ShardingTypeError
ERRORS = {
    "int_of_split_rows": (lambda lib, x: x[0], [(A, ("X", "Y"))], "slicing on sharded dims where out dim"),
    "int_of_split_columns": (lambda lib, x: x[:, 1], [(A, ("X", "Y"))], "slicing on sharded dims"),
    "uneven_slice": (lambda lib, x: x[1:4], [(A, ("X", "Y"))], "out dim \\(3\\) is not divisible"),
    "uneven_stride": (lambda lib, x: x[:, ::3], [(A, ("X", "Y"))], "out dim \\(3\\) is not divisible"),
    "negative_int": (lambda lib, x: x[-1], [(A, ("X", "Y"))], "slicing on sharded dims"),
    "ellipsis_int": (lambda lib, x: x[..., 0], [(A, ("X", "Y"))], "slicing on sharded dims"),
    "dynamic_int": (lambda lib, x: lib.lax.dynamic_index_in_dim(x, 3, 0, False), [(A, ("X", "Y"))],
                    "dynamic_slice on sharded dims"),
    "gather_split_rows": (lambda lib, x: x[ROWS], [(A, ("X", "Y"))], "Use `.at\\[...\\].get\\(out_sharding=\\)`"),
    "boolean_mask": (lambda lib, x: x[np.arange(16) < 8], [(A, ("X", "Y"))], "get\\(out_sharding=\\)"),
    "take_along_split_axis": (lambda lib, x, i: lib.np.take_along_axis(x, i, axis=1),
                              [(A, ("X", "Y")), (IDX, ("X",))], "get\\(out_sharding=\\)"),
    "take_along_other_batch": (lambda lib, x, i: lib.np.take_along_axis(x, i, axis=1),
                               [(A, ("X",)), (IDX, ("Y",))], "get\\(out_sharding=\\)"),
    "get_static_int_out_sharding": (lambda lib, x: x.at[0].get(out_sharding=lib.s("Y")), [(A, ("X", "Y"))],
                                    "slicing on sharded dims"),
    "set_split_row": (lambda lib, x: x.at[0].set(1.0), [(A, ("X", "Y"))],
                      "Use `.at\\[...\\].set/add/mul/...\\(out_sharding=\\)`"),
    "set_unsplit_row_scalar": (lambda lib, x: x.at[0].set(1.0), [(A, (None, "Y"))], "set/add/mul"),
    "set_column_of_split_rows": (lambda lib, x: x.at[:, 0].set(1.0), [(A, ("X",))], "set/add/mul"),
    "add_rows_untyped_updates": (lambda lib, x: x.at[ROWS].add(1.0), [(A, (None, "Y"))], "set/add/mul"),
    "set_whole": (lambda lib, x: x.at[:].set(0.0), [(A, (None, "Y"))], "set/add/mul"),
    "multiply": (lambda lib, x: x.at[0].mul(2.0), [(A, (None, "Y"))], "set/add/mul"),
    "minimum": (lambda lib, x: x.at[0].min(2.0), [(A, (None, "Y"))], "set/add/mul"),
}


@pytest.mark.parametrize("name", sorted(n for n in CASES if not n.startswith("update")))
def test_slice_types_match_jax(name):
    f, operands = CASES[name]
    assert specs(eval_shape(False, f, operands)) == specs(eval_shape(True, f, operands))


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_ambiguous_indexing_raises_jaxs_error(name):
    f, operands, words = ERRORS[name]
    with pytest.raises(Exception, match=words) as jerr:
        eval_shape(True, f, operands)
    assert type(jerr.value).__name__ == "ShardingTypeError"
    with pytest.raises(ShardingTypeError, match=words):
        eval_shape(False, f, operands)


def test_updates_split_otherwise_raise_jaxs_value_error():
    f = lambda lib, x, u: x.at[ROWS].add(u)  # noqa: E731
    operands = [(A, (None, "Y")), (np.ones((2, 8), np.float32), (None, "X"))]
    for side in (True, False):
        with pytest.raises(ValueError, match="Incompatible types for broadcasting"):
            eval_shape(side, f, operands)


# ------------------------------------------ 8 simulated CPU devices (slow) ----

@pytest.mark.slow
@on_one_device
def test_indexing_on_eight_devices():
    run_in_child(__file__)


OUT_SHARDING = {  # JAX honours these by running the gather or scatter on Auto axes
    "get_split_rows": lambda lib, x: x.at[ROWS].get(out_sharding=lib.s(None, "Y")),
    "set_split_row": lambda lib, x: x.at[0].set(1.0, out_sharding=lib.s("X", "Y")),
    "add_rows": lambda lib, x: x.at[ROWS].add(2.0, out_sharding=lib.s("Y", None)),
}


@on_eight_devices
@pytest.mark.parametrize("name", sorted(CASES))
def test_values_types_and_layouts_match_jax(name):
    f, operands = CASES[name]
    got, want = run(False, f, operands), run(True, f, operands)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
        assert specs([funcad.typeof(g)]) == specs([jax.typeof(w)]), name


@on_eight_devices
@pytest.mark.parametrize("name", sorted(OUT_SHARDING))
def test_out_sharding_of_gathers_and_scatters(name):
    f = OUT_SHARDING[name]
    got, want = run(False, f, [(A, ("X", "Y"))]), run(True, f, [(A, ("X", "Y"))])
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert specs([funcad.typeof(got)]) == specs([jax.typeof(want)]), name
    assert tuple(got.sharding.spec) == tuple(want.sharding.spec)
