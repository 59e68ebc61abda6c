"""The differentiation API over pytrees: jvp, linearize, vjp, grad, jacobians."""
from __future__ import annotations

from functools import wraps
from typing import Any, Callable, Sequence

from ..core.avals import aval_of, float0, tangent_dtype
from ..core.narrow import kind as _kind
from ..core.errors import FuncadTypeError, FuncadValueError
from ..core.arguments import argnums_positions, with_args
from ..core.refs import Ref
from ..core.pytree import flatten_up_to, tree_flatten, tree_structure, tree_unflatten
from ..core import staging
from ..core import x64 as _x64
from ..core.staging import trace_to_jaxpr
from ..core.trace import Tracer, eval_jaxpr
from ..primitives._base import full
from ..primitives.collectives import AxisFrame, axis_env as bind_axes
from ..primitives.elementwise import convert_element_type, weakly
from ..primitives._base import zeros_tangent
from .jvp import jvp_flat
from .linearize import linearize_flat
from .passes import optimize as optimize_jaxpr
from .tape import Recording, vjp_flat
from .transpose import backward_pass


def _check_arrays(leaves, what):
    return [aval_of(x) for x in leaves]


def _flatten_fun(fun, in_tree, has_aux=False):
    """fun on pytrees -> fun on flat lists; the output tree lands in store[0]."""
    store = []

    def flat_fun(*flat):
        out_flat, trees = _flat_output(fun(*tree_unflatten(in_tree, flat)), has_aux)
        store.append(trees)
        return out_flat

    return flat_fun, store


def _flat_output(out, has_aux):
    """(the leaves of fun's output then of its aux, (output tree, aux tree, how many
    leaves the output has))."""
    aux = None
    if has_aux:
        if not (isinstance(out, tuple) and len(out) == 2):
            raise FuncadTypeError("with has_aux=True the function must return a pair (output, aux)")
        out, aux = out
    out_flat, out_tree = tree_flatten(out)
    aux_flat, aux_tree = tree_flatten(aux)
    return out_flat + aux_flat, (out_tree, aux_tree, len(out_flat))


def jvp(fun: Callable, primals: Sequence, tangents: Sequence, has_aux: bool = False):
    """Forward mode: (fun(*primals), J·tangents).

    >>> import funcad, funcad.numpy as fnp
    >>> funcad.jvp(fnp.sin, (0.0,), (2.0,))
    (Array(0., dtype=float64, weak_type=True), Array(2., dtype=float64, weak_type=True))
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise FuncadTypeError("jvp takes primals and tangents as tuples or lists, one entry per "
                              f"argument; got {type(primals).__name__} and {type(tangents).__name__}")
    flat_p, in_tree = tree_flatten(tuple(primals))
    flat_t = flatten_up_to(in_tree, tuple(tangents), "jvp tangents (must match the primals' tree)")
    for p, t in zip(flat_p, flat_t):
        pa, ta = aval_of(p), aval_of(t)
        want = tangent_dtype(pa.dtype)
        if pa.shape != ta.shape or (ta.dtype != want and not (want != float0 and ta.weak_type)):
            raise FuncadTypeError(
                f"jvp: a primal of type {pa.str_short()} needs a tangent of type "
                f"{pa.update(dtype=want).str_short()}, got {ta.str_short()}")
    flat_t = [None if tangent_dtype(aval_of(p).dtype) == float0 else _as_dtype(t, aval_of(p).dtype)
              for p, t in zip(flat_p, flat_t)]
    flat_fun, store = _flatten_fun(fun, in_tree, has_aux)
    p_out, t_out = jvp_flat(flat_fun, flat_p, flat_t)
    out_tree, aux_tree, n = store[0]
    y, ty = tree_unflatten(out_tree, p_out[:n]), tree_unflatten(out_tree, t_out[:n])
    if has_aux:
        return y, ty, tree_unflatten(aux_tree, p_out[n:])
    return y, ty


def _as_dtype(t, dtype):
    if aval_of(t).dtype == dtype:
        return t
    return convert_element_type(t, dtype)


def linearize(fun: Callable, *primals, has_aux: bool = False, in_nzs: Any = None):
    """(fun(*primals), f_jvp) where f_jvp(*tangents) evaluates the linear map J·t.

    has_aux: fun returns (output, aux); the result is then (output, f_jvp, aux).
    in_nzs: a tree prefix of `primals` with bool leaves (default all True); a False
    input's tangent is taken as a symbolic zero (what is passed for it is not read),
    and `f_jvp.out_nzs`, a tree like the output, tells which output tangents may be
    nonzero, as JAX's.

    >>> import funcad, funcad.numpy as fnp
    >>> y, f_jvp = funcad.linearize(fnp.sin, 0.0)
    >>> f_jvp(3.0)
    Array(3., dtype=float64, weak_type=True)
    >>> y, f_jvp, aux = funcad.linearize(lambda x: (x * x, x + 1.0), 2.0, has_aux=True)
    >>> float(f_jvp(1.0)), float(aux)
    (4.0, 3.0)
    """
    flat_p, in_tree = tree_flatten(primals)
    flat_p = _x64.canonicalize_all(flat_p)
    _check_arrays(flat_p, "linearize")
    nz_flags = None if in_nzs is None else _bool_flags(in_nzs, primals, "in_nzs")
    flat_fun, store = _flatten_fun(fun, in_tree, has_aux)
    out_nzs: list = []
    p_out, linear = linearize_flat(flat_fun, flat_p, nz_flags, out_nzs)
    out_tree, aux_tree, n = store[0]

    def f_jvp(*tangents):
        flat_t = flatten_up_to(in_tree, tangents, "linearize tangents")
        t_out = eval_jaxpr(linear.jaxpr, linear.consts, *flat_t)
        return tree_unflatten(out_tree, t_out[:n])

    f_jvp.jaxpr = linear
    f_jvp.out_nzs = tree_unflatten(out_tree, out_nzs[:n])
    if has_aux:
        return tree_unflatten(out_tree, p_out[:n]), f_jvp, tree_unflatten(aux_tree, p_out[n:])
    return tree_unflatten(out_tree, p_out), f_jvp


def _bool_flags(prefix, tree, name: str) -> list:
    """One bool per leaf of `tree` from `prefix`, a tree prefix of it with bool leaves."""
    bools, prefix_tree = tree_flatten(prefix)
    if not all(isinstance(b, bool) for b in bools):
        raise FuncadValueError(f"{name} must be a tree of bools (a prefix of the primals), got {prefix!r}")
    flags = []
    for b, sub in zip(bools, flatten_up_to(prefix_tree, tree, f"{name} (must be a tree prefix of the primals)")):
        flags += [b] * len(tree_flatten(sub)[0])
    return flags


def _no_reduce_axes(reduce_axes, name: str) -> None:
    # JAX removed reduce_axes and raises for any non-empty value; funcad does the same.
    if reduce_axes:
        raise NotImplementedError(f"reduce_axes argument to {name} is deprecated (JAX removed it); "
                                  "sum over the named axis in the function instead (lax.psum)")


def vjp(fun: Callable, *primals, has_aux: bool = False, reduce_axes=(), saveable_args: Any = True,
        in_nzs: Any = None):
    """Reverse mode: (fun(*primals), pullback) with pullback(ct) = ctᵀ·J per argument.

    in_nzs: a tree prefix of `primals` with bool leaves (default all True): a False
    input's tangent is a symbolic zero, so its cotangent is zeros, and
    `pullback.out_nzs` tells which outputs depend on the others, as JAX's.
    saveable_args: only True (the default) is taken: funcad's pullback holds its
    residuals itself and has no `args_res` for the caller to restore.
    reduce_axes: removed in JAX; a non-empty value raises as JAX's.

    >>> import funcad, funcad.numpy as fnp
    >>> y, pullback = funcad.vjp(lambda x: x * x, 3.0)
    >>> pullback(1.0)
    (Array(6., dtype=float64, weak_type=True),)
    """
    _no_reduce_axes(reduce_axes, "vjp")
    if not (saveable_args is True):
        raise NotImplementedError(
            f"vjp: saveable_args={saveable_args!r} needs the pullback's `args_res` (arguments the "
            "caller restores), which funcad's vjp does not have; leave saveable_args=True")
    flat_p, in_tree = tree_flatten(primals)
    flat_p = _x64.canonicalize_all(flat_p)
    in_avals = _check_arrays(flat_p, "vjp")
    nz_flags = None if in_nzs is None else _bool_flags(in_nzs, primals, "in_nzs")
    flat_fun, store = _flatten_fun(fun, in_tree, has_aux)
    out_nzs: list = []
    p_out, backward_flat = vjp_flat(flat_fun, flat_p, nz_flags, out_nzs)
    out_tree, aux_tree, n = store[0]
    out_avals = [aval_of(p) for p in p_out[:n]]

    def pullback(ct):
        flat_ct = flatten_up_to(out_tree, ct, "vjp cotangent (must match the output's tree)")
        for a, c in zip(out_avals, flat_ct):
            if tree_structure(c).kind is not None:  # a container where the output has an array
                raise FuncadTypeError(
                    f"vjp: the output is {a.str_short()} but its cotangent is a {type(c).__name__}; "
                    f"pass a cotangent with the output's structure ({out_tree})")
            ca = aval_of(c)
            if ca.shape != a.shape:
                raise FuncadTypeError(f"vjp: the output is {a.str_short()} but its cotangent is "
                                      f"{ca.str_short()}; pass a cotangent of the output's shape")
            want = tangent_dtype(a.dtype)
            if want != float0 and ca.dtype != want and not ca.weak_type:
                # As in JAX: a silent cast would hide a mix-up of precisions.
                raise FuncadTypeError(
                    f"vjp: the output is {a.str_short()} but its cotangent is {ca.str_short()}; "
                    f"pass a cotangent of dtype {want.name} (e.g. ct.astype({want.name}))")
        flat_ct = [_as_dtype(c, tangent_dtype(a.dtype)) if tangent_dtype(a.dtype) != float0 else None
                   for a, c in zip(out_avals, flat_ct)]
        return tree_unflatten(in_tree, _input_cts(in_avals, backward_flat(flat_ct + [None] * (len(p_out) - n))))

    pullback.out_nzs = tree_unflatten(out_tree, out_nzs[:n])
    y = tree_unflatten(out_tree, p_out[:n])
    if has_aux:
        return y, pullback, tree_unflatten(aux_tree, p_out[n:])
    return y, pullback


def _input_cts(in_avals, cts) -> list:
    """The inputs' cotangents from a backward pass (None: zero): each of its primal's type,
    weak where the primal was (as in JAX)."""
    return [zeros_tangent(a) if c is None else weakly(c, a.weak_type) for a, c in zip(in_avals, cts)]


def linear_transpose(fun: Callable, *primals, reduce_axes=()):
    """The transpose of a linear function, traced at the types of `primals`
    (reduce_axes: removed in JAX; a non-empty value raises as JAX's).

    >>> import funcad, numpy as np
    >>> f_t = funcad.linear_transpose(lambda x: 2.0 * x, 1.0)
    >>> f_t(1.0)
    (Array(2., dtype=float64, weak_type=True),)
    """
    _no_reduce_axes(reduce_axes, "linear_transpose")
    flat_p, in_tree = tree_flatten(primals)
    in_avals = _check_arrays(flat_p, "linear_transpose")
    flat_fun, store = _flatten_fun(fun, in_tree)
    closed = trace_to_jaxpr(flat_fun, in_avals, name="linear_transpose")
    out_tree = store[0][0]

    def transposed(ct):
        flat_ct = flatten_up_to(out_tree, ct, "linear_transpose cotangent")
        cts = backward_pass(closed.jaxpr, closed.consts, flat_ct)
        return tree_unflatten(in_tree, [zeros_tangent(a) if c is None else c for a, c in zip(in_avals, cts)])

    return transposed


# ------------------------------------------------------------------ grad ----

def _check_diff_inputs(leaves, name, holomorphic, allow_int, forward=False):
    """JAX's input rules: holomorphic needs complex inputs; reverse mode takes real or
    complex ones (integers with allow_int); forward mode (jacfwd) real ones only."""
    for x in leaves:
        if isinstance(x, Ref):
            raise TypeError(
                f"{name} cannot differentiate with respect to a Ref-typed argument, because the "
                "gradient for a ref must itself be accumulated into a ref. Differentiate with "
                "respect to its value instead (pass ref[...] and write the result back). (Ref "
                f"arguments not selected by {name}'s argnums are fine: they are treated as plumbing, "
                "and are not differentiated.)")
        a = aval_of(x)
        k = _kind(a.dtype)
        if holomorphic:
            if k != "c":
                raise FuncadTypeError(f"{name} with holomorphic=True needs complex inputs, got "
                                      f"{a.str_short()}; cast it (e.g. x.astype(complex))")
        elif forward and k == "c":
            raise FuncadTypeError(
                f"{name} needs real inputs, but got {a.str_short()}. For a holomorphic function "
                "pass holomorphic=True; for a non-holomorphic one of complex inputs use "
                "funcad.jvp directly (or funcad.jacrev).")
        elif k in "biu" and not allow_int:
            raise FuncadTypeError(
                f"{name} needs float inputs to differentiate with respect to, but got {a.str_short()}. "
                "Cast the argument to float (e.g. x.astype(float) or 1.0 instead of 1)"
                + (", or pass allow_int=True to get float0 zero gradients for it." if not forward else "."))


def _check_diff_outputs(leaves, name, holomorphic, forward=False):
    """JAX's output rules: holomorphic needs complex outputs; reverse mode needs real ones."""
    for x in leaves:
        a = aval_of(x)
        k = _kind(a.dtype)
        if holomorphic:
            if k != "c":
                raise FuncadTypeError(f"{name} with holomorphic=True needs complex outputs, but the "
                                      f"function returned {a.str_short()}")
        elif forward:
            continue
        elif k == "c":
            raise FuncadTypeError(
                f"{name} of a complex output {a.str_short()} needs holomorphic=True; for a "
                "non-holomorphic function with complex outputs use funcad.vjp directly, or "
                "differentiate the real and imaginary parts (fnp.real, fnp.imag) separately.")
        elif k != "f":
            raise FuncadTypeError(f"{name} needs float outputs, but the function returned "
                                  f"{a.str_short()}; use funcad.vjp directly for integer outputs")


def value_and_grad(fun: Callable, argnums=0, has_aux: bool = False, holomorphic: bool = False,
                   allow_int: bool = False, reduce_axes=()) -> Callable:
    """A function returning (fun(*args), gradient of fun w.r.t. args[argnums])
    (reduce_axes: removed in JAX; a non-empty value raises as JAX's).

    >>> import funcad, funcad.numpy as fnp
    >>> funcad.value_and_grad(lambda x: x ** 3)(2.0)
    (Array(8., dtype=float64, weak_type=True), Array(12., dtype=float64, weak_type=True))
    """
    _no_reduce_axes(reduce_axes, "grad")
    return _gradient_function(fun, argnums, has_aux, holomorphic, allow_int, True)


def _gradient_function(fun, argnums, has_aux, holomorphic, allow_int, with_value):
    """grad's function (value_and_grad's `with_value`). It runs vjp's steps itself and
    calls `fun` directly: one frame per level of a nested derivative (see Recording)."""

    @wraps(fun)
    def gradient_fun(*args, **kwargs):
        single, nums = argnums_positions(argnums, len(args), "grad")
        flat_p, in_tree = tree_flatten(tuple(args[i] for i in nums))
        _check_diff_inputs(flat_p, "grad", holomorphic, allow_int)
        rec = Recording(_x64.canonicalize_all(flat_p))
        with rec:
            out_flat, (out_tree, aux_tree, n) = _flat_output(
                fun(*with_args(args, nums, tree_unflatten(in_tree, rec.ins)), **kwargs), has_aux)
            p_out, backward = rec.outputs(out_flat)
        out = tree_unflatten(out_tree, p_out[:n])
        _check_scalar_output(out, holomorphic, out_tree)
        # grad's cotangent (ones) needs none of vjp's checks
        cts = backward([_ones_like(out)] + [None] * (len(p_out) - n))
        grads = tree_unflatten(in_tree, _input_cts([aval_of(p) for p in flat_p], cts))
        g = grads[0] if single else grads
        if with_value:
            return ((out, tree_unflatten(aux_tree, p_out[n:])), g) if has_aux else (out, g)
        return (g, tree_unflatten(aux_tree, p_out[n:])) if has_aux else g

    return gradient_fun


def _check_scalar_output(out, holomorphic, out_tree=None):
    if isinstance(out, Tracer) or not (out_tree or tree_structure(out)).kind:
        a = aval_of(out)
    else:
        raise FuncadTypeError(f"grad needs a function that returns a scalar, but it returned a "
                              f"{type(out).__name__}. Return one scalar (use has_aux=True to return "
                              "extra values alongside it).")
    if a.shape != ():
        raise FuncadTypeError(
            f"grad needs a scalar output, but the function returned {a.str_short()}. Reduce it to "
            "a scalar (e.g. `.sum()`), or use funcad.jacrev/funcad.vjp for non-scalar outputs.")
    _check_diff_outputs([out], "grad", holomorphic)


def _ones_like(x):
    a = aval_of(x)
    return weakly(full(a.shape, 1, a.dtype), a.weak_type)  # the seed is as weak as the output


def grad(fun: Callable, argnums=0, has_aux: bool = False, holomorphic: bool = False,
         allow_int: bool = False, reduce_axes=()) -> Callable:
    """The gradient of a scalar function, by reverse mode (reduce_axes: removed in JAX;
    a non-empty value raises as JAX's).

    >>> import funcad, funcad.numpy as fnp
    >>> funcad.grad(fnp.sin)(0.0)
    Array(1., dtype=float64, weak_type=True)
    """
    _no_reduce_axes(reduce_axes, "grad")
    return _gradient_function(fun, argnums, has_aux, holomorphic, allow_int, False)


def make_jaxpr(fun: Callable, static_argnums=(), axis_env=None, return_shape: bool = False,
               optimize: bool = False) -> Callable:
    """A function that returns the jaxpr of `fun` at the given arguments (and, with
    `return_shape`, the output's ShapeDtypeStructs). With `optimize=True` the jaxpr is
    simplified first (see funcad.optimize). `axis_env`, a sequence of (axis name, size)
    pairs, binds named axes for the collectives in `fun` (as under pmap), as JAX's.

    >>> import funcad, funcad.numpy as fnp
    >>> print(funcad.make_jaxpr(lambda x: fnp.sin(x) * 2.0)(1.0))
    { lambda ; a:f64[]. let
        b:f64[] = sin a
        c:f64[] = mul b 2.0:f64[]
      in (c,) }
    """
    staged = staging.make_jaxpr(fun, static_argnums, return_shape)
    if axis_env:
        frames = [AxisFrame(name, int(size), "pmap", False) for name, size in axis_env]
        plain = staged

        @wraps(fun)
        def staged(*args, **kwargs):
            with bind_axes(frames):
                return plain(*args, **kwargs)
    if not optimize:
        return staged

    @wraps(fun)
    def optimized(*args, **kwargs):
        out = staged(*args, **kwargs)
        if return_shape:
            return optimize_jaxpr(out[0]), out[1]
        return optimize_jaxpr(out)
    return optimized
