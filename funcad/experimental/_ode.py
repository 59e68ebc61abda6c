"""odeint: adaptive Dormand–Prince integration with an adjoint gradient, as JAX's
`jax.experimental.ode.odeint`.

The forward pass is the Dormand–Prince 5(4) Runge–Kutta method with Hairer, Nørsett
and Wanner's initial step (Solving ODEs I, II.4), an RMS error norm, step-size control
by the error ratio, and a fourth-order dense-output polynomial evaluated at each
requested time: the same scheme, constants and operation order as JAX's, so the
values agree with JAX's to rounding. Reverse mode is the adjoint method (Chen et al.
2018, appendix C): a custom_vjp whose backward pass integrates the augmented system
(state, state cotangent, time cotangent, argument cotangents) backwards in time
between consecutive output times, with the same solver.

Everything is written with funcad.numpy and funcad.lax, so it runs eagerly, under
jit, vmap and grad-of-jit; the state is raveled into one flat vector internally.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .. import lax
from .. import numpy as fnp
from ..transforms.closure import closure_convert
from ..transforms.tracing import eval_shape
from ..core.avals import aval_of
from ..core.errors import FuncadTypeError
from ..core.pytree import tree_flatten, tree_unflatten
from ..numpy._jax_dtypes import issubdtype, result_type
from ..transforms.api import vjp
from ..transforms.custom import custom_vjp

__all__ = ["odeint"]  # re-exported by funcad.experimental.ode

_HIGHEST = "highest"  # JAX's odeint runs under default_matmul_precision("highest")

# Dormand–Prince 5(4) tableau.
_ALPHA = [1 / 5, 3 / 10, 4 / 5, 8 / 9, 1., 1., 0]
_BETA = [[1 / 5, 0, 0, 0, 0, 0, 0],
         [3 / 40, 9 / 40, 0, 0, 0, 0, 0],
         [44 / 45, -56 / 15, 32 / 9, 0, 0, 0, 0],
         [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0, 0, 0],
         [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0, 0],
         [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0]]
_C_SOL = [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0]
_C_ERROR = [35 / 384 - 1951 / 21600, 0, 500 / 1113 - 22642 / 50085, 125 / 192 - 451 / 720,
            -2187 / 6784 - -12231 / 42400, 11 / 84 - 649 / 6300, -1. / 60.]
# Shampine's midpoint weights for the dense output, halved.
_C_MID = [6025192743 / 30085553152 / 2, 0, 51252292925 / 65400821598 / 2,
          -2691868925 / 45128329728 / 2, 187940372067 / 1594534317056 / 2,
          -1776094331 / 19743644256 / 2, 11237099 / 235043384 / 2]


# ------------------------------------------------------------ raveling ----

def _ravel(tree) -> tuple[Any, Callable]:
    """The leaves of `tree` as one flat vector of their common dtype, and the inverse.

    The inverse also accepts a stack of such vectors (leading axes are kept), and
    casts each leaf back to its own dtype (a complex vector gives real leaves their
    real part).
    """
    leaves, tree_def = tree_flatten(tree)
    avals = [aval_of(x) for x in leaves]
    dtypes = [np.dtype(a.dtype) for a in avals]
    dtype = result_type(*dtypes) if dtypes else result_type(float)
    sizes = [math.prod(a.shape) for a in avals]
    flat = (fnp.concatenate([fnp.ravel(fnp.asarray(x, dtype)) for x in leaves])
            if leaves else fnp.zeros((0,), dtype))

    def unravel(vec):
        lead, out, start = vec.shape[:-1], [], 0
        for a, d, n in zip(avals, dtypes, sizes):
            chunk = fnp.reshape(vec[..., start:start + n], lead + tuple(a.shape))
            if fnp.iscomplexobj(chunk) and not issubdtype(d, np.complexfloating):
                chunk = fnp.real(chunk)
            out.append(lax.convert_element_type(chunk, d))
            start += n
        return tree_unflatten(tree_def, out)

    return flat, unravel


def _raveled_func(func: Callable, unravel: Callable) -> Callable:
    def raveled(y_flat, *args):
        return _ravel(func(unravel(y_flat), *args))[0]
    return raveled


# ------------------------------------------------------------ the solver ----

def _abs2(x):
    return fnp.real(x) ** 2 + fnp.imag(x) ** 2 if fnp.iscomplexobj(x) else x ** 2


def _initial_step_size(fun, t0, y0, order, rtol, atol, f0):
    # Hairer, Nørsett & Wanner, Solving ODEs I, section II.4.
    dtype = result_type(y0.dtype, f0.dtype)
    y0, f0 = fnp.asarray(y0, dtype), fnp.asarray(f0, dtype)
    scale = atol + fnp.abs(y0) * rtol
    d0 = fnp.linalg.norm(y0 / scale.astype(dtype))
    d1 = fnp.linalg.norm(f0 / scale.astype(dtype))
    # The `where`s below keep JAX's values; their guards only stop the discarded branch
    # from dividing by zero (which eager NumPy would warn about).
    small = (d0 < 1e-5) | (d1 < 1e-5)
    h0 = fnp.where(small, 1e-6, 0.01 * d0 / fnp.where(small, 1.0, d1))
    y1 = y0 + h0.astype(dtype) * f0
    f1 = fun(y1, t0 + h0)
    d2 = fnp.linalg.norm((f1 - f0) / scale.astype(dtype)) / h0
    flat = (d1 <= 1e-15) & (d2 <= 1e-15)
    h1 = fnp.where(flat,
                   fnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / fnp.where(flat, 1.0, fnp.maximum(d1, d2))) ** (1. / (order + 1.)))
    return fnp.minimum(100. * h0, h1)


def _runge_kutta_step(func, y0, f0, t0, dt):
    alpha = fnp.asarray(_ALPHA, dt.dtype)
    beta = fnp.asarray(_BETA, f0.dtype)
    dt_f = dt.astype(f0.dtype)
    k = fnp.zeros((7, f0.shape[0]), f0.dtype).at[0, :].set(f0)
    for i in range(1, 7):
        ti = t0 + dt * alpha[i - 1]
        yi = y0 + dt_f * fnp.dot(beta[i - 1, :], k, precision=_HIGHEST)
        k = k.at[i, :].set(func(yi, ti))
    y1 = dt_f * fnp.dot(fnp.asarray(_C_SOL, f0.dtype), k, precision=_HIGHEST) + y0
    y1_error = dt_f * fnp.dot(fnp.asarray(_C_ERROR, f0.dtype), k, precision=_HIGHEST)
    return y1, k[-1], y1_error, k


def _interp_fit(y0, y1, k, dt):
    """Coefficients of the quartic through the step: values, midpoint and end slopes."""
    dt = dt.astype(y0.dtype)
    y_mid = y0 + dt * fnp.dot(fnp.asarray(_C_MID, y0.dtype), k, precision=_HIGHEST)
    dy0, dy1 = k[0], k[-1]
    a = -2. * dt * dy0 + 2. * dt * dy1 - 8. * y0 - 8. * y1 + 16. * y_mid
    b = 5. * dt * dy0 - 3. * dt * dy1 + 18. * y0 + 14. * y1 - 32. * y_mid
    c = -4. * dt * dy0 + dt * dy1 - 11. * y0 - 5. * y1 + 16. * y_mid
    d = dt * dy0
    return fnp.stack([a, b, c, d, y0]).astype(y0.dtype)


def _mean_error_ratio(error_estimate, rtol, atol, y0, y1):
    err_tol = atol + rtol * fnp.maximum(fnp.abs(y0), fnp.abs(y1))
    err_ratio = error_estimate / err_tol.astype(error_estimate.dtype)
    return fnp.sqrt(fnp.mean(_abs2(err_ratio)))


def _optimal_step_size(last_step, mean_error_ratio, safety=0.9, ifactor=10.0, dfactor=0.2,
                       order=5.0):
    dfactor = fnp.where(mean_error_ratio < 1, 1.0, dfactor)
    zero = mean_error_ratio == 0
    ratio = fnp.where(zero, 1.0, mean_error_ratio)  # 0 ** -0.2 would be discarded anyway
    factor = fnp.minimum(ifactor, fnp.maximum(ratio ** (-1.0 / order) * safety, dfactor))
    return fnp.where(zero, last_step * ifactor, last_step * factor)


def _solve(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    """The flat integration: y0 a vector, the result one row per time in ts."""
    def f(y, t):
        return func(y, t, *args)

    def scan_fun(carry, target_t):
        def cond_fun(state):
            i, _, _, t, dt, _, _ = state
            return (t < target_t) & (i < mxstep) & (dt > 0)

        def body_fun(state):
            i, y, fy, t, dt, last_t, interp_coeff = state
            next_y, next_f, next_y_error, k = _runge_kutta_step(f, y, fy, t, dt)
            next_t = t + dt
            error_ratio = _mean_error_ratio(next_y_error, rtol, atol, y, next_y)
            new_interp_coeff = _interp_fit(y, next_y, k, dt)
            dt = fnp.clip(_optimal_step_size(dt, error_ratio), 0., hmax)
            accept = error_ratio <= 1.
            new = [i + 1, next_y, next_f, next_t, dt, t, new_interp_coeff]
            old = [i + 1, y, fy, t, dt, last_t, interp_coeff]
            return [fnp.where(accept, a, b) for a, b in zip(new, old)]

        _, *carry = lax.while_loop(cond_fun, body_fun, [0] + carry)
        _, _, t, _, last_t, interp_coeff = carry
        relative_output_time = (target_t - last_t) / (t - last_t)
        y_target = fnp.polyval(interp_coeff, relative_output_time.astype(interp_coeff.dtype))
        return carry, y_target

    f0 = f(y0, ts[0])
    dt = fnp.clip(_initial_step_size(f, ts[0], y0, 4, rtol, atol, f0), 0., hmax)
    interp_coeff = fnp.stack([y0] * 5)
    _, ys = lax.scan(scan_fun, [y0, f0, ts[0], dt, ts[0], interp_coeff], ts[1:])
    return fnp.concatenate((y0[None], ys))


def _solve_fwd(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    ys = _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _solve_bwd(func, rtol, atol, mxstep, hmax, res, g):
    ys, ts, args = res
    arg_leaves, arg_tree = tree_flatten(args)
    # Only inexact arguments have cotangents; integer ones ride along unchanged.
    diff = [issubdtype(aval_of(a).dtype, np.inexact) for a in arg_leaves]

    def aug_dynamics(state, t, *leaves):
        # `t` is negated time: the augmented system runs backwards. The arguments come in
        # as odeint's own (not closed over: the staged rule outlives this trace).
        y, y_bar, *_ = state

        def call(y_, t_, *d):
            it = iter(d)
            full = [next(it) if dd else a for a, dd in zip(leaves, diff)]
            return func(y_, t_, *tree_unflatten(arg_tree, full))
        y_dot, pullback = vjp(call, y, -t, *[a for a, d in zip(leaves, diff) if d])
        return (-y_dot, *pullback(y_bar))

    diff_leaves = [a for a, d in zip(arg_leaves, diff) if d]
    t_bar_dtype = fnp.real(g[-1]).dtype

    def at(x, i):
        # x may be a plain NumPy array, whose own indexing cannot take a traced index.
        return lax.dynamic_index_in_dim(x, i, keepdims=False)

    def scan_fun(carry, i):
        y_bar, t0_bar, args_bar = carry
        y_i, t_i, t_prev = at(ys, i), at(ts, i), at(ts, i - 1)
        # The effect of moving the measurement time; time is real.
        t_bar = fnp.real(fnp.dot(func(y_i, t_i, *args), at(g, i), precision=_HIGHEST))
        t0_bar = t0_bar - t_bar
        _, y_bar, t0_bar, args_bar = odeint(
            aug_dynamics, (y_i, y_bar, t0_bar, args_bar), fnp.stack([-t_i, -t_prev]),
            *arg_leaves, rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax)
        y_bar, t0_bar = y_bar[1], t0_bar[1]
        args_bar = [a[1] for a in args_bar]
        return (y_bar + at(g, i - 1), t0_bar, args_bar), t_bar

    init = (g[-1], fnp.zeros((), t_bar_dtype), [fnp.zeros_like(a) for a in diff_leaves])
    (y_bar, t0_bar, args_bar), rev_ts_bar = lax.scan(
        scan_fun, init, fnp.arange(ts.shape[0] - 1, 0, -1))
    ts_bar = fnp.concatenate([t0_bar[None], rev_ts_bar[::-1]]).astype(ts.dtype)
    it = iter(args_bar)
    arg_cts = [next(it) if d else fnp.zeros_like(a) for a, d in zip(arg_leaves, diff)]
    return (y_bar, ts_bar, *tree_unflatten(arg_tree, arg_cts))


_solve.__name__ = _solve.__qualname__ = "odeint"  # how errors (jvp of a custom_vjp) name it
_odeint = custom_vjp(_solve, nondiff_argnums=(0, 1, 2, 3, 4))
_odeint.defvjp(_solve_fwd, _solve_bwd)


# ------------------------------------------------------------ public API ----

def odeint(func: Callable, y0, t, *args, rtol: float = 1.4e-8, atol: float = 1.4e-8,
           mxstep: float = math.inf, hmax: float = math.inf):
    """Integrate `dy/dt = func(y, t, *args)` from `y0` at `t[0]`, returning `y` at each time in `t`.

    JAX's `jax.experimental.ode.odeint`: adaptive Dormand–Prince (5th order with a
    4th-order error estimate), dense output at the requested times, and reverse-mode
    derivatives w.r.t. `y0`, `t` and `args` by the adjoint method.

    Args:
      func: `func(y, t, *args)`, returning the derivative with `y`'s structure.
      y0: the initial state, an array or a pytree of arrays (floating or complex).
      t: 1-D array of float times, strictly increasing.
      *args: extra arguments for `func`: arrays, scalars or pytrees of them.
      rtol, atol: relative and absolute local error tolerances.
      mxstep: most steps (accepted or rejected) taken between consecutive times in
        `t`; the solver then returns what it has.
      hmax: largest step size.

    Returns:
      `y` at each time: `y0`'s structure with a leading axis of length `len(t)`.

    >>> import numpy as np, funcad, funcad.numpy as fnp
    >>> ts = np.array([0.0, 1.0])
    >>> ys = odeint(lambda y, t, k: -k * y, 1.0, ts, 2.0)
    >>> round(float(ys[1]), 6)  # exp(-2)
    0.135335
    >>> g = funcad.grad(lambda k: odeint(lambda y, t, k: -k * y, 1.0, ts, k)[1])(2.0)
    >>> round(float(g), 6)  # -exp(-2)
    -0.135335
    """
    if not callable(func):
        raise FuncadTypeError(f"odeint: func must be a callable func(y, t, *args), got "
                              f"{type(func).__name__} {func!r:.60}")
    for arg in tree_flatten(args)[0]:
        try:
            aval_of(arg)
        except (FuncadTypeError, TypeError):
            raise FuncadTypeError(
                f"The contents of odeint *args must be arrays or scalars, but got {arg}. "
                "Close over other values in func instead.") from None
    if isinstance(t, (list, tuple)):
        t = fnp.asarray(t)
    t_aval = aval_of(t)
    if not issubdtype(t_aval.dtype, np.floating):
        raise FuncadTypeError(f"t must be an array of floats, but got {t}.")
    if t_aval.ndim != 1 or t_aval.shape[0] == 0:
        raise FuncadTypeError(f"odeint: t must be a non-empty 1-D array of times, got shape "
                              f"{t_aval.shape}")
    y_leaves = tree_flatten(y0)[0]
    for y in y_leaves:
        if not issubdtype(aval_of(y).dtype, np.inexact):
            raise FuncadTypeError(
                f"odeint: y0 must hold floating-point or complex arrays, got a leaf of dtype "
                f"{aval_of(y).dtype}; pass floats (1.0, not 1)")
    t = fnp.asarray(t)
    y_flat, unravel = _ravel(y0)
    # The step size has the state's real dtype; t must be at least as wide to carry t + dt.
    real = fnp.real(fnp.zeros((), y_flat.dtype)).dtype
    t = t.astype(result_type(t.dtype, real))
    converted, consts = closure_convert(func, y0, t[0], *args)
    flat_func = _raveled_func(converted, unravel)
    f_dtype = eval_shape(flat_func, y_flat, t[0], *args, *consts).dtype
    if result_type(f_dtype, y_flat.dtype) != y_flat.dtype:
        raise FuncadTypeError(
            f"odeint: func returns {f_dtype} values for a state of dtype {y_flat.dtype}; "
            f"its output must not be wider than y0 (cast it in func, or pass y0 as {f_dtype})")
    ys = _odeint(flat_func, rtol, atol, mxstep, hmax, y_flat, t, *args, *consts)
    return unravel(ys)
