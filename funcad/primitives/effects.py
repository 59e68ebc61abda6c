"""Effectful host callbacks, as JAX's: `debug_callback_p` (funcad.debug.callback) and
`io_callback_p` (funcad.experimental.io_callback).

Both call a Python function on host arrays: eagerly at once, under jit through jaxlib's
host-callback custom call (as pure_callback, primitives/callback.py) marked
`has_side_effect`, so neither the optimiser (`register_effect`) nor XLA removes them.
Within one block of the program (the body of @main, of a loop or of a cond branch) the
calls are chained by a `!stablehlo.token`, so XLA keeps them in program order.

Under vmap each is called once per batch entry, in order (JAX unrolls debug callbacks and
maps io callbacks sequentially); an ordered io_callback cannot be batched (JAX's error).
Under jvp a debug callback sees the primal values and is not called on tangents; an io
callback has no derivative.
"""
from __future__ import annotations


from ..core.trace import sharding_rules as _sharding_rules
from ..core.typed_sharding import BY_SHAPE_RULE as _BY_SHAPE_RULE
import numpy as np

from ..core.avals import ShapedArray
from ..core.errors import FuncadValueError, UnsupportedError
from ..core.trace import abstract_eval_rules, batch_rules, impl_rules, jvp_rules, lowering_rules
from ..core.trace import Primitive, transpose_rules
from ..lowering.stablehlo import Value, block_token, tensor_type, token_effects
from .callback import _checked
from .structural import moveaxis0

__all__ = ["debug_callback_p", "io_callback_p"]


class _PerEntry:
    """`callback` called once per batch entry, in JAX's order, with the arguments of each.

    `levels` holds, per vmap level (the first vmapped first), which arguments that level
    batches. An argument carries its levels' axes leading, the last vmapped outermost (each
    batch rule moves its axis to 0). As JAX, which unrolls the first vmapped level outermost,
    the loop over the first level is the outer one. With `result_avals` (an io callback) the
    entries' results come back stacked on the leading axes, the last level's first."""

    def __init__(self, callback, levels, result_avals=None):
        self.callback, self.levels, self.result_avals = callback, tuple(levels), result_avals

    def nested(self, batched) -> _PerEntry:
        """This with one more (outer) vmap level, batching the arguments `batched`."""
        return _PerEntry(self.callback, self.levels + (tuple(batched),), self.result_avals)

    def __call__(self, *args):
        outs = {}
        self._loop(0, list(args), (), outs)
        if self.result_avals is None:
            return ()
        sizes = [0] * len(self.levels)
        for idx in outs:
            sizes = [max(s, i + 1) for s, i in zip(sizes, idx)]
        res = []
        for i, av in enumerate(self.result_avals):
            r = np.zeros(tuple(reversed(sizes)) + av.shape, av.dtype)
            for idx, vals in outs.items():
                r[tuple(reversed(idx))] = vals[i]
            res.append(r)
        return tuple(res)

    def _loop(self, level, args, idx, outs):
        if level == len(self.levels):
            if self.result_avals is None:
                self.callback(*args)
            else:
                outs[idx] = _checked(self.callback, self.result_avals, args, "io_callback")
            return
        batched = self.levels[level]
        # after the older levels' axes are sliced off, this level's axis follows the newer ones'
        axes = [sum(lv[k] for lv in self.levels[level + 1:]) for k in range(len(args))]
        n = next(np.shape(a)[ax] for a, b, ax in zip(args, batched, axes) if b)
        for j in range(n):
            row = [np.take(a, j, axis=ax) if b else a for a, b, ax in zip(args, batched, axes)]
            self._loop(level + 1, row, idx + (j,), outs)


def _per_entry(callback, dims, result_avals=None) -> _PerEntry:
    batched = [d is not None for d in dims]
    if isinstance(callback, _PerEntry):
        return callback.nested(batched)
    return _PerEntry(callback, [batched], result_avals)


def _batched_args(vals, dims):
    axis_size = next(np.shape(v)[d] if not hasattr(v, "aval") else v.aval.shape[d]
                     for v, d in zip(vals, dims) if d is not None)
    return [v if d is None else moveaxis0(v, d, axis_size) for v, d in zip(vals, dims)], axis_size


def _lower_effect(ctx, operands, fn, out_avals):
    """The host call of `fn` on `operands` with side effects, threaded on the block's token."""
    if ctx.module.platform != "cpu":
        raise UnsupportedError("funcad's debug.callback and io_callback run under jit on the CPU "
                               "only; jit the program for the CPU backend or call it eagerly")
    if len(getattr(ctx.module, "assignment", None) or ()) > 1:
        raise UnsupportedError("debug.callback and io_callback cannot be compiled into a program "
                               "over several devices in funcad; call them outside it")
    index = ctx.module.add_host_callback(lambda token, *args: (token, *fn(*args)))
    indent = " " * ctx.indent
    token = block_token(ctx)
    res = ctx.module.fresh()
    n = len(out_avals) + 1
    ins = ", ".join([token] + [v.name for v in operands])
    in_types = ", ".join(["!stablehlo.token"] + [tensor_type(v.aval) for v in operands])
    out_types = ", ".join(["!stablehlo.token"] + [tensor_type(a) for a in out_avals])
    # One device: `partitioned` (local shards, no all-gather) changes nothing.
    attrs = ('call_target_name = "xla_ffi_python_cpu_callback", api_version = 4 : i32, '
             f"backend_config = {{index = {index} : ui64}}, has_side_effect = true")
    lhs = res if n == 1 else f"{res}:{n}"
    ctx.lines.append(f'{indent}{lhs} = "stablehlo.custom_call"({ins}) <{{{attrs}}}> : '
                     f"({in_types}) -> ({out_types})")
    if n == 1:
        ctx.token = res
        return []
    ctx.token = f"{res}#0"
    return [Value(f"{res}#{i + 1}", a) for i, a in enumerate(out_avals)]


# ------------------------------------------------------------ debug_callback ----

debug_callback_p = Primitive("debug_callback", multiple_results=True)


def _debug_impl(*args, callback, ordered, partitioned):
    callback(*args)
    return []


def _debug_jvp(primals, tangents, **params):
    return debug_callback_p.bind(*primals, **params), []  # tangents are not called back


def _debug_batch(vals, dims, *, axis_size, callback, ordered, partitioned):
    args, _ = _batched_args(vals, dims)
    return debug_callback_p.bind(*args, callback=_per_entry(callback, dims),
                                 ordered=ordered, partitioned=partitioned), []


def _debug_lower(ctx, *args, callback, ordered, partitioned):
    def call(*xs):
        callback(*xs)
        return ()
    return _lower_effect(ctx, args, call, [])


impl_rules[debug_callback_p] = _debug_impl
abstract_eval_rules[debug_callback_p] = lambda *avals, **params: []
_sharding_rules[debug_callback_p] = _BY_SHAPE_RULE  # no results
jvp_rules[debug_callback_p] = _debug_jvp
transpose_rules[debug_callback_p] = lambda cts, *args, **params: [None] * len(args)
batch_rules[debug_callback_p] = _debug_batch
lowering_rules[debug_callback_p] = _debug_lower


# --------------------------------------------------------------- io_callback ----

io_callback_p = Primitive("io_callback", multiple_results=True)


def _io_impl(*args, callback, result_avals, sharding, ordered):
    return list(_checked(callback, result_avals, args, "io_callback"))


def _io_jvp(primals, tangents, **params):
    raise FuncadValueError("IO callbacks do not support JVP. Wrap the io_callback in "
                           "funcad.custom_jvp (or custom_vjp) to give it a derivative, or "
                           "stop_gradient its arguments.")


def _io_batch(vals, dims, *, axis_size, callback, result_avals, sharding, ordered):
    if ordered:
        raise FuncadValueError("Cannot `vmap` ordered IO callback. Use ordered=False (each batch "
                               "entry is then called back in turn) or call it outside vmap.")
    args, n = _batched_args(vals, dims)
    per_entry = _per_entry(callback, dims, result_avals)
    avals = tuple(ShapedArray((n,) + a.shape, a.dtype) for a in result_avals)
    outs = io_callback_p.bind(*args, callback=per_entry, result_avals=avals, sharding=sharding,
                              ordered=ordered)
    return outs, [0] * len(outs)


def _io_lower(ctx, *args, callback, result_avals, sharding, ordered):
    return _lower_effect(ctx, args, lambda *xs: _checked(callback, result_avals, xs, "io_callback"),
                         ctx.out_avals)


impl_rules[io_callback_p] = _io_impl
abstract_eval_rules[io_callback_p] = lambda *avals, result_avals, **params: list(result_avals)
_sharding_rules[io_callback_p] = _BY_SHAPE_RULE  # the user's result types, not split
jvp_rules[io_callback_p] = _io_jvp
batch_rules[io_callback_p] = _io_batch
lowering_rules[io_callback_p] = _io_lower
token_effects.update((debug_callback_p, io_callback_p))  # XLA keeps them in program order
