"""Tokens and DCE sinks, as JAX's `lax.create_token`, `lax.after_all` and `lax.dce_sink`.

A token is a value with no data that orders side effects in XLA. funcad orders its own
effects (debug.callback, io_callback) itself, so a user's token orders nothing; it is a
value of type `Tok` that flows through jit, grad and vmap like any other, as JAX's. Its
type is a `ShapedArray` of shape (0,) and dtype bool (so every transform and the jit
runtime carry it as an empty array) that prints as `Tok`; it lowers as `tensor<0xi1>`.

`dce_sink(x)` marks `x` as used: the passes (transforms/passes, `register_effect`) keep
the equations that compute it. With `prevent_mlir_dce=True` it lowers to jaxlib's
side-effecting `dce_sink` custom call, so XLA keeps the computation too, as JAX (jaxlib
0.6, which lacks it, gets a side-effecting host call that does nothing).
"""
from __future__ import annotations


from ..core.trace import sharding_rules as _sharding_rules
from ..core.typed_sharding import BY_SHAPE_RULE as _BY_SHAPE_RULE
import functools

import numpy as np

from ..core.avals import ShapedArray
from ..core.errors import FuncadTypeError
from ..core.trace import abstract_eval_rules, batch_rules, impl_rules, jvp_rules, lowering_rules
from ..core.trace import Primitive, transpose_rules
from ..lowering.stablehlo import tensor_type
from ._base import check_eagerly, defpython, defzero, new_primitive
from ..lowering import xla
from .effects import _lower_effect

__all__ = ["Token", "TokenAval", "abstract_token", "create_token_p", "after_all_p", "dce_sink_p",
           "is_token"]


class TokenAval(ShapedArray):
    """The type of a token: no data; printed `Tok` as in JAX's jaxprs."""

    __slots__ = ()

    def __init__(self):
        super().__init__((0,), np.bool_)

    def update(self, shape=None, dtype=None, weak_type=None) -> ShapedArray:
        if shape in (None, (0,)) and dtype in (None, np.bool_) and not weak_type:
            return self
        return ShapedArray((0,) if shape is None else shape, np.bool_ if dtype is None else dtype,
                           bool(weak_type))

    def str_short(self) -> str:
        return "Tok"

    def __eq__(self, other):
        return isinstance(other, TokenAval)

    def __hash__(self):
        return hash("Tok")

    def __repr__(self):
        return "AbstractToken()"


abstract_token = TokenAval()


class Token:
    """An eager token value (what `funcad.lax.create_token()` returns outside jit)."""

    __slots__ = ()
    aval = abstract_token
    shape, dtype = (0,), np.dtype(np.bool_)

    def __array__(self, dtype=None, copy=None):
        return np.zeros((0,), np.bool_ if dtype is None else dtype)

    def __repr__(self):
        return "Token()"


def is_token(x) -> bool:
    return isinstance(getattr(x, "aval", None), TokenAval)


def _check_tokens(*avals):
    bad = [a.str_short() for a in avals if not isinstance(a, TokenAval)]
    if bad:
        raise FuncadTypeError(f"Arguments to after_all must be tokens, got {', '.join(bad)}. "
                              "Make tokens with funcad.lax.create_token().")
    return abstract_token


def _empty_token(ctx, *args, **params):
    return ctx.op1("stablehlo.constant", [], abstract_token,
                   f"value = dense<> : {tensor_type(abstract_token)}")


create_token_p = new_primitive("create_token", lambda: Token(), lambda: abstract_token)
after_all_p = new_primitive("after_all", lambda *toks: Token(), _check_tokens)
_sharding_rules[create_token_p] = _sharding_rules[after_all_p] = _BY_SHAPE_RULE  # tokens
for _p in (create_token_p, after_all_p):
    defzero(_p)
    lowering_rules[_p] = _empty_token
    defpython(_p, lambda eqn, ins: "np.zeros((0,), np.bool_)")
check_eagerly(after_all_p)  # the eager impl would accept any value
batch_rules[create_token_p] = lambda vals, dims, *, axis_size: (create_token_p.bind(), None)
# A token has no batch axis: after_all of batched tokens is one token, as XLA's after_all.
batch_rules[after_all_p] = lambda vals, dims, *, axis_size: (create_token_p.bind(), None)


# ------------------------------------------------------------------ dce_sink ----

dce_sink_p = Primitive("dce_sink", multiple_results=True)
impl_rules[dce_sink_p] = lambda x, *, prevent_mlir_dce: []
abstract_eval_rules[dce_sink_p] = lambda x, *, prevent_mlir_dce: []
_sharding_rules[dce_sink_p] = _BY_SHAPE_RULE  # no results


def _dce_sink_jvp(primals, tangents, *, prevent_mlir_dce):
    # Linear, as JAX's: the tangent is sunk too (its equations stay when they are staged).
    dce_sink_p.bind(primals[0], prevent_mlir_dce=prevent_mlir_dce)
    if tangents[0] is not None:
        dce_sink_p.bind(tangents[0], prevent_mlir_dce=prevent_mlir_dce)
    return [], []


def _dce_sink_batch(vals, dims, *, axis_size, prevent_mlir_dce):
    dce_sink_p.bind(vals[0], prevent_mlir_dce=prevent_mlir_dce)
    return [], []


_SINK_ATTRS = 'call_target_name = "dce_sink", has_side_effect = true, api_version = 4 : i32, ' \
              'backend_config = {}'


@functools.lru_cache(maxsize=None)
def _has_ffi_sink(platform: str) -> bool:
    """Whether this jaxlib has the no-op FFI target `dce_sink` (JAX's, newer than jaxlib 0.6):
    a tiny program that calls it is compiled and run once."""
    text = ('module @probe { func.func public @main(%a: tensor<f32>) -> tensor<f32> {\n'
            f'  "stablehlo.custom_call"(%a) <{{{_SINK_ATTRS}}}> : (tensor<f32>) -> ()\n'
            '  return %a : tensor<f32> } }')
    try:
        dev = xla.get_device(platform)
        run = xla.runner(xla.compile_text(text, platform), xla.result_handlers([ShapedArray((), np.float32)], dev))
        run([xla.device_put(np.zeros((), np.float32), dev)])
        return True
    except Exception:
        return False


def _dce_sink_lower(ctx, x, *, prevent_mlir_dce):
    if not prevent_mlir_dce:
        return []
    if _has_ffi_sink(ctx.module.platform):  # a no-op marked as a side effect, so XLA keeps x
        ctx.op("stablehlo.custom_call", [x], [], _SINK_ATTRS)
    else:  # older jaxlib: a side-effecting host call that does nothing keeps x just as well
        _lower_effect(ctx, [x], lambda *xs: (), [])
    return []


jvp_rules[dce_sink_p] = _dce_sink_jvp
transpose_rules[dce_sink_p] = lambda cts, x, *, prevent_mlir_dce: [None]
batch_rules[dce_sink_p] = _dce_sink_batch
lowering_rules[dce_sink_p] = _dce_sink_lower
defpython(dce_sink_p, lambda eqn, ins: "None")
