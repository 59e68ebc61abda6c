"""funcad.smap (JAX's single-axis shard_map) against jax.smap on 8 simulated CPU devices
(in a child process: see tests/multidevice.py)."""
from __future__ import annotations

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
import funcad  # noqa: E402
import funcad.numpy as fnp  # noqa: E402
from funcad.core.errors import FuncadTypeError, FuncadValueError  # noqa: E402
from tests.multidevice import on_eight_devices, on_one_device, run_in_child  # noqa: E402

HAS_SMAP = hasattr(jax, "smap")


@on_one_device
def test_multidevice_suite():
    run_in_child(__file__)


@on_one_device
def test_one_device_and_errors():
    mesh = funcad.make_mesh((1,), ("i",))
    with funcad.set_mesh(mesh):
        f = funcad.smap(lambda x, y: x * y, in_axes=(0, None), out_axes=0, axis_name="i")
        np.testing.assert_array_equal(f(np.arange(3.0), 2.0), [0.0, 2.0, 4.0])
        g = funcad.smap(in_axes=0, out_axes=0, axis_name="i")(lambda x: x + 1)  # decorator form
        np.testing.assert_array_equal(g(np.zeros(2)), [1.0, 1.0])
    with pytest.raises(FuncadTypeError, match="axis_name should be a `str`"):
        funcad.smap(lambda x: x, in_axes=0, out_axes=0, axis_name=("i",))
    auto = funcad.make_mesh((1,), ("i",), (funcad.sharding.AxisType.Auto,))
    with funcad.set_mesh(auto), pytest.raises(FuncadTypeError, match="pass in_axes"):
        funcad.smap(lambda x: x, out_axes=0, axis_name="i")(np.zeros(2))  # Infer needs Explicit
    with pytest.raises(FuncadTypeError, match="in_axes must be an int"):
        funcad.smap(lambda x: x, in_axes=[0], out_axes=0, axis_name="i")
    with pytest.raises(FuncadTypeError, match="out_axes must be an int"):
        funcad.smap(lambda x: x, in_axes=0, out_axes="0", axis_name="i")
    with pytest.raises(FuncadValueError, match="context mesh"):
        funcad.smap(lambda x: x, in_axes=0, out_axes=0, axis_name="i")(np.zeros(2))


def _both(build, *args):
    """Run build(lib) under an 8-device (2, 4) mesh context of each library."""
    ours = build(funcad, fnp)
    with funcad.set_mesh(funcad.make_mesh((2, 4), ("a", "b"))):
        got = ours(*args)
    theirs = build(jax, jnp)
    with jax.set_mesh(jax.make_mesh((2, 4), ("a", "b"), axis_types=(jax.sharding.AxisType.Auto,) * 2)):
        want = theirs(*args)
    return got, want


@on_eight_devices
@pytest.mark.skipif(not HAS_SMAP, reason="the installed jax has no smap")
@pytest.mark.parametrize("case", ["psum", "axis1", "none_in", "out1", "nested_jit", "grad"])
def test_matches_jax_smap(case):
    x = np.arange(64.0, dtype=np.float32).reshape(8, 8) / 10
    if case == "psum":
        build = lambda lib, np_: lib.jit(lib.smap(lambda v: v - lib.lax.psum(v.sum(), "b"),  # noqa: E731
                                                  in_axes=0, out_axes=0, axis_name="b"))
    elif case == "axis1":
        build = lambda lib, np_: lib.jit(lib.smap(lambda v: np_.sin(v) * lib.lax.axis_index("b"),  # noqa: E731
                                                  in_axes=1, out_axes=1, axis_name="b"))
    elif case == "none_in":
        build = lambda lib, np_: lib.jit(lib.smap(lambda v, w: v @ w, in_axes=(0, None),  # noqa: E731
                                                  out_axes=0, axis_name="a"))
        got, want = _both(build, x, x.T)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
        return
    elif case == "out1":
        build = lambda lib, np_: lib.jit(lib.smap(lambda v: v.T, in_axes=0, out_axes=1,  # noqa: E731
                                                  axis_name="b"))
    elif case == "nested_jit":
        build = lambda lib, np_: lib.jit(lib.smap(lib.jit(lambda v: lib.lax.pmax(v, "a") - v),  # noqa: E731
                                                  in_axes=0, out_axes=0, axis_name="a"))
    else:
        build = lambda lib, np_: lib.jit(lib.grad(lambda v: lib.smap(  # noqa: E731
            lambda u: lib.lax.psum(np_.sum(np_.tanh(u) ** 2), "b"), in_axes=0, out_axes=None,
            axis_name="b")(v)))
    got, want = _both(build, x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, atol=1e-6)
