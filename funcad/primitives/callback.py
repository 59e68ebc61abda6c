"""`pure_callback_p`: a call of a Python function on host NumPy arrays, as JAX's
pure_callback. Eagerly it is the call; under jit it lowers to jaxlib's host-callback
custom call (`xla_ffi_python_cpu_callback`, the callback handed to the compiler with the
program, see lowering/xla.py); under vmap it follows `vmap_method`; it has no derivative
(wrap it in custom_jvp/custom_vjp), as in JAX."""
from __future__ import annotations

from ..core.trace import sharding_rules as _sharding_rules
from ..core.typed_sharding import BY_SHAPE_RULE as _BY_SHAPE_RULE
import numpy as np

from ..core.avals import ShapedArray
from ..core.eager import wrap
from ..core.errors import FuncadTypeError, FuncadValueError
from ..core.trace import batch_rules, jvp_rules, lowering_rules
from ._base import new_primitive
from .structural import broadcast_in_dim
from .structural import moveaxis0

__all__ = ["pure_callback_p", "VMAP_METHODS"]

VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                "legacy_vectorized", None)


def host_array(x):
    """What a user's callback receives, as JAX's callbacks receive `jax.Array`s: an
    (immutable) funcad array holding its own copy, so it may be kept after the call."""
    return wrap(np.array(x))


def _checked(callback, result_avals, args, name: str = "pure_callback"):
    """callback(*args) as a tuple of NumPy arrays of exactly the declared shapes/dtypes."""
    outs = callback(*[host_array(a) for a in args])
    outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
    if len(outs) != len(result_avals):
        raise FuncadValueError(f"{name}: the callback returned {len(outs)} values, but "
                               f"result_shape_dtypes declares {len(result_avals)}")
    res = []
    for i, (o, a) in enumerate(zip(outs, result_avals)):
        o = np.asarray(o)
        if o.shape != a.shape:
            raise FuncadValueError(f"{name}: result {i} of the callback has shape {o.shape}, "
                                   f"but result_shape_dtypes declares {a.shape}")
        if o.dtype != a.dtype:
            raise FuncadTypeError(f"{name}: result {i} of the callback has dtype {o.dtype}, "
                                  f"but result_shape_dtypes declares {a.dtype}; convert it with "
                                  ".astype in the callback")
        res.append(o)
    return tuple(res)


def _impl(*args, callback, result_avals, vmap_method):
    return list(_checked(callback, result_avals, args))


def _abstract(*avals, callback, result_avals, vmap_method):
    return list(result_avals)


pure_callback_p = new_primitive("pure_callback", _impl, _abstract, multiple_results=True)
_sharding_rules[pure_callback_p] = _BY_SHAPE_RULE  # the user's result types, not split


def _no_jvp(primals, tangents, **params):
    raise FuncadValueError("Pure callbacks do not support JVP. Please use `funcad.custom_jvp` "
                           "(or custom_vjp) to use callbacks while taking gradients.")


jvp_rules[pure_callback_p] = _no_jvp


class _Sequential:
    """The callback applied to each batch entry in turn (vmap_method="sequential"): the
    batched arguments carry the batch on axis 0."""

    def __init__(self, callback, batched, result_avals):
        self.callback, self.batched, self.result_avals = callback, tuple(batched), result_avals

    def __call__(self, *args):
        n = next(a.shape[0] for a, b in zip(args, self.batched) if b)
        rows = [_checked(self.callback, self.result_avals,
                         [a[k] if b else a for a, b in zip(args, self.batched)]) for k in range(n)]
        return tuple(np.stack([r[i] for r in rows]) if rows else
                     np.zeros((0,) + av.shape, av.dtype) for i, av in enumerate(self.result_avals))


def _batch(vals, dims, *, axis_size, callback, result_avals, vmap_method):
    args = [v if d is None else moveaxis0(v, d, axis_size) for v, d in zip(vals, dims)]
    batched_avals = tuple(ShapedArray((axis_size,) + a.shape, a.dtype) for a in result_avals)
    if vmap_method in ("sequential", "sequential_unrolled"):
        cb = _Sequential(callback, [d is not None for d in dims], result_avals)
        outs = pure_callback_p.bind(*args, callback=cb, result_avals=batched_avals, vmap_method=vmap_method)
    elif vmap_method in ("expand_dims", "broadcast_all"):
        size = axis_size if vmap_method == "broadcast_all" else 1
        args = [a if d is not None else
                broadcast_in_dim(a, (size,) + tuple(np.shape(a)), tuple(range(1, np.ndim(a) + 1)))
                for a, d in zip(args, dims)]
        outs = pure_callback_p.bind(*args, callback=callback, result_avals=batched_avals,
                                    vmap_method=vmap_method)
    elif vmap_method == "legacy_vectorized":
        outs = pure_callback_p.bind(*args, callback=callback, result_avals=batched_avals,
                                    vmap_method=vmap_method)
    else:
        raise FuncadValueError(
            "vmap of pure_callback needs vmap_method: one of 'sequential' (call it per batch "
            "entry), 'expand_dims' (call it once, unbatched arguments with a size-1 leading axis) "
            "or 'broadcast_all' (unbatched arguments broadcast to the batch)")
    return outs, [0] * len(outs)


batch_rules[pure_callback_p] = _batch


def _lower(ctx, *operands, callback, result_avals, vmap_method):
    if ctx.module.platform != "cpu":
        raise FuncadValueError("pure_callback under jit runs on the CPU only in funcad; jit the "
                               "program for the CPU backend or call the function eagerly")
    index = ctx.module.add_host_callback(lambda *args: _checked(callback, result_avals, args))
    fields = ['call_target_name = "xla_ffi_python_cpu_callback"', "api_version = 4 : i32",
              f"backend_config = {{index = {index} : ui64}}", "has_side_effect = false"]
    part, manual = ctx.module.partition, getattr(ctx.module, "manual", None)
    placed = part.host_call_attr(manual[-1] if manual else None, ctx.out_avals) \
        if part is not None and len(part.assignment) > 1 else ""
    return ctx.op("stablehlo.custom_call", operands, ctx.out_avals, ", ".join(fields),
                  discardable=placed)


lowering_rules[pure_callback_p] = _lower
