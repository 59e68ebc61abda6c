"""The staging trace: record primitives into a jaxpr instead of running them.

With `known_passthrough=True` it is the partial evaluator behind linearize:
equations none of whose inputs are staged run at once on the parent trace,
the rest are recorded and the known values they read become constants
(the residuals).
"""
from __future__ import annotations

from functools import wraps

import numpy as np

from .avals import ShapedArray, aval_of
from . import options as _options
from .ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var, literal_value
from .sharding import PartitionSpec, Sharding, resolve_spec
from .typed_sharding import type_sharding, with_shardings
from .trace import (Trace, Tracer, abstract_eval_rules, bind_below, bind_custom_jvp, bind_custom_vjp,
                    check_alive, ctx, hooks, rule_for, set_trace, typecheck)
from .traceback_util import user_source
from .errors import FuncadTypeError
from .arguments import merge_static, split_static
from .pytree import flatten_fun, tree_flatten, tree_unflatten

# prim -> rule(trace, args, params) -> outputs: how a partial evaluator (a
# StagingTrace with known_passthrough) splits an equation whose inputs are
# partly known. Without a rule the whole equation is staged.
partial_eval_rules: dict = {}


class StagingTracer(Tracer):
    __slots__ = ("_aval", "_var")

    def __init__(self, trace, aval, var):
        self._trace = trace
        self._aval = aval
        self._var = var

    @property
    def aval(self):
        return self._aval


class StagingTrace(Trace):
    name = "make_jaxpr"

    def __init__(self, parent, known_passthrough: bool = False, name: str | None = None):
        super().__init__(parent)
        self.known_passthrough = known_passthrough
        if name:
            self.name = name
        self.invars: list[Var] = []
        self.eqns: list[Eqn] = []
        self.constvars: list[Var] = []
        self.constvals: list = []
        self._const_ids: dict[int, Var] = {}

    def new_arg(self, aval: ShapedArray) -> StagingTracer:
        v = Var(aval)
        self.invars.append(v)
        return StagingTracer(self, aval, v)

    def atom(self, x):
        """The IR atom for a value: own tracer -> its Var; scalar -> Literal; else a constvar."""
        if type(x) is StagingTracer and x._trace is self:
            return x._var
        check_alive(x)
        if not isinstance(x, Tracer) and literal_value(x):
            return Literal(x)
        v = self._const_ids.get(id(x))
        if v is None:
            v = Var(aval_of(x))
            self._const_ids[id(x)] = v
            self.constvars.append(v)
            self.constvals.append(x)
        return v

    def is_own(self, x) -> bool:
        return type(x) is StagingTracer and x._trace is self

    def process_primitive(self, prim, args, params):
        if self.known_passthrough:
            for x in args:
                if type(x) is StagingTracer and x._trace is self:
                    break
            else:  # all known: run now on the parent trace
                return bind_below(self.parent, prim, args, params)
            # A call-like primitive with some known inputs splits into a known
            # part run now and an unknown part staged here.
            split = partial_eval_rules.get(prim)
            if split is not None:
                return split(self, args, params)
        return self.stage(prim, args, params)

    def stage(self, prim, args, params):
        """Record `prim` applied to `args` as an equation; return its staged outputs."""
        atoms = [x._var if type(x) is StagingTracer and x._trace is self else self.atom(x) for x in args]
        rule = abstract_eval_rules.get(prim) or rule_for(abstract_eval_rules, prim, "shape inference")
        in_avals = [a.aval for a in atoms]
        out_avals = rule(*in_avals, **params)
        for a in in_avals:  # sharding in types: only when an operand has one
            if a._sharding is not None:
                out_avals = with_shardings(prim, in_avals, out_avals, params)
                break
        else:
            if "out_sharding" in params and params["out_sharding"] is not None:
                out_avals = with_shardings(prim, in_avals, out_avals, params)
        # With debug_nans on, each equation remembers the user's line, to name it on a NaN.
        source = (ctx.source or user_source()) if ctx.debug_nans else None
        if prim.multiple_results:
            outvars = [Var(a) for a in out_avals]
            self.eqns.append(Eqn(prim, atoms, outvars, params, source))
            return [StagingTracer(self, v.aval, v) for v in outvars]
        v = Var(out_avals)
        self.eqns.append(Eqn(prim, atoms, [v], params, source))
        return StagingTracer(self, out_avals, v)

    # A custom-derivative function on known values goes to the parent trace whole,
    # so that an outer differentiation applies its rule; otherwise it is inlined.
    def process_custom_jvp(self, fun, jvp, args, symbolic_zeros):
        if self.known_passthrough and not any(self.is_own(x) for x in args):
            with set_trace(self.parent):
                return bind_custom_jvp(fun, jvp, args, symbolic_zeros)
        # Staged as one equation that keeps the rule, so grad(jit(f)) uses it.
        return hooks.stage_custom_jvp(self, fun, jvp, args)

    def process_custom_vjp(self, fun, fwd, bwd, args):
        if self.known_passthrough and not any(self.is_own(x) for x in args):
            with set_trace(self.parent):
                return bind_custom_vjp(fun, fwd, bwd, args)
        return hooks.stage_custom_vjp(self, fun, fwd, bwd, args)

    def to_jaxpr(self, outs) -> ClosedJaxpr:
        outvars = [self.atom(x) for x in outs]
        jaxpr = Jaxpr(self.constvars, self.invars, self.eqns, outvars)
        return ClosedJaxpr(jaxpr, self.constvals)


def trace_to_jaxpr(fun, in_avals, name: str = "make_jaxpr", parent=None):
    """Stage `fun` (flat lists in, flat list out) into a ClosedJaxpr.

    Values closed over by `fun` (arrays, outer tracers) become constants.
    Returns (closed_jaxpr, outputs) where outputs are the raw staged values.
    """
    trace = StagingTrace(parent, name=name)
    args = [trace.new_arg(a) for a in in_avals]
    try:
        with set_trace(trace):
            outs = fun(*args)
        try:
            closed = trace.to_jaxpr(outs)
        except FuncadTypeError:
            _check_outputs(outs, name)
            raise
    finally:
        trace.finish()
    if _options.enable_checks:
        typecheck(closed.jaxpr)
    return closed


def _check_outputs(outs, name: str) -> None:
    """A returned value that is not an array: say so (not "got an argument"), as JAX does."""
    for x in outs:
        if isinstance(x, Tracer):
            continue
        try:
            aval_of(x)
        except FuncadTypeError:
            raise FuncadTypeError(
                f"the function traced for {name} returned a value of type {type(x).__name__}, which "
                f"is not an array: {x!r:.60}. Return arrays or Python scalars only (return other "
                "values from outside the transformed function, or close over them).") from None


def convert_constvars(closed: ClosedJaxpr):
    """Move a closed jaxpr's constants into leading inputs: (jaxpr with no consts, consts)."""
    j = closed.jaxpr
    return Jaxpr([], j.constvars + j.invars, j.eqns, j.outvars), closed.consts


def lift_traced_consts(closed: ClosedJaxpr):
    """Closure conversion: constants of `closed` that are tracers of outer
    transformations become its leading inputs. Returns (jaxpr, their values);
    concrete constants stay constants."""
    j = closed.jaxpr
    traced = [isinstance(c, Tracer) for c in closed.consts]
    if not any(traced):
        return closed, []
    lifted_vars = [v for v, t in zip(j.constvars, traced) if t]
    keep = [(v, c) for v, c, t in zip(j.constvars, closed.consts, traced) if not t]
    jaxpr = Jaxpr([v for v, _ in keep], lifted_vars + j.invars, j.eqns, j.outvars)
    return ClosedJaxpr(jaxpr, [c for _, c in keep]), [c for c, t in zip(closed.consts, traced) if t]


def make_jaxpr(fun, static_argnums=(), return_shape: bool = False):
    """A function that returns the jaxpr of `fun` at the given arguments
    (funcad.make_jaxpr adds `optimize=`: see funcad/transforms/api.py).

    >>> import funcad, funcad.numpy as fnp
    >>> print(funcad.make_jaxpr(lambda x: fnp.sin(x) * 2.0)(1.0))
    { lambda ; a:f64[]. let
        b:f64[] = sin a
        c:f64[] = mul b 2.0:f64[]
      in (c,) }
    """
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @wraps(fun)
    def wrapped(*args, **kwargs):
        static_pos, dyn = split_static(args, static)
        flat, in_tree = tree_flatten((dyn, kwargs))
        avals = [_arg_aval(x) for x in flat]
        flat_fun, out_tree = flatten_fun(
            lambda d, kw: fun(*merge_static(args, static_pos, d), **kw), in_tree)
        closed = trace_to_jaxpr(flat_fun, avals)
        if return_shape:
            shapes = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in closed.out_avals]
            return closed, tree_unflatten(out_tree[0], shapes)
        return closed

    return wrapped


class ShapeDtypeStruct:
    """The shape and dtype of an array, without its values (as jax.ShapeDtypeStruct).

    >>> ShapeDtypeStruct((2, 3), "float32")
    ShapeDtypeStruct(shape=(2, 3), dtype=float32)
    """

    __slots__ = ("shape", "dtype", "weak_type", "sharding")

    def __init__(self, shape, dtype, *, sharding=None, weak_type: bool = False,
                 manual_axis_type=None, is_ref: bool = False, _memory_space=None):
        for name, value, missing in (
                ("manual_axis_type", manual_axis_type is not None, "shard_map's manual axis types"),
                ("is_ref", is_ref, "Ref-typed abstract values"),
                ("_memory_space", _memory_space is not None, "memory spaces")):
            if value:
                raise NotImplementedError(f"ShapeDtypeStruct: {name} needs {missing}, which "
                                          f"funcad lacks; leave it at its default")
        self.shape, self.dtype, self.weak_type = tuple(shape), np.dtype(dtype), bool(weak_type)
        self.sharding = sharding  # a Sharding, or None (carried, as JAX's, for the user to read)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        sharding = f", sharding={self.sharding}" if self.sharding is not None else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{sharding}{weak})"

    def __eq__(self, other):
        return isinstance(other, ShapeDtypeStruct) and (
            self.shape, self.dtype, self.weak_type, self.sharding) == (
            other.shape, other.dtype, other.weak_type, other.sharding)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))


def struct_aval(x) -> ShapedArray:
    """The abstract value of a ShapeDtypeStruct (or anything with .shape and .dtype): a
    NamedSharding over Explicit mesh axes (a PartitionSpec over the context mesh) in its
    `sharding` is its type's, as in JAX."""
    sharding = getattr(x, "sharding", None)
    aval = ShapedArray(tuple(x.shape), x.dtype, bool(getattr(x, "weak_type", False)))
    if not isinstance(sharding, (Sharding, PartitionSpec)):  # none, or another library's
        return aval
    typed = type_sharding(resolve_spec(sharding, "ShapeDtypeStruct: sharding"), aval.ndim)
    return aval if typed is None else aval.update(sharding=typed)


def _arg_aval(x) -> ShapedArray:
    if isinstance(x, ShapeDtypeStruct):
        return struct_aval(x)
    return aval_of(x)
