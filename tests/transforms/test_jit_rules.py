"""jit_p's transformation rules, built on jaxpr_transforms: what jit needs beyond
the shared convention (weak types kept, any batch axis, forwarded residuals)."""
import numpy as np

import funcad
import funcad.numpy as fnp
from funcad.transforms.jaxpr_transforms import forward_residuals, partial_eval_jaxpr


def _jit_eqns(closed):
    return [e for e in closed.jaxpr.eqns if e.prim.name == "jit"]


def test_jvp_of_jit_keeps_weak_types():
    f = funcad.jit(lambda x, y: (x, x * y))
    (p0, p1), (t0, t1) = funcad.jvp(f, (1.0, 2.0), (1.0, 1.0))
    assert (p0.weak_type, p1.weak_type, t0.weak_type) == (True, True, True)
    assert (float(p1), float(t1)) == (2.0, 3.0)


def test_vmap_of_jit_batches_inside_the_call_along_any_axis():
    g = funcad.jit(lambda a: fnp.sin(a) * 2.0)
    xs = np.arange(12.0).reshape(3, 4)
    closed = funcad.make_jaxpr(funcad.vmap(g, in_axes=1))(xs)
    assert [e.prim.name for e in closed.jaxpr.eqns] == ["jit"]  # no transpose outside
    np.testing.assert_allclose(funcad.vmap(g, in_axes=1)(xs), (np.sin(xs) * 2.0).T, rtol=1e-15)


def test_forward_residuals_passes_known_inputs_on():
    closed = funcad.make_jaxpr(lambda x, t: fnp.cos(x) * t + x * t)(1.0, 2.0)
    known, unknown, _, nres = partial_eval_jaxpr(closed, [False, True])
    fwd, sources = forward_residuals(known, nres)
    assert ("in", 0) in sources  # x itself is a residual: not an output any more
    assert len(fwd.jaxpr.outvars) == len(known.jaxpr.outvars) - sources.count(("in", 0))
    k_outs = fwd(1.0)
    res = [1.0 if kind == "in" else k_outs[i] for kind, i in sources]
    np.testing.assert_allclose(unknown(*res, 2.0)[0], np.cos(1.0) * 2.0 + 2.0, rtol=1e-15)


def test_grad_of_jit_known_call_returns_no_forwarded_input():
    f = funcad.jit(lambda x: fnp.sum(fnp.sin(x) * x))
    x = np.linspace(0.1, 1.0, 5)
    closed = funcad.make_jaxpr(funcad.grad(f))(x)
    known = _jit_eqns(closed)[0]
    assert all(v is not known.params["jaxpr"].jaxpr.invars[0] for v in known.params["jaxpr"].jaxpr.outvars)
    np.testing.assert_allclose(funcad.grad(f)(x), np.cos(x) * x + np.sin(x), rtol=1e-14)
