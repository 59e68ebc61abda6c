"""Lowering of jaxprs to StableHLO, as textual MLIR.

One lowering rule per primitive, in the table `lowering_rules` (kept in
core with the other rule tables); each primitive registers its rule beside
its definition, mostly through the factories at the end of this module
(`elementwise_rule("stablehlo.sine")`). A rule is
`rule(ctx, *operands, **params) -> Value | list[Value]`: the operands are
`Value`s (an SSA name and an aval), `ctx.out_avals` holds the avals of the
equation's outputs, and `ctx.op(...)` emits one operation in MLIR's generic
syntax. This module knows no primitive; it sits below `funcad/primitives`.
The emitted text is compiled by XLA (see `xla.py`).

Bigger constants of the jaxpr (NumPy arrays closed over by the traced function,
device Arrays) are not written into the text: they become leading arguments of
`@main` (`Module.const_args`), passed at every call from buffers made once.
Scalars and small host arrays (at most INLINE_CONST_SIZE numbers) are written
inline, as JAX writes its constants, so that XLA folds what depends only on them
as it folds JAX's programs.

>>> import funcad, funcad.numpy as fnp
>>> closed = funcad.make_jaxpr(lambda x: fnp.sin(x) * 2.0)(1.0)
>>> print(lower_jaxpr(closed, "f").text)  # doctest: +ELLIPSIS
module @jit_f ...
    %0 = "stablehlo.sine"(%arg0) : (tensor<f64>) -> tensor<f64>
...
"""
from __future__ import annotations

import re
from typing import Callable, NamedTuple, Sequence

import ml_dtypes
import numpy as np

from ..core import avals as _avals
from ..core import narrow as _narrow
from ..core.avals import ShapedArray, aval_of, float0
from ..core.errors import MissingRuleError, UnsupportedError
from ..core.ir import ClosedJaxpr, Jaxpr, Literal, literal_value
from ..core.trace import Tracer, lowering_rules  # noqa: F401  (the table lives beside the others)
from ..core.typed_sharding import concrete


class Value(NamedTuple):
    name: str
    aval: ShapedArray


# ------------------------------------------------------------------- types ----

INLINE_CONST_SIZE = 1024  # host constants with at most this many numbers are written inline
_inlining = [True]         # off while constants_as_arguments() is in force


class constants_as_arguments:
    """`with constants_as_arguments():` programs lowered in the block take every
    non-scalar constant as an argument. Eager control flow compiles this way: JAX passes
    the constants of an eagerly run loop's body as operands, so XLA does not fold them."""

    def __enter__(self):
        _inlining.append(False)

    def __exit__(self, *exc):
        _inlining.pop()

_DTYPES = {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
           "bool": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
           "uint8": "ui8", "uint16": "ui16", "uint32": "ui32", "uint64": "ui64",
           "complex64": "complex<f32>", "complex128": "complex<f64>",
           # the narrow dtypes of ml_dtypes (funcad/core/narrow.py)
           "float8_e4m3fn": "f8E4M3FN", "float8_e5m2": "f8E5M2", "float8_e4m3fnuz": "f8E4M3FNUZ",
           "float8_e5m2fnuz": "f8E5M2FNUZ", "float8_e4m3b11fnuz": "f8E4M3B11FNUZ",
           "float8_e3m4": "f8E3M4", "float8_e4m3": "f8E4M3", "float8_e8m0fnu": "f8E8M0FNU",
           "float4_e2m1fn": "f4E2M1FN", "float6_e2m3fn": "f6E2M3FN", "float6_e3m2fn": "f6E3M2FN",
           "int4": "i4", "uint4": "ui4", "int2": "i2", "uint2": "ui2"}


def mlir_dtype(dtype) -> str:
    dtype = np.dtype(dtype)
    if dtype == float0:  # float0 (tangents of integers) travels as booleans
        return "i1"
    try:
        return _DTYPES[dtype.name]
    except KeyError:
        if dtype.name in ("int1", "uint1"):  # XLA takes i1 for its bool (pred) buffers
            raise UnsupportedError(
                f"{dtype} arrays cannot be passed through XLA (jaxlib transfers 1-bit integers "
                "as bool buffers, which XLA rejects, in JAX too); use them eagerly, or convert "
                "with .astype('int8') or .astype(bool) before jit") from None
        raise MissingRuleError(f"dtype {dtype} cannot be lowered to StableHLO") from None


def tensor_type(aval) -> str:
    dims = "x".join(str(d) for d in aval.shape)
    # With x64 off, a rule's own 64-bit counters and indices are 32-bit too, as in JAX.
    t = mlir_dtype(_avals._PROMOTED.get(aval.dtype, aval.dtype))
    return f"tensor<{dims}x{t}>" if dims else f"tensor<{t}>"


def i64_array(xs) -> str:
    xs = list(xs)
    return f"array<i64: {', '.join(map(str, xs))}>" if xs else "array<i64>"


def ints(xs) -> str:
    return "[" + ", ".join(map(str, xs)) + "]"


def scalar_aval(aval) -> ShapedArray:
    return ShapedArray((), aval.dtype)


# ----------------------------------------------------------------- context ----

class Module:
    """The state of one module being emitted: fresh names and hoisted constants."""

    def __init__(self, platform: str = "cpu"):
        self.platform = platform         # "cpu" or "gpu": rules that call kernels pick by it
        self.count = 0
        self.const_args: list = []       # values passed as leading @main arguments
        self.const_vals: list[Value] = []
        self._const_ids: dict[int, Value] = {}
        self.host_callbacks: list = []   # Python functions the program calls (pure_callback)
        self.functions: list[str] = []   # private functions placed after @main (exported calls)
        self.partition = None            # an SPMD program's partitioning.Annotator
        self.isolated: list[Captures] = []  # enclosing regions isolated from the program

    def add_host_callback(self, fn) -> int:
        """Register `fn` for the program's host-callback custom call; returns its index."""
        self.host_callbacks.append(fn)
        return len(self.host_callbacks) - 1

    def fresh(self) -> str:
        self.count += 1
        return f"%{self.count - 1}"

    def hoist(self, x, aval) -> Value:
        v = self._const_ids.get(id(x))
        if v is None:
            v = Value(f"%c{len(self.const_args)}", aval)
            self._const_ids[id(x)] = v
            self.const_args.append(x)
            self.const_vals.append(v)
        for scope in self.isolated:  # passed into each enclosing isolated region
            v = scope.capture(v)
        return v


class Captures(dict):
    """The values from outside a region isolated from above (sdy.manual_computation)
    that its body uses: outer name -> (outer Value, the region's block argument)."""

    def __init__(self, module: Module):
        super().__init__()
        self.module = module

    def capture(self, v: "Value") -> "Value":
        if v.name not in self:
            self[v.name] = (v, Value(self.module.fresh(), v.aval))
        return self[v.name][1]


class LoweringContext:
    """Emits operations into one block; `out_avals` is set per equation."""

    def __init__(self, module: Module, indent: int = 4):
        self.module = module
        self.lines: list[str] = []
        self.indent = indent
        self.out_avals: list = []
        self.token: str | None = None   # chains the block's host-callback effects (effects.py)

    @property
    def out_aval(self) -> ShapedArray:
        return self.out_avals[0]

    def op(self, name: str, operands: Sequence[Value], out_avals, attrs: str = "",
           regions: Sequence[str] = (), discardable: str = "") -> list[Value]:
        """Emit `"name"(operands) <{attrs}> (regions) {discardable} : (types) -> types`
        (`discardable`: attributes outside the op's properties, e.g. a sharding); return
        its results."""
        out_avals = list(out_avals)
        res = self.module.fresh()
        lhs = res if len(out_avals) == 1 else f"{res}:{len(out_avals)}"
        ins = ", ".join(v.name for v in operands)
        in_types = ", ".join(tensor_type(v.aval) for v in operands)
        out_types = ", ".join(tensor_type(a) for a in out_avals)
        if len(out_avals) != 1:
            out_types = f"({out_types})"
        text = f'"{name}"({ins})'
        if attrs:
            text += f" <{{{attrs}}}>"
        if regions:
            text += " (" + ", ".join(regions) + ")"
        if discardable:
            text += f" {{{discardable}}}"
        text += f" : ({in_types}) -> {out_types}"
        self.lines.append(" " * self.indent + (f"{lhs} = {text}" if out_avals else text))
        if len(out_avals) == 1:
            return [Value(res, out_avals[0])]
        return [Value(f"{res}#{i}", a) for i, a in enumerate(out_avals)]

    def op1(self, name, operands, out_aval, attrs="", regions=()) -> Value:
        return self.op(name, operands, [out_aval], attrs, regions)[0]

    def region(self, arg_avals, body: Callable) -> str:
        """A one-block region: `body(ctx, *args) -> list[Value]` gives what it returns."""
        inner = LoweringContext(self.module, self.indent + 4)
        args = [Value(self.module.fresh(), a) for a in arg_avals]
        outs = body(inner, *args)
        inner.op("stablehlo.return", outs, [])
        head = ", ".join(f"{a.name}: {tensor_type(a.aval)}" for a in args)
        pad = " " * (self.indent + 2)
        return "{\n" + f"{pad}^bb0({head}):\n" + "\n".join(inner.lines) + "\n" + " " * self.indent + "}"

    def call(self, closed: ClosedJaxpr, args: Sequence[Value]) -> list[Value]:
        """Inline a closed jaxpr (the body of a call primitive) here; return its outputs."""
        return lower_jaxpr_body(self, closed.jaxpr, closed.consts, args)

    # -- constants -----------------------------------------------------------
    def constant(self, value, dtype) -> Value:
        """A 0-d constant."""
        aval = ShapedArray((), dtype)
        dtype = aval.dtype  # canonical: 32-bit with x64 off
        if dtype == float0:
            text = "false"
        elif dtype == np.bool_:
            text = "true" if bool(np.asarray(value)) else "false"
        else:
            raw = np.asarray(value).astype(dtype).reshape(()).astype(dtype.newbyteorder("<"))
            text = '"0x' + raw.tobytes().hex().upper() + '"'
        return self.op1("stablehlo.constant", [], aval, f"value = dense<{text}> : {tensor_type(aval)}")

    def full(self, value, dtype, shape) -> Value:
        c = self.constant(value, dtype)
        return c if not shape else broadcast(self, c, tuple(shape))

    def const_value(self, x) -> Value:
        """The Value of a constant of the jaxpr: inline if scalar, else a hoisted argument."""
        if isinstance(x, Tracer):
            raise TypeError(f"cannot lower a jaxpr closed over the traced value {x!r}")
        aval = aval_of(x)
        if aval.dtype == float0:
            return self.full(0, float0, aval.shape)
        if literal_value(x):
            return self.constant(x, aval.dtype)
        if _inlining[-1] and isinstance(x, np.ndarray) and aval.size <= INLINE_CONST_SIZE \
                and aval.dtype.kind in "fiu":
            return self.array_constant(np.asarray(x), aval)
        return self.module.hoist(x, ShapedArray(aval.shape, aval.dtype))

    def array_constant(self, x: np.ndarray, aval) -> Value:
        """A small array constant written into the program, as JAX writes its constants:
        XLA's constant folding then sees it (e.g. folds `log(2 * pi * scale**2)` of a
        constant `scale` with its evaluator, as in JAX's programs)."""
        aval = ShapedArray(aval.shape, aval.dtype)
        raw = x.astype(aval.dtype).astype(aval.dtype.newbyteorder("<"), order="C")
        text = '"0x' + raw.tobytes().hex().upper() + '"'
        return self.op1("stablehlo.constant", [], aval, f"value = dense<{text}> : {tensor_type(aval)}")


# ------------------------------------------------------------ jaxpr walker ----

def lower_jaxpr_body(ctx: LoweringContext, jaxpr: Jaxpr, consts, args: Sequence[Value]) -> list[Value]:
    """Emit the equations of `jaxpr` into `ctx` (inlined); return its outputs.

    `consts` are concrete values or already-lowered `Value`s.
    """
    env: dict[int, Value] = {}
    for v, c in zip(jaxpr.constvars, consts):
        env[id(v)] = c if isinstance(c, Value) else ctx.const_value(c)
    for v, a in zip(jaxpr.invars, args):
        env[id(v)] = a

    def read(a):
        if type(a) is Literal:
            return ctx.constant(a.val, a.aval.dtype)
        return env[id(a)]

    for eqn in jaxpr.eqns:
        rule = lowering_rules.get(eqn.prim)
        if rule is None and eqn.prim.rule_hint(lowering_rules):
            raise MissingRuleError(
                f"primitive `{eqn.prim.name}` has no lowering rule, so it cannot be used under jit. "
                f"Register one with {eqn.prim.rule_hint(lowering_rules)}.")
        if rule is None:
            raise MissingRuleError(
                f"primitive `{eqn.prim.name}` has no StableHLO lowering rule, so it cannot be used "
                f"under jit. Run the function without jit, or register a rule for `{eqn.prim.name}` "
                "beside its definition (funcad.core.trace.lowering_rules).")
        ctx.out_avals = [v.aval for v in eqn.outvars]
        ins = [read(a) for a in eqn.inputs]
        inner_effects = token_effects and eqn.params and _has_token_effect(eqn.params)
        if inner_effects and ctx.token is not None:  # a loop or cond runs after earlier effects
            ins = tie_to_token(ctx, ins)
        outs = rule(ctx, *ins, **eqn.params)
        outs = list(outs) if eqn.prim.multiple_results else [outs]
        if inner_effects:  # ... and before later ones
            tie_to_token(ctx, outs)
        for v, o in zip(eqn.outvars, outs):
            if v.aval._sharding is not None and ctx.module.partition is not None \
                    and eqn.prim not in unconstrained and _constrainable(ctx, v.aval._sharding):
                # sharding in types: the partitioner keeps the layout each type names
                o = ctx.module.partition.constrain(ctx, o, concrete(v.aval._sharding),
                                                   wrt_axis_types=True)
            # Weak types and float0 do not exist in StableHLO; keep the jaxpr's aval.
            env[id(v)] = Value(o.name, v.aval)
    return [read(a) for a in jaxpr.outvars]


def _constrainable(ctx, type_sharding) -> bool:
    """Whether a typed value's layout is stated: inside a shard_map over some axes only
    under Shardy (GSPMD takes no sharding over the free axes inside a manual region)."""
    return ctx.module.partition.shardy or all(t.name != "Manual" for t in type_sharding.mesh.axis_types)


# Primitives whose results the walker leaves unconstrained even when their types have
# a sharding: those that constrain themselves (sharding_constraint) or whose bodies do.
unconstrained: set = set()


# ------------------------------------------------------------------ effects ----

# Primitives whose lowering threads the block's token (LoweringContext.token): host
# callbacks with side effects (primitives/effects.py). XLA orders them by that chain.
token_effects: set = set()


def _has_token_effect(params: dict) -> bool:
    for v in params.values():
        for x in (v if isinstance(v, (tuple, list)) else (v,)):
            j = x.jaxpr if isinstance(x, ClosedJaxpr) else x
            if isinstance(j, Jaxpr) and any(e.prim in token_effects or
                                            (e.params and _has_token_effect(e.params)) for e in j.eqns):
                return True
    return False


def block_token(ctx: LoweringContext) -> str:
    """The name of the block's current effect token (a new chain if it has none)."""
    if ctx.token is None:
        ctx.token = ctx.module.fresh()
        ctx.lines.append(" " * ctx.indent + f'{ctx.token} = "stablehlo.after_all"() : () -> !stablehlo.token')
    return ctx.token


def tie_to_token(ctx: LoweringContext, values: Sequence[Value]) -> list[Value]:
    """`values` passed with the block's token through one optimization_barrier, so what
    uses the results runs after the token's effects, and the new token (set on ctx) after
    `values` are computed: a loop or cond holding effects is ordered among the others."""
    token = block_token(ctx)
    res = ctx.module.fresh()
    n = len(values) + 1
    types = ", ".join(["!stablehlo.token"] + [tensor_type(v.aval) for v in values])
    ins = ", ".join([token] + [v.name for v in values])
    ctx.lines.append(" " * ctx.indent + (res if n == 1 else f"{res}:{n}") +
                     f' = "stablehlo.optimization_barrier"({ins}) : ({types}) -> ({types})')
    ctx.token = res if n == 1 else f"{res}#0"
    return [Value(f"{res}#{i + 1}", v.aval) for i, v in enumerate(values)]


def lower_closed_call(ctx: LoweringContext, closed: ClosedJaxpr, args: Sequence[Value]) -> list[Value]:
    """Inline a closed jaxpr (the body of a call primitive such as jit)."""
    return lower_jaxpr_body(ctx, closed.jaxpr, closed.consts, args)


class Lowered(NamedTuple):
    text: str
    const_args: list     # values for the leading hoisted-constant arguments of @main
    in_avals: list
    out_avals: list
    host_callbacks: tuple = ()  # handed to the compiler with the text (pure_callback)


def _symbol(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", name) or "f"


class Partitioning(NamedTuple):
    """An SPMD program's layout: `annotator` (a `partitioning.Annotator`) names its
    partitions' devices and renders the annotations; `inputs` holds each input's
    sharding (None: replicated) and `outputs` each output's (None: XLA chooses)."""
    annotator: object
    inputs: tuple
    outputs: tuple


def lower_jaxpr(closed: ClosedJaxpr, name: str = "f", donated: Sequence[bool] = (),
                packing=None, partitioning: Partitioning | None = None,
                platform: str = "cpu") -> Lowered:
    """Lower a closed jaxpr to a StableHLO module whose @main takes
    (hoisted constants..., [packed host inputs,] inputs...) and returns the outputs.

    `donated[i]` marks input i as a buffer XLA may reuse for an output.
    `packing` (a `packing.Layout`) lists inputs that arrive as slices of one
    uint8 buffer, the parameter after the constants; the others follow it.
    `partitioning` makes it an SPMD program over several devices (hoisted
    constants are replicated). `platform` ("cpu" or "gpu") is the device's,
    for rules that call a kernel jaxlib ships for one platform (LAPACK's on the CPU).
    """
    module = Module(platform)
    part = partitioning.annotator if partitioning else None
    module.partition = part
    module.assignment = part.assignment if part else None
    ctx = LoweringContext(module)
    jaxpr = closed.jaxpr
    args = [Value(f"%arg{i}", v.aval) for i, v in enumerate(jaxpr.invars)]
    packed_params, in_buffer = [], set()
    if packing is not None:
        buf = Value("%packed", ShapedArray((packing.nbytes,), np.uint8))
        packed_params = [f"{buf.name}: {tensor_type(buf.aval)}"]
        for slot in packing.slots:
            args[slot.index] = emit_unpack(ctx, buf, slot)
            in_buffer.add(slot.index)
    outs = lower_jaxpr_body(ctx, jaxpr, closed.consts, args)
    out_types = ", ".join(tensor_type(o.aval) for o in outs)
    results = out_types
    if part:  # (first: replicated inputs are placed on the outputs' mesh where they name one)
        results = ", ".join(tensor_type(o.aval) + (f" {{{part.attr(s, o.aval.ndim)}}}" if s else "")
                            for o, s in zip(outs, partitioning.outputs))
    params = [f"{v.name}: {tensor_type(v.aval)}" + (f" {{{part.attr(None, v.aval.ndim)}}}" if part else "")
              for v in module.const_vals] + packed_params
    for i, a in enumerate(args):
        if i in in_buffer:
            continue
        attrs = ["jax.buffer_donor = true"] if i < len(donated) and donated[i] else []
        if part:
            attrs.append(part.attr(partitioning.inputs[i], a.aval.ndim))
        attr = " {" + ", ".join(attrs) + "}" if attrs else ""
        params.append(f"{a.name}: {tensor_type(a.aval)}{attr}")
    ret = f"    func.return {', '.join(o.name for o in outs)} : {out_types}" if outs else "    func.return"
    parts = len(part.assignment) if part else 1
    text = "\n".join([
        f"module @jit_{_symbol(name)} attributes "
        f"{{mhlo.num_partitions = {parts} : i32, mhlo.num_replicas = 1 : i32}} {{",
        *(part.declarations() if part else ()),
        f"  func.func public @main({', '.join(params)}) -> ({results}) {{",
        *ctx.lines, ret, "  }", *module.functions, "}", ""])
    return Lowered(text, module.const_args, [v.aval for v in jaxpr.invars],
                   [v.aval for v in jaxpr.outvars], tuple(module.host_callbacks))


# ------------------------------------------------------------------ helpers ----

def broadcast(ctx, x: Value, shape, dims=None) -> Value:
    """x broadcast to `shape`; by default its axes align with the trailing ones (NumPy)."""
    shape = tuple(shape)
    if x.aval.shape == shape:
        return x
    if dims is None:
        dims = range(len(shape) - len(x.aval.shape), len(shape))
    return ctx.op1("stablehlo.broadcast_in_dim", [x], ShapedArray(shape, x.aval.dtype),
                   f"broadcast_dimensions = {i64_array(dims)}")


def convert(ctx, x: Value, dtype) -> Value:
    dtype = np.dtype(dtype)
    if x.aval.dtype == dtype:
        return x
    return ctx.op1("stablehlo.convert", [x], ShapedArray(x.aval.shape, dtype))


def _compare_type(dtype) -> str:
    kind = _narrow.kind(dtype)
    return {"f": "FLOAT", "c": "FLOAT", "i": "SIGNED"}.get(kind, "UNSIGNED")


def compare(ctx, x: Value, y: Value, direction: str, compare_type: str | None = None) -> Value:
    ctype = compare_type or _compare_type(x.aval.dtype)
    attrs = (f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
             f"compare_type = #stablehlo<comparison_type {ctype}>")
    return ctx.op1("stablehlo.compare", [x, y], ShapedArray(x.aval.shape, np.bool_), attrs)


def select(ctx, pred: Value, on_true: Value, on_false: Value) -> Value:
    return ctx.op1("stablehlo.select", [pred, on_true, on_false], on_true.aval)


def binary(ctx, name: str, x: Value, y: Value, out_aval=None) -> Value:
    out_aval = out_aval or x.aval
    return ctx.op1(name, [x, y], ShapedArray(out_aval.shape, out_aval.dtype))


def broadcast_operands(ctx, *xs):
    shape = np.broadcast_shapes(*[x.aval.shape for x in xs])
    return [broadcast(ctx, x, shape) for x in xs], shape


# ------------------------------------------------------ reductions' algebra ----

def reduction_identity(kind: str, dtype):
    """The identity element of a reduction (add, mul, max, min) for `dtype`."""
    dtype = np.dtype(dtype)
    if kind in ("add", "mul"):
        return 0 if kind == "add" else 1
    if dtype == np.bool_:
        return kind == "min"
    k = _narrow.kind(dtype)
    if k in "fc":  # complex: (-inf, -inf) lies below every number in (real, imag) order
        inf = -np.inf if kind == "max" else np.inf
        if k == "f" and not np.isinf(np.array(inf).astype(dtype)):  # float8 formats without inf
            info = ml_dtypes.finfo(dtype)
            return info.min if kind == "max" else info.max
        return complex(inf, inf) if k == "c" else inf
    info = ml_dtypes.iinfo(dtype)
    return info.min if kind == "max" else info.max


_REDUCERS = {"add": ("stablehlo.add", "stablehlo.or"), "mul": ("stablehlo.multiply", "stablehlo.and"),
             "max": ("stablehlo.maximum", "stablehlo.or"), "min": ("stablehlo.minimum", "stablehlo.and")}


def reducer_op(kind: str, dtype) -> str:
    """The StableHLO op combining two elements in a reduction of `kind`."""
    op, bool_op = _REDUCERS[kind]
    return bool_op if np.dtype(dtype) == np.bool_ else op


def reducer_region(ctx, kind: str, aval) -> str:
    """The two-scalar region of a reduce/reduce_window/scatter combining with `kind`."""
    s = scalar_aval(aval)
    op = reducer_op(kind, aval.dtype)
    return ctx.region([s, s], lambda c, a, b: [binary(c, op, a, b)])


# ------------------------------------------------------------ rule factories ----

def elementwise_rule(name: str, bool_name: str | None = None) -> Callable:
    """The rule of an elementwise primitive that is one StableHLO op: operands are
    broadcast NumPy-style to the result's shape; `bool_name` is the op for booleans.

    >>> rule = elementwise_rule("stablehlo.sine")  # lowering_rules[sin_p] = rule
    """
    def rule(ctx, *xs):
        if len(xs) > 1:
            xs, _ = broadcast_operands(ctx, *xs)
        op = bool_name if bool_name and xs[0].aval.dtype == np.bool_ else name
        out = ctx.out_aval
        return ctx.op1(op, xs, ShapedArray(out.shape, out.dtype))
    return rule


def compare_rule(direction: str) -> Callable:
    """The rule of a comparison primitive: `stablehlo.compare` in `direction` (EQ, LT, ...)."""
    def rule(ctx, x, y):
        (x, y), _ = broadcast_operands(ctx, x, y)
        return compare(ctx, x, y, direction)
    return rule


def call_rule(param: str) -> Callable:
    """The rule of a call primitive whose body is the ClosedJaxpr `params[param]`: inlined."""
    def rule(ctx, *args, **params):
        return ctx.call(params[param], args)
    return rule


def emit_unpack(ctx, packed, slot):
    """Emit the operations that cut `slot`'s array out of the packed buffer `packed`."""
    a = slot.aval
    dtype = np.dtype(a.dtype)
    size, width = a.size, dtype.itemsize
    u8 = np.dtype(np.uint8)
    x = ctx.op1("stablehlo.slice", [packed], ShapedArray((size * width,), u8),
                f"start_indices = {i64_array([slot.offset])}, "
                f"limit_indices = {i64_array([slot.offset + size * width])}, "
                f"strides = {i64_array([1])}")
    if dtype == np.bool_:  # StableHLO converts nonzero to true
        x = ctx.op1("stablehlo.convert", [x], ShapedArray((size,), dtype))
    elif dtype != u8:
        if width > 1:
            x = ctx.op1("stablehlo.reshape", [x], ShapedArray((size, width), u8))
        x = ctx.op1("stablehlo.bitcast_convert", [x], ShapedArray((size,), dtype))
    if a.shape != (size,):
        x = ctx.op1("stablehlo.reshape", [x], ShapedArray(a.shape, dtype))
    return x
