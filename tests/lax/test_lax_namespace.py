"""funcad.lax's namespace against jax.lax: the `*_p` primitive objects (the ones make_jaxpr's
equations carry, under JAX's names) and the names funcad leaves out, which say what to use."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad import lax
from funcad.core.errors import UnsupportedError


def test_left_out_lax_names_say_what_to_use():
    for name, hint in (("psum_scatter_start", "psum_scatter"), ("ragged_all_to_all", "all_to_all")):
        with pytest.raises(UnsupportedError, match=hint):
            getattr(lax, name)


def _walk(jaxpr, out):
    for eqn in jaxpr.eqns:
        out.append(eqn.primitive)
        for v in eqn.params.values():
            for sub in v if isinstance(v, (tuple, list)) else (v,):
                inner = getattr(sub, "jaxpr", None)
                if inner is not None:
                    _walk(inner, out)
    return out


def _program(lib, lx):
    def f(x, i):
        y = lx.sin(x) + lx.integer_pow(x, 3) + lx.reduce_sum(lx.exp(x), (0,))
        z = lx.dynamic_slice(lx.cumsum(x, 0), (i,), (2,))
        c = lx.cond(i > 0, lambda a: a * 2.0, lambda a: a - 1.0, x)
        s = lx.scan(lambda cc, xx: (cc + xx, cc * xx), 0.0, x)[1]
        w = lx.while_loop(lambda v: v[0] < 3, lambda v: (v[0] + 1, v[1] * 2.0), (0, x))[1]
        d = lx.dot_general(x, x, (((0,), (0,)), ((), ())))
        return y.sum() + z.sum() + c.sum() + s.sum() + w.sum() + d
    return f


def test_primitive_objects_match_jaxprs_as_jax():
    x, i = np.arange(4.0), np.int32(1)
    names = ["sin_p", "integer_pow_p", "reduce_sum_p", "exp_p", "dynamic_slice_p", "cumsum_p",
             "cond_p", "scan_p", "while_p", "dot_general_p", "mul_p", "add_p", "lt_p"]
    ours = _walk(funcad.make_jaxpr(_program(fnp, lax))(x, i).jaxpr, [])
    theirs = _walk(jax.make_jaxpr(_program(jnp, jax.lax))(x, i).jaxpr, [])
    for n in names:
        assert any(p is getattr(lax, n) for p in ours), n
        assert any(p is getattr(jax.lax, n) for p in theirs), n
        assert getattr(lax, n).name == getattr(jax.lax, n).name
    eqn = funcad.make_jaxpr(fnp.sin)(1.0).eqns[0]
    assert eqn.primitive is lax.sin_p and eqn.invars == eqn.inputs
    assert lax.select_n_p.name == "select_n" and "sin_p" in lax.__all__ and "sin_p" in dir(lax)


def test_every_exported_primitive_object_is_jaxs_name():
    exported = [n for n in lax.__all__ if n.endswith("_p")]
    assert len(exported) >= 115
    for n in exported:
        assert hasattr(jax.lax, n), n
        ours, theirs = getattr(lax, n).name, getattr(jax.lax, n).name
        # funcad's linear solve primitive prints as "linear_solve"; JAX's as "custom_linear_solve"
        assert ours == theirs or (n, ours) == ("linear_solve_p", "linear_solve"), (n, ours, theirs)
