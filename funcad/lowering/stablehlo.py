"""Lowering of jaxprs to StableHLO, as textual MLIR.

One lowering rule per primitive, in the table `lowering_rules`. A rule is
`rule(ctx, *operands, **params) -> Value | list[Value]`: the operands are
`Value`s (an SSA name and an aval), `ctx.out_avals` holds the avals of the
equation's outputs, and `ctx.op(...)` emits one operation in MLIR's generic
syntax. The emitted text is compiled by XLA (see `xla.py`).

Non-scalar constants of the jaxpr (NumPy arrays closed over by the traced
function, device Arrays) are not written into the text: they become leading
arguments of `@main` (`Module.const_args`), passed at every call from
buffers made once. Scalars are written inline.

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

import numpy as np

from ..core.avals import ShapedArray, aval_of, float0
from ..core.errors import MissingRuleError
from ..core.ir import ClosedJaxpr, Jaxpr, Literal, literal_value
from ..core.trace import Tracer
from ..primitives import elementwise as E
from ..primitives import indexing as I
from ..primitives import linalg as LA
from ..primitives import reductions as R
from ..primitives import structural as S

lowering_rules: dict = {}   # Primitive -> rule(ctx, *operands, **params)


class Value(NamedTuple):
    name: str
    aval: ShapedArray


# ------------------------------------------------------------------- types ----

_DTYPES = {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
           "bool": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
           "uint8": "ui8", "uint16": "ui16", "uint32": "ui32", "uint64": "ui64",
           "complex64": "complex<f32>", "complex128": "complex<f64>"}


def mlir_dtype(dtype) -> str:
    dtype = np.dtype(dtype)
    if dtype == float0:  # float0 (tangents of integers) travels as booleans
        return "i1"
    try:
        return _DTYPES[dtype.name]
    except KeyError:
        raise MissingRuleError(f"dtype {dtype} cannot be lowered to StableHLO") from None


def tensor_type(aval) -> str:
    dims = "x".join(str(d) for d in aval.shape)
    return f"tensor<{dims}x{mlir_dtype(aval.dtype)}>" if dims else f"tensor<{mlir_dtype(aval.dtype)}>"


def i64_array(xs) -> str:
    xs = list(xs)
    return f"array<i64: {', '.join(map(str, xs))}>" if xs else "array<i64>"


def _ints(xs) -> str:
    return "[" + ", ".join(map(str, xs)) + "]"


def _scalar(aval) -> ShapedArray:
    return ShapedArray((), aval.dtype)


# ----------------------------------------------------------------- context ----

class Module:
    """The state of one module being emitted: fresh names and hoisted constants."""

    def __init__(self):
        self.count = 0
        self.const_args: list = []       # values passed as leading @main arguments
        self.const_vals: list[Value] = []
        self._const_ids: dict[int, Value] = {}

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
        return v


class LoweringContext:
    """Emits operations into one block; `out_avals` is set per equation."""

    def __init__(self, module: Module, indent: int = 4):
        self.module = module
        self.lines: list[str] = []
        self.indent = indent
        self.out_avals: list = []

    @property
    def out_aval(self) -> ShapedArray:
        return self.out_avals[0]

    def op(self, name: str, operands: Sequence[Value], out_avals, attrs: str = "",
           regions: Sequence[str] = ()) -> list[Value]:
        """Emit `"name"(operands) <{attrs}> (regions) : (types) -> types`; return its results."""
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

    # -- constants -----------------------------------------------------------
    def constant(self, value, dtype) -> Value:
        """A 0-d constant."""
        dtype = np.dtype(dtype)
        aval = ShapedArray((), dtype)
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
        return self.module.hoist(x, ShapedArray(aval.shape, aval.dtype))


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
        if rule is None:
            raise MissingRuleError(
                f"primitive `{eqn.prim.name}` has no StableHLO lowering rule, so it cannot be used "
                f"under jit. Run the function without jit, or add a rule for `{eqn.prim.name}` to "
                "funcad.lowering.stablehlo.lowering_rules.")
        ctx.out_avals = [v.aval for v in eqn.outvars]
        outs = rule(ctx, *[read(a) for a in eqn.inputs], **eqn.params)
        outs = list(outs) if eqn.prim.multiple_results else [outs]
        for v, o in zip(eqn.outvars, outs):
            # Weak types and float0 do not exist in StableHLO; keep the jaxpr's aval.
            env[id(v)] = Value(o.name, v.aval)
    return [read(a) for a in jaxpr.outvars]


def lower_closed_call(ctx: LoweringContext, closed: ClosedJaxpr, args: Sequence[Value]) -> list[Value]:
    """Inline a closed jaxpr (the body of a call primitive such as jit)."""
    return lower_jaxpr_body(ctx, closed.jaxpr, closed.consts, args)


class Lowered(NamedTuple):
    text: str
    const_args: list     # values for the leading hoisted-constant arguments of @main
    in_avals: list
    out_avals: list


def _symbol(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", name) or "f"


def lower_jaxpr(closed: ClosedJaxpr, name: str = "f", donated: Sequence[bool] = (),
                packing=None) -> Lowered:
    """Lower a closed jaxpr to a StableHLO module whose @main takes
    (hoisted constants..., [packed host inputs,] inputs...) and returns the outputs.

    `donated[i]` marks input i as a buffer XLA may reuse for an output.
    `packing` (a `packing.Layout`) lists inputs that arrive as slices of one
    uint8 buffer, the parameter after the constants; the others follow it.
    """
    module = Module()
    ctx = LoweringContext(module)
    jaxpr = closed.jaxpr
    args = [Value(f"%arg{i}", v.aval) for i, v in enumerate(jaxpr.invars)]
    packed_params, in_buffer = [], set()
    if packing is not None:
        from .packing import emit_unpack
        buf = Value("%packed", ShapedArray((packing.nbytes,), np.uint8))
        packed_params = [f"{buf.name}: {tensor_type(buf.aval)}"]
        for slot in packing.slots:
            args[slot.index] = emit_unpack(ctx, buf, slot)
            in_buffer.add(slot.index)
    outs = lower_jaxpr_body(ctx, jaxpr, closed.consts, args)
    params = [f"{v.name}: {tensor_type(v.aval)}" for v in module.const_vals] + packed_params
    for i, a in enumerate(args):
        if i in in_buffer:
            continue
        attr = " {jax.buffer_donor = true}" if i < len(donated) and donated[i] else ""
        params.append(f"{a.name}: {tensor_type(a.aval)}{attr}")
    out_types = ", ".join(tensor_type(o.aval) for o in outs)
    ret = f"    func.return {', '.join(o.name for o in outs)} : {out_types}" if outs else "    func.return"
    text = "\n".join([
        f"module @jit_{_symbol(name)} attributes "
        "{mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {",
        f"  func.func public @main({', '.join(params)}) -> ({out_types}) {{",
        *ctx.lines, ret, "  }", "}", ""])
    return Lowered(text, module.const_args, [v.aval for v in jaxpr.invars],
                   [v.aval for v in jaxpr.outvars])


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
    kind = np.dtype(dtype).kind
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


def _broadcast_operands(ctx, *xs):
    shape = np.broadcast_shapes(*[x.aval.shape for x in xs])
    return [broadcast(ctx, x, shape) for x in xs], shape


# --------------------------------------------------------------- elementwise ----

def _unary(name):
    def rule(ctx, x):
        return ctx.op1(name, [x], ctx.out_aval)
    return rule


for _p, _name in [
        (E.neg_p, "stablehlo.negate"), (E.sin_p, "stablehlo.sine"), (E.cos_p, "stablehlo.cosine"),
        (E.asin_p, "chlo.asin"), (E.acos_p, "chlo.acos"), (E.atan_p, "chlo.atan"),
        (E.sinh_p, "chlo.sinh"), (E.cosh_p, "chlo.cosh"), (E.tanh_p, "stablehlo.tanh"),
        (E.asinh_p, "chlo.asinh"), (E.acosh_p, "chlo.acosh"), (E.atanh_p, "chlo.atanh"),
        (E.exp_p, "stablehlo.exponential"), (E.log_p, "stablehlo.log"),
        (E.log1p_p, "stablehlo.log_plus_one"), (E.expm1_p, "stablehlo.exponential_minus_one"),
        (E.logistic_p, "stablehlo.logistic"), (E.sqrt_p, "stablehlo.sqrt"),
        (E.rsqrt_p, "stablehlo.rsqrt"), (E.cbrt_p, "stablehlo.cbrt"),
        (E.floor_p, "stablehlo.floor"), (E.ceil_p, "stablehlo.ceil"),
        (E.round_p, "stablehlo.round_nearest_even"), (E.erf_p, "chlo.erf"), (E.erfc_p, "chlo.erfc"),
        (E.erf_inv_p, "chlo.erf_inv"), (E.lgamma_p, "chlo.lgamma"), (E.digamma_p, "chlo.digamma"),
        (E.is_finite_p, "stablehlo.is_finite"), (E.not_p, "stablehlo.not")]:
    lowering_rules[_p] = _unary(_name)


def _exp2(ctx, x):
    ln2 = ctx.full(np.log(2.0), x.aval.dtype, x.aval.shape)
    return ctx.op1("stablehlo.exponential", [binary(ctx, "stablehlo.multiply", x, ln2)], x.aval)


def _abs(ctx, x):
    return x if x.aval.dtype.kind == "u" else ctx.op1("stablehlo.abs", [x], x.aval)


def _sign(ctx, x):
    if x.aval.dtype.kind == "u":  # 0 or 1
        zero = ctx.full(0, x.aval.dtype, x.aval.shape)
        return convert(ctx, compare(ctx, x, zero, "NE"), x.aval.dtype)
    return ctx.op1("stablehlo.sign", [x], x.aval)


def _polygamma(ctx, x, *, m):
    n = ctx.full(m, x.aval.dtype, x.aval.shape)
    return ctx.op1("chlo.polygamma", [n, x], x.aval)


def _integer_pow(ctx, x, *, y):
    # Square-and-multiply, as XLA has no integer power of a float.
    if y == 0:
        return ctx.full(1, x.aval.dtype, x.aval.shape)
    acc, base, n = None, x, abs(y)
    while n:
        if n & 1:
            acc = base if acc is None else binary(ctx, "stablehlo.multiply", acc, base)
        n >>= 1
        if n:
            base = binary(ctx, "stablehlo.multiply", base, base)
    if y < 0:
        acc = binary(ctx, "stablehlo.divide", ctx.full(1, x.aval.dtype, x.aval.shape), acc)
    return acc


lowering_rules[E.exp2_p] = _exp2
lowering_rules[E.abs_p] = _abs
lowering_rules[E.sign_p] = _sign
lowering_rules[E.polygamma_p] = _polygamma
lowering_rules[E.integer_pow_p] = _integer_pow
lowering_rules[E.stop_gradient_p] = lambda ctx, x: x


def _convert_element_type(ctx, x, *, new_dtype, weak_type=False):
    new_dtype = np.dtype(new_dtype)
    src = x.aval.dtype
    if new_dtype == src:
        return x
    if src.kind == "c" and new_dtype.kind != "c":  # NumPy keeps the real part
        x = ctx.op1("stablehlo.real", [x], ShapedArray(x.aval.shape, np.finfo(src).dtype))
    if new_dtype == np.bool_:  # nonzero -> True, whatever the source type
        return compare(ctx, x, ctx.full(0, x.aval.dtype, x.aval.shape), "NE")
    return convert(ctx, x, new_dtype)


lowering_rules[E.convert_element_type_p] = _convert_element_type


def _binop(name, bool_name=None):
    def rule(ctx, x, y):
        (x, y), _ = _broadcast_operands(ctx, x, y)
        op = bool_name if bool_name and x.aval.dtype == np.bool_ else name
        return binary(ctx, op, x, y, ctx.out_aval)
    return rule


for _p, _name, _bool in [
        (E.add_p, "stablehlo.add", "stablehlo.or"), (E.sub_p, "stablehlo.subtract", None),
        (E.mul_p, "stablehlo.multiply", "stablehlo.and"), (E.div_p, "stablehlo.divide", None),
        (E.rem_p, "stablehlo.remainder", None), (E.pow_p, "stablehlo.power", None),
        (E.max_p, "stablehlo.maximum", "stablehlo.or"), (E.min_p, "stablehlo.minimum", "stablehlo.and"),
        (E.atan2_p, "stablehlo.atan2", None), (E.and_p, "stablehlo.and", None),
        (E.or_p, "stablehlo.or", None), (E.xor_p, "stablehlo.xor", None)]:
    lowering_rules[_p] = _binop(_name, _bool)


def _cmp(direction):
    def rule(ctx, x, y):
        (x, y), _ = _broadcast_operands(ctx, x, y)
        return compare(ctx, x, y, direction)
    return rule


for _p, _dir in [(E.eq_p, "EQ"), (E.ne_p, "NE"), (E.lt_p, "LT"), (E.le_p, "LE"),
                 (E.gt_p, "GT"), (E.ge_p, "GE")]:
    lowering_rules[_p] = _cmp(_dir)


def _select_n(ctx, which, *cases):
    (which, *cases), shape = _broadcast_operands(ctx, which, *cases)
    if len(cases) == 1:
        return cases[0]
    if which.aval.dtype == np.bool_:
        return select(ctx, which, cases[1], cases[0])
    # Integer selector, clipped like np.choose(mode="clip"): later cases win from i on.
    out = cases[0]
    for i, c in enumerate(cases[1:], 1):
        ge = compare(ctx, which, ctx.full(i, which.aval.dtype, shape), "GE")
        out = select(ctx, ge, c, out)
    return out


lowering_rules[E.select_n_p] = _select_n
lowering_rules[E.clamp_p] = lambda ctx, lo, x, hi: ctx.op1("stablehlo.clamp", [lo, x, hi], x.aval)

# ----------------------------------------------------------------- structural ----

lowering_rules[S.broadcast_in_dim_p] = lambda ctx, x, *, shape, broadcast_dimensions: (
    ctx.op1("stablehlo.broadcast_in_dim", [x], ctx.out_aval,
            f"broadcast_dimensions = {i64_array(broadcast_dimensions)}"))
lowering_rules[S.reshape_p] = lambda ctx, x, *, new_sizes: ctx.op1("stablehlo.reshape", [x], ctx.out_aval)
lowering_rules[S.squeeze_p] = lambda ctx, x, *, dimensions: ctx.op1("stablehlo.reshape", [x], ctx.out_aval)
lowering_rules[S.transpose_p] = lambda ctx, x, *, permutation: ctx.op1(
    "stablehlo.transpose", [x], ctx.out_aval, f"permutation = {i64_array(permutation)}")
lowering_rules[S.rev_p] = lambda ctx, x, *, dimensions: ctx.op1(
    "stablehlo.reverse", [x], ctx.out_aval, f"dimensions = {i64_array(dimensions)}")
lowering_rules[S.slice_p] = lambda ctx, x, *, start_indices, limit_indices, strides: ctx.op1(
    "stablehlo.slice", [x], ctx.out_aval,
    f"start_indices = {i64_array(start_indices)}, limit_indices = {i64_array(limit_indices)}, "
    f"strides = {i64_array(strides)}")
lowering_rules[S.pad_p] = lambda ctx, x, v, *, padding_config: ctx.op1(
    "stablehlo.pad", [x, v], ctx.out_aval,
    f"edge_padding_low = {i64_array(c[0] for c in padding_config)}, "
    f"edge_padding_high = {i64_array(c[1] for c in padding_config)}, "
    f"interior_padding = {i64_array(c[2] for c in padding_config)}")
lowering_rules[S.concatenate_p] = lambda ctx, *xs, dimension: ctx.op1(
    "stablehlo.concatenate", xs, ctx.out_aval, f"dimension = {dimension} : i64")
lowering_rules[S.iota_p] = lambda ctx, *, dtype, shape, dimension: ctx.op1(
    "stablehlo.iota", [], ctx.out_aval, f"iota_dimension = {dimension} : i64")

# ----------------------------------------------------------------- reductions ----


def _identity(kind: str, dtype):
    """The identity element of a reduction, for `dtype`."""
    dtype = np.dtype(dtype)
    if kind in ("add", "mul"):
        return 0 if kind == "add" else 1
    if dtype == np.bool_:
        return kind == "min"
    if dtype.kind == "f":
        return -np.inf if kind == "max" else np.inf
    info = np.iinfo(dtype)
    return info.min if kind == "max" else info.max


_REDUCERS = {"add": ("stablehlo.add", "stablehlo.or"), "mul": ("stablehlo.multiply", "stablehlo.and"),
             "max": ("stablehlo.maximum", "stablehlo.or"), "min": ("stablehlo.minimum", "stablehlo.and")}


def _reducer_op(kind, dtype):
    op, bool_op = _REDUCERS[kind]
    return bool_op if np.dtype(dtype) == np.bool_ else op


def _reduce(kind):
    def rule(ctx, x, *, axes):
        if not axes:
            return x
        dtype = x.aval.dtype
        init = ctx.constant(_identity(kind, dtype), dtype)
        s = _scalar(x.aval)
        op = _reducer_op(kind, dtype)
        body = ctx.region([s, s], lambda c, a, b: [binary(c, op, a, b)])
        return ctx.op1("stablehlo.reduce", [x, init], ctx.out_aval,
                       f"dimensions = {i64_array(axes)}", [body])
    return rule


lowering_rules[R.reduce_sum_p] = _reduce("add")
lowering_rules[R.reduce_prod_p] = _reduce("mul")
lowering_rules[R.reduce_max_p] = _reduce("max")
lowering_rules[R.reduce_min_p] = _reduce("min")


def _arg_extremum(direction):
    kind = "max" if direction == "GT" else "min"

    def rule(ctx, x, *, axis, index_dtype):
        dtype = x.aval.dtype
        idx = ctx.op1("stablehlo.iota", [], ShapedArray(x.aval.shape, index_dtype),
                      f"iota_dimension = {axis} : i64")
        inits = [ctx.constant(_identity(kind, dtype), dtype), ctx.constant(0, index_dtype)]
        s, si = _scalar(x.aval), ShapedArray((), index_dtype)

        def body(c, a, ia, b, ib):
            better = compare(c, a, b, direction)
            tie = compare(c, a, b, "EQ")
            if dtype.kind == "f":  # NaN wins (first NaN), as in NumPy
                a_nan, b_nan = compare(c, a, a, "NE"), compare(c, b, b, "NE")
                not_b_nan = c.op1("stablehlo.not", [b_nan], b_nan.aval)
                better = binary(c, "stablehlo.or", better, binary(c, "stablehlo.and", a_nan, not_b_nan))
                tie = binary(c, "stablehlo.or", tie, binary(c, "stablehlo.and", a_nan, b_nan))
            first = binary(c, "stablehlo.and", tie, compare(c, ia, ib, "LT"))
            pick_a = binary(c, "stablehlo.or", better, first)
            return [select(c, pick_a, a, b), select(c, pick_a, ia, ib)]

        region = ctx.region([s, si, s, si], body)
        outs = ctx.op("stablehlo.reduce", [x, idx, *inits],
                      [ShapedArray(ctx.out_aval.shape, dtype), ctx.out_aval],
                      f"dimensions = {i64_array([axis])}", [region])
        return outs[1]
    return rule


lowering_rules[R.argmax_p] = _arg_extremum("GT")
lowering_rules[R.argmin_p] = _arg_extremum("LT")


def _cumulative(kind):
    def rule(ctx, x, *, axis, reverse):
        shape, nd = x.aval.shape, len(x.aval.shape)
        n = shape[axis]
        window = [n if d == axis else 1 for d in range(nd)]
        pad = [[0, 0] for _ in range(nd)]
        pad[axis] = [0, n - 1] if reverse else [n - 1, 0]
        dtype = x.aval.dtype
        init = ctx.constant(_identity(kind, dtype), dtype)
        s = _scalar(x.aval)
        op = _reducer_op(kind, dtype)
        body = ctx.region([s, s], lambda c, a, b: [binary(c, op, a, b)])
        attrs = (f"padding = dense<{_ints(_ints(p) for p in pad)}> : tensor<{nd}x2xi64>, "
                 f"window_dimensions = {i64_array(window)}, window_strides = {i64_array([1] * nd)}")
        return ctx.op1("stablehlo.reduce_window", [x, init], x.aval, attrs, [body])
    return rule


lowering_rules[R.cumsum_p] = _cumulative("add")
lowering_rules[R.cumprod_p] = _cumulative("mul")
lowering_rules[R.cummax_p] = _cumulative("max")
lowering_rules[R.cummin_p] = _cumulative("min")

# --------------------------------------------------------------------- linalg ----


def _dot_general(ctx, x, y, *, dimension_numbers):
    (xc, yc), (xb, yb) = dimension_numbers
    dn = (f"#stablehlo.dot<lhs_batching_dimensions = {_ints(xb)}, rhs_batching_dimensions = {_ints(yb)}, "
          f"lhs_contracting_dimensions = {_ints(xc)}, rhs_contracting_dimensions = {_ints(yc)}>")
    if x.aval.dtype == np.bool_:  # XLA has no boolean dot: count in int8, then test != 0
        x8, y8 = convert(ctx, x, np.int32), convert(ctx, y, np.int32)
        out = ctx.op1("stablehlo.dot_general", [x8, y8], ShapedArray(ctx.out_aval.shape, np.int32),
                      f"dot_dimension_numbers = {dn}")
        return compare(ctx, out, ctx.full(0, np.int32, out.aval.shape), "NE")
    return ctx.op1("stablehlo.dot_general", [x, y], ctx.out_aval, f"dot_dimension_numbers = {dn}")


lowering_rules[LA.dot_general_p] = _dot_general

# ------------------------------------------------------------------- indexing ----


def _same_index_type(ctx, idx):
    dts = {i.aval.dtype for i in idx}
    if len(dts) <= 1:
        return list(idx)
    return [convert(ctx, i, np.int64) for i in idx]


lowering_rules[I.dynamic_slice_p] = lambda ctx, x, *idx, slice_sizes: ctx.op1(
    "stablehlo.dynamic_slice", [x, *_same_index_type(ctx, idx)], ctx.out_aval,
    f"slice_sizes = {i64_array(slice_sizes)}")
lowering_rules[I.dynamic_update_slice_p] = lambda ctx, x, u, *idx: ctx.op1(
    "stablehlo.dynamic_update_slice", [x, u, *_same_index_type(ctx, idx)], ctx.out_aval)


def _gather(ctx, x, idx):
    k = idx.aval.shape[-1]
    nb = len(idx.aval.shape) - 1
    offset = list(range(nb, nb + len(x.aval.shape) - k))
    dn = (f"#stablehlo.gather<offset_dims = {_ints(offset)}, collapsed_slice_dims = {_ints(range(k))}, "
          f"start_index_map = {_ints(range(k))}, index_vector_dim = {nb}>")
    sizes = [1] * k + list(x.aval.shape[k:])
    return ctx.op1("stablehlo.gather", [x, idx], ctx.out_aval,
                   f"dimension_numbers = {dn}, indices_are_sorted = false, slice_sizes = {i64_array(sizes)}")


def _scatter_add(ctx, x, idx, u):
    k = idx.aval.shape[-1]
    nb = len(idx.aval.shape) - 1
    window = list(range(nb, nb + len(x.aval.shape) - k))
    dn = (f"#stablehlo.scatter<update_window_dims = {_ints(window)}, "
          f"inserted_window_dims = {_ints(range(k))}, "
          f"scatter_dims_to_operand_dims = {_ints(range(k))}, index_vector_dim = {nb}>")
    s = _scalar(x.aval)
    op = _reducer_op("add", x.aval.dtype)
    body = ctx.region([s, s], lambda c, a, b: [binary(c, op, a, b)])
    return ctx.op1("stablehlo.scatter", [x, idx, u], ctx.out_aval,
                   f"indices_are_sorted = false, scatter_dimension_numbers = {dn}, unique_indices = false",
                   [body])


lowering_rules[I.gather_p] = _gather
lowering_rules[I.scatter_add_p] = _scatter_add


def _sort_key(c, a):
    """Make float keys sort like NumPy under a total order: -0.0 equals 0.0, NaNs last."""
    if a.aval.dtype.kind != "f":
        return a
    zero = c.constant(0, a.aval.dtype)
    a = select(c, compare(c, a, zero, "EQ"), zero, a)
    return select(c, compare(c, a, a, "NE"), c.constant(np.nan, a.aval.dtype), a)


def _sort(ctx, *xs, dimension, num_keys):
    scalars = []
    for x in xs:
        scalars += [_scalar(x.aval), _scalar(x.aval)]

    def body(c, *args):
        # Lexicographic less-than over the keys: lt0 or (eq0 and (lt1 or ...)).
        result = None
        for k in reversed(range(num_keys)):
            a, b = _sort_key(c, args[2 * k]), _sort_key(c, args[2 * k + 1])
            ctype = "TOTALORDER" if a.aval.dtype.kind == "f" else None
            lt = compare(c, a, b, "LT", ctype)
            if result is not None:
                eq = compare(c, a, b, "EQ", ctype)
                lt = binary(c, "stablehlo.or", lt, binary(c, "stablehlo.and", eq, result))
            result = lt
        return [result]

    region = ctx.region(scalars, body)
    return ctx.op("stablehlo.sort", xs, [x.aval for x in xs],
                  f"dimension = {dimension} : i64, is_stable = true", [region])


lowering_rules[I.sort_p] = _sort

from . import control_flow as _control_flow  # noqa: E402,F401  (registers cond/while/scan rules)


def _lower_custom_call(ctx, *operands, call_jaxpr, **_):
    # Compiled code needs only the body; the rules were used when differentiating.
    return lower_closed_call(ctx, call_jaxpr, operands)


from ..core.custom_calls import custom_jvp_call_p, custom_vjp_call_p  # noqa: E402

lowering_rules[custom_jvp_call_p] = _lower_custom_call
lowering_rules[custom_vjp_call_p] = _lower_custom_call


def _lower_custom_lin(ctx, *args, num_res, rule):
    from ..transforms.custom import _forward_error
    _forward_error(rule=rule)


from ..transforms.custom import custom_lin_p  # noqa: E402

lowering_rules[custom_lin_p] = _lower_custom_lin
