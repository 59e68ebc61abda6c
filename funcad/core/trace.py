"""Primitives, the stackless trace context, tracers, and the jaxpr evaluator.

There is one current trace (`ctx.trace`); `None` means eager evaluation with
the impl rules. A transform runs the user's function with its own trace
current; when that trace processes a primitive it runs the primitive's rule
with its parent trace current, so rules are ordinary funcad code and nest.
"""
from __future__ import annotations

import linecache
import os
import sys
import threading
import warnings as _warnings
from typing import Any, Callable, NamedTuple

import numpy as np

from .avals import ShapedArray, aval_of
from .eager import EagerArray, WeakEagerArray, plain_args, wrap, wrap_many, wrap_weak
from .errors import FuncadError

_ndarray, _view, _setflags = np.ndarray, np.ndarray.view, np.ndarray.setflags
from .errors import (ConcretizationError, MissingRuleError, TracerArrayConversionError,
                     JaxprTypeError, TracerBoolConversionError, TracerIntegerConversionError,
                     TracerLeakError)
from .ir import ClosedJaxpr, Literal, Var
from . import ieee_warnings as _ieee, leaks as _leaks, options as _options
from .traceback_util import user_source

# Rule tables, one per interpretation. Keys are Primitive objects.
impl_rules: dict = {}            # prim -> f(*arrays, **params) on NumPy
abstract_eval_rules: dict = {}   # prim -> f(*avals, **params) -> aval | list[aval]
jvp_rules: dict = {}             # prim -> f(primals, tangents, **params) -> (out, tangent_out)
transpose_rules: dict = {}       # prim -> f(ct, *args, **params) -> list of cts
batch_rules: dict = {}           # prim -> f(args, dims, **params) -> (out, out_dim)
# prim -> f(*avals, **params) -> the result's spec (or a list): sharding in types
# (Explicit mesh axes; see core/typed_sharding.py), or typed_sharding.FROM_BODY
sharding_rules: dict = {}
# The backends' tables live here too, so a primitive registers every rule beside
# its definition (see funcad/lowering for how they are read).
lowering_rules: dict = {}        # prim -> f(ctx, *operand Values, **params) -> Value | list[Value]
python_rules: dict = {}          # prim -> (template | f(eqn, args) -> str, helper source | None)


class CallRule(NamedTuple):
    """How a call-like primitive holds its callee (see register_call)."""
    param: str                      # the param holding the callee, a ClosedJaxpr
    optimizable: bool               # the passes may inline the call, prune it, count it as its body
    prune_params: Callable | None   # params of the call pruned to fewer inputs and outputs


# Primitives whose result can be weakly typed beside a strong operand (select_n's cases
# decide, not its predicate; gather's operand, not its indices; convert_element_type's
# param): prim -> may_be_weak(args, params), which, when true, lets the shape rule type
# the eager result. (Any other primitive's result is strong beside a strong operand.)
weak_type_from_some: dict = {}


def some_weak(args, params) -> bool:
    """A weakly typed operand among args: the default `weak_type_from_some` test."""
    return _some_weak(args)


# Primitives transposed even when all their output cotangents are zero: a custom_vjp's
# bwd may return cotangents of its own (flax's fp8 rules return the new scales and
# amax histories as the "gradients" of those inputs), as JAX calls it.
TRANSPOSED_ON_ZERO: set = set()
call_rules: dict = {}            # prim -> CallRule, for the call-like primitives


def register_call(prim: "Primitive", param: str = "jaxpr", *, optimizable: bool = True,
                  prune_params: Callable | None = None) -> None:
    """Declare `prim` a call: its outputs are `params[param]` (a ClosedJaxpr) applied to
    its inputs. Then `funcad.to_python` writes the body inline, debug_nans looks inside
    it, and, if `optimizable`, the passes may inline it, drop its unused outputs and
    inputs, and count it as its body. (checkpoint is a call the passes must leave whole:
    its meaning is in being one.) `prune_params(params, keep_in, keep_out)` returns the
    params of a pruned call when some depend on the arity (e.g. donation flags).
    """
    call_rules[prim] = CallRule(param, optimizable, prune_params)
    weak_type_from_some[prim] = some_weak  # its results are typed by its body, not its operands


class _Hooks:
    """Functions that higher layers install for core to call (core imports none of them)."""

    # check_eager_nans(prim, args, params, out): raise NaNError if `out` has a NaN that
    # `args` had not (installed by funcad/transforms/debugging.py, read when debug_nans is on).
    check_eager_nans: Callable = staticmethod(lambda prim, args, params, out: None)
    # stage_custom_jvp(trace, fun, jvp, args) / stage_custom_vjp(trace, fun, fwd, bwd, args):
    # record a custom-derivative function as one equation of a staging trace, keeping
    # its rules (installed by funcad/transforms/custom_calls.py).
    stage_custom_jvp: Callable
    stage_custom_vjp: Callable
    # key_reuse_trace(trace, *args, **kw): a jit trace checked for key reuse;
    # key_reuse_boundary(fun, args): a top-level vmap's call with JAX's key checks
    # (installed by funcad/random/_key_reuse.py, read when debug_key_reuse is on).
    key_reuse_trace: Callable = staticmethod(lambda trace, *args, **kw: trace(*args, **kw))
    key_reuse_boundary: Callable = staticmethod(lambda fun, args: fun(*args))
    # typed_eager(prim, args, params): an eager operation on arrays laid out over several
    # devices, its results laid out as JAX's are: as their types say (Explicit mesh axes),
    # else as XLA places them (installed by funcad/transforms/jit.py, which adds the
    # sharded array type to `typed_types`).
    typed_eager: Callable
    typed_types: frozenset = frozenset()
    # Primitives whose impl takes arrays laid out over several devices as they are (the
    # host-local/global conversions of multihost_utils): typed_eager never sees them.
    on_device_impls: set = set()


hooks = _Hooks()


class Primitive:
    """A named operation. Its meaning lives in the rule tables above."""

    __slots__ = ("name", "multiple_results")

    def __init__(self, name: str, multiple_results: bool = False):
        self.name = name
        self.multiple_results = multiple_results

    def __repr__(self):
        return self.name

    def rule_hint(self, table: dict) -> str:
        """How a user registers this primitive's missing rule of `table`; '' for funcad's
        own primitives (a library's primitives say where, see funcad.extend.core)."""
        return ""

    def bind(self, *args, **params):
        trace = ctx.trace
        if trace is None:
            rule = impl_rules.get(self)
            if rule is None:
                raise MissingRuleError(f"primitive `{self.name}` has no NumPy implementation"
                                       + (f"; register one with {self.rule_hint(impl_rules)}"
                                          if self.rule_hint(impl_rules) else ""))
            weak = None  # the operands, when the result may be weakly typed
            eager = False
            for a in args:  # one pass: funcad's arrays, weak operands, arrays over several devices
                t = type(a)
                if t is EagerArray:
                    eager = True
                elif t is WeakEagerArray or t is float or t is int or t is complex:
                    weak = args  # then the result may be weak: the shape rule says
                elif t in hooks.typed_types and self not in hooks.on_device_impls:
                    return hooks.typed_eager(self, args, params)  # a ShardedArray
            if eager:  # a strong operand: weak only where the primitive's rule ignores it
                may_be_weak = weak_type_from_some.get(self)
                weak = args if may_be_weak is not None and may_be_weak(args, params) else None
            if eager or weak is not None:  # impl rules run on plain ndarrays (no subclass dispatch)
                args = plain_args(args)
            # a new catch_warnings list, or a filter put before funcad's (NumPy's IEEE warnings stay hidden)
            if _warnings.filters is not _ieee.installed or \
                    (_ieee.installed or _ieee.NONE)[0] is not _ieee.first:
                _ieee.install()
            try:
                out = rule(*args, **params)
            except Exception as e:  # free when nothing is raised (Python >= 3.11)
                _explain_impl_error(self, args, params, e)
                raise
            if ctx.debug_nans:  # the one check debug_nans costs when it is off
                hooks.check_eager_nans(self, args, params, out)
            if weak is not None:
                return _weak_result(self, weak, params, out)
            if type(out) is _ndarray:  # the common case, inline: a read-only EagerArray view
                out = _view(out, EagerArray)
                _setflags(out, False)
                return out
            return wrap_many(out) if self.multiple_results else wrap(out)
        if ctx.vma is not None:  # tracing a shard_map body: device-varying types (transforms/vma.py)
            return ctx.vma.bind(self, trace, args, params)
        return trace.process_primitive(self, args, params)


def _some_weak(args) -> bool:
    for a in args:
        t = type(a)
        if t is WeakEagerArray or t is float or t is int or t is complex:
            return True
    return False


# Whether each result of a parameterless primitive is weak, by its operands' Python types
# (a type says whether an operand is weak: WeakEagerArray and Python numbers are; weak
# rules look at nothing else): eager code on Python scalars (a gradient at 0.3) would
# otherwise run a shape rule per operation.
_weak_types: dict = {}


def _weak_result(prim: Primitive, operands, params: dict, out):
    """The eager result of `prim` where some operands are weakly typed (Python scalars,
    WeakEagerArrays): weak where the shape rule says so, as under a trace (JAX's rule:
    weak only where every operand is, for most primitives)."""
    if params:
        key = None
    elif len(operands) == 2:  # the common case, without map and unpacking
        key = (prim, type(operands[0]), type(operands[1]))
    else:
        key = (prim, *map(type, operands))
    weak = _weak_types.get(key) if key is not None else None
    if weak is None:
        shape_rule = abstract_eval_rules.get(prim)
        out_avals = shape_rule(*[aval_of(a) for a in operands], **params) if shape_rule is not None else None
        weak = tuple(getattr(a, "weak_type", False) for a in out_avals) if prim.multiple_results \
            and out_avals is not None else getattr(out_avals, "weak_type", False)
        if key is not None:
            if len(_weak_types) > 4096:
                _weak_types.clear()
            _weak_types[key] = weak
    if not prim.multiple_results:
        return wrap_weak(out) if weak is True else wrap(out)
    if weak is False:
        weak = (False,) * len(out)
    return type(out)(wrap_weak(o) if w else wrap(o) for o, w in zip(out, weak))


def bind_below(trace, prim: Primitive, args: tuple, params: dict):
    """`prim.bind(*args, **params)` with `trace` current: how a trace hands an equation it
    leaves alone (known values, no tangents) to the trace beneath. Where bind would do
    nothing more, it goes straight to that trace's process_primitive: under nested
    transformations an equation may be handed down ten times, and bind's thread-local
    reads and argument repacking were a fifth of an eager 5th derivative. (The args come
    from a bind, so x64-off canonicalisation, done there, is already applied.)"""
    prev = ctx.trace
    ctx.trace = trace
    try:
        if trace is None or ctx.vma is not None or type(prim).bind is not Primitive.bind:
            return prim.bind(*args, **params)
        return trace.process_primitive(prim, args, params)
    finally:
        ctx.trace = prev


def _explain_impl_error(prim: Primitive, args, params, err: Exception) -> None:
    """Raise the shape rule's own error (naming the op and the types) for a failed NumPy
    call, so eager code reports a bad call as staged code does; else return."""
    rule = abstract_eval_rules.get(prim)
    if isinstance(err, FuncadError) or rule is None:
        return
    try:
        rule(*[aval_of(a) for a in args], **params)
    except FuncadError as explained:
        raise explained from None  # NumPy's own message adds nothing to the explained one
    except Exception:
        pass


class _Context(threading.local):
    """Per-thread tracing state, so threads trace independently (as in JAX)."""

    debug_nans = False  # funcad.config's debug_nans: one setting for all threads (set on the class)

    def __init__(self):
        self.trace = None
        self.source = None  # with debug_nans: the user line of the equation being re-traced
        self.vma = None  # while a shard_map body is traced: its live device-varying typing


ctx = _Context()


class set_trace:
    """Make `trace` current for the duration of a `with` block."""

    __slots__ = ("trace", "prev")

    def __init__(self, trace):
        self.trace = trace

    def __enter__(self):
        self.prev = ctx.trace
        ctx.trace = self.trace

    def __exit__(self, *exc):
        ctx.trace = self.prev


class Trace:
    """One level of interpretation. Subclasses define `process_primitive`."""

    name = "trace"

    def __init__(self, parent):
        self.parent = parent
        self.alive = True

    def process_primitive(self, prim: Primitive, args, params):
        raise NotImplementedError

    def process_custom_jvp(self, fun, jvp, args, symbolic_zeros):
        # Outside of differentiation a custom_jvp function is just its body.
        with set_trace(self):
            return fun(*args)

    def process_custom_vjp(self, fun, fwd, bwd, args):
        with set_trace(self):
            return fun(*args)

    def finish(self):
        self.alive = False
        if _options.check_tracer_leaks:
            _leaks.remember(self)

    def __repr__(self):
        return f"{type(self).__name__}"


def bind_custom_jvp(fun, jvp, args, symbolic_zeros=False):
    """Apply a function with a custom jvp rule (flat lists) under the current trace."""
    trace = ctx.trace
    if trace is None:
        return fun(*args)
    return trace.process_custom_jvp(fun, jvp, args, symbolic_zeros)


def bind_custom_vjp(fun, fwd, bwd, args):
    """Apply a function with custom fwd/bwd rules (flat lists) under the current trace."""
    trace = ctx.trace
    if trace is None:
        return fun(*args)
    return trace.process_custom_vjp(fun, fwd, bwd, args)


_LEAK_HINTS = {"jvp": "jvp (which grad, vjp, linearize, jacfwd, jacrev and hessian run)",
               "vmap": "vmap (or jacfwd/jacrev/hessian, which batch)"}


def check_alive(x):
    """Raise a clear error for a tracer whose transformation has finished."""
    if isinstance(x, Tracer) and not x._trace.alive:
        name = x._trace.name
        where = user_source()
        raise TracerLeakError(
            f"A {x.aval.str_short()} tracer from a finished {_LEAK_HINTS.get(name, name)} transformation "
            f"was used after that transformation returned{' at ' + where if where else ''}. The "
            "transformed function stored an intermediate value (in a global, a closure, a list or an "
            "object attribute) that outlived the call. Return the value from the function instead "
            "(grad and vjp take has_aux=True for extra outputs), or compute it outside the transformation.")
    return x


class Tracer:
    """A value being traced. Operators and methods are installed by funcad.numpy."""

    __slots__ = ("_trace",)
    __array_priority__ = 1000

    @property
    def aval(self) -> ShapedArray:
        raise NotImplementedError

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)

    def concrete(self):
        """The concrete value behind this tracer, or raise ConcretizationError."""
        raise ConcretizationError(_concretization_message(self))

    def __bool__(self):
        return bool(_concrete_for(self, TracerBoolConversionError))

    def __int__(self):
        return int(check_alive(self).concrete())

    # float(), complex(), .tolist() and np.asarray() always refuse, as JAX's do: the
    # concrete value of an eager grad/jvp tracer has lost the derivative, so handing it out
    # would turn into a silently zero gradient (int/bool/index/item stay allowed, as in JAX).
    def __float__(self):
        raise _conversion_error(self, ConcretizationError, "float()")

    def __complex__(self):
        raise _conversion_error(self, ConcretizationError, "complex()")

    def __index__(self):
        return int(_concrete_for(self, TracerIntegerConversionError))

    def item(self, *args):
        return np.asarray(check_alive(self).concrete()).item(*args)

    def tolist(self):
        raise _conversion_error(self, ConcretizationError, ".tolist()")

    def __setitem__(self, idx, value):
        raise TypeError(
            f"{type(self).__name__} does not support item assignment: funcad arrays are immutable, "
            "as JAX's are. Instead of `x[idx] = y`, write `x = x.at[idx].set(y)` (also .add, "
            ".multiply, .min, .max, ...).")

    def __array__(self, dtype=None, copy=None):
        raise _conversion_error(self, TracerArrayConversionError, "np.asarray()")

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    __hash__ = None  # like arrays, tracers are not hashable

    def __repr__(self):
        return f"Traced<{self.aval.str_short()}> with {self._trace.name}"


def _concrete_for(t: Tracer, error: type):
    """t's concrete value; a ConcretizationError becomes `error`, JAX's class for the
    conversion (bool -> TracerBoolConversionError, ...), with the same message."""
    try:
        return check_alive(t).concrete()
    except ConcretizationError as e:
        if type(e) is ConcretizationError:
            raise error(str(e)) from None
        raise


def _conversion_error(t: Tracer, error: type, how: str) -> ConcretizationError:
    """The error for turning t into a NumPy array or a Python number: the concretization
    message when t has no concrete value (jit), else why the derivative or batch it
    carries would be lost and what to write instead."""
    try:
        check_alive(t).concrete()
    except ConcretizationError as e:
        return e if type(e) is not ConcretizationError else error(str(e))
    return error(
        f"{how} of a traced {t.aval.str_short()} value under {t._trace.name}: the value carries a "
        "derivative (or a batch) that a NumPy array or a Python number cannot hold, so the result "
        "would silently be wrong (a zero derivative). Compute with funcad.numpy / funcad.scipy "
        "functions instead of NumPy or SciPy ones (`funcad.numpy.asarray(x)` keeps the derivative), "
        "or do the conversion outside the transformed function." + _where_concretized())


def _concretization_message(t: Tracer) -> str:
    return (f"A concrete value was needed, but got an abstract {t.aval.str_short()} value "
            f"staged by {t._trace.name}. Python control flow (`if`, `while`, `bool()`, `int()`, "
            "`np.asarray`) cannot depend on staged values. Use `funcad.lax.cond`/`funcad.numpy.where` "
            "for value-dependent choices, or mark the argument static with `static_argnums`."
            + _where_concretized())


_leaks.tracer_type = Tracer  # the leak checker finds tracers by this class


_CONVERSIONS = {"__bool__": "bool() (an `if`, `while`, `and`/`or` or `not`)", "__int__": "int()",
                "__float__": "float()", "__complex__": "complex()", "__index__": "use as an index",
                "__array__": "np.asarray()", "__len__": "len()", "item": ".item()",
                "tolist": ".tolist()"}


def _where_concretized() -> str:
    """' The value was needed by bool() at file.py:12: `if x > 0:`' (the user's line), or ''."""
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    how, frame = None, sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if how is None and code.co_name in _CONVERSIONS:
            how = _CONVERSIONS[code.co_name]
        if not os.path.abspath(code.co_filename).startswith(pkg + os.sep):
            break
        frame = frame.f_back
    if frame is None:
        return ""
    line = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
    at = f"{frame.f_code.co_filename}:{frame.f_lineno}" + (f": `{line}`" if line else "")
    return f" The value was needed by {how or 'Python'} at {at}."


def eval_jaxpr(jaxpr, consts, *args) -> list:
    """Evaluate a jaxpr with the current trace (NumPy when nothing is traced)."""
    env: dict[int, Any] = {}
    for v, x in zip(jaxpr.constvars, consts):
        env[id(v)] = x
    if len(args) != len(jaxpr.invars):
        raise TypeError(f"jaxpr takes {len(jaxpr.invars)} arguments, got {len(args)}")
    for v, x in zip(jaxpr.invars, args):
        env[id(v)] = x

    def read(a):
        return a.val if type(a) is Literal else env[id(a)]

    if ctx.debug_nans:  # re-traced equations keep the user line they came from
        return _eval_keeping_sources(jaxpr, env, read)
    for eqn in jaxpr.eqns:
        _store(env, eqn, eqn.prim.bind(*[read(a) for a in eqn.inputs], **eqn.params))
    return [read(a) for a in jaxpr.outvars]


def _store(env, eqn, out) -> None:
    if eqn.prim.multiple_results:
        for v, x in zip(eqn.outvars, out):
            env[id(v)] = x
    else:
        env[id(eqn.outvars[0])] = out


def _eval_keeping_sources(jaxpr, env, read) -> list:
    outer = ctx.source
    try:
        for eqn in jaxpr.eqns:
            ctx.source = eqn.source or outer
            _store(env, eqn, eqn.prim.bind(*[read(a) for a in eqn.inputs], **eqn.params))
    finally:
        ctx.source = outer
    return [read(a) for a in jaxpr.outvars]


def rule_for(table: dict, prim: Primitive, transform: str) -> Callable:
    rule = table.get(prim)
    if rule is None and prim.rule_hint(table):
        raise MissingRuleError(f"primitive `{prim.name}` has no {transform} rule, so it cannot be used "
                               f"under {transform}. Register one with {prim.rule_hint(table)}.")
    if rule is None:
        raise MissingRuleError(
            f"primitive `{prim.name}` has no {transform} rule, so it cannot be used under "
            f"{transform}. Wrap the computation in `funcad.custom_jvp`/`custom_vjp`, or file an "
            f"issue naming `{prim.name}` and {transform}.")
    return rule


def typecheck(jaxpr: Jaxpr) -> None:
    """Check that every variable is bound once before use and that every
    equation's output types are what its primitive's shape rule says."""
    bound: set[int] = set()

    def bind(v):
        if id(v) in bound:
            raise JaxprTypeError(f"variable {v} is bound twice")
        bound.add(id(v))

    def use(a, where):
        if isinstance(a, Var) and id(a) not in bound:
            raise JaxprTypeError(f"{where} uses {a.aval.str_short()} variable before it is bound")

    for v in jaxpr.constvars + jaxpr.invars:
        bind(v)
    for eqn in jaxpr.eqns:
        for a in eqn.inputs:
            use(a, f"equation `{eqn.prim}`")
        want = abstract_eval_rules[eqn.prim](*[a.aval for a in eqn.inputs], **eqn.params)
        want = list(want) if eqn.prim.multiple_results else [want]
        got = [v.aval for v in eqn.outvars]
        if [(a.shape, a.dtype) for a in want] != [(a.shape, a.dtype) for a in got]:
            raise JaxprTypeError(
                f"equation `{eqn.prim}` outputs {', '.join(a.str_short() for a in got)} "
                f"but its rule gives {', '.join(a.str_short() for a in want)}")
        for p in eqn.params.values():
            if isinstance(p, ClosedJaxpr):
                typecheck(p.jaxpr)
        for v in eqn.outvars:
            bind(v)
    for a in jaxpr.outvars:
        use(a, "the output")


def _call_closed_jaxpr(self, *args):
    return eval_jaxpr(self.jaxpr, self.consts, *args)


ClosedJaxpr.__call__ = _call_closed_jaxpr  # the IR knows no interpreter; this module is its evaluator
