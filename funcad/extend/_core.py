"""Primitives and the jaxpr IR for libraries (JAX's `extend.core` namespace).

A `Primitive` made here is a funcad primitive: its rules go into funcad's own
rule tables, so it works under grad, vmap and jit like funcad's.

>>> import numpy as np, funcad
>>> from funcad.extend.core import Primitive
>>> twice_p = Primitive("twice")
>>> twice_p.def_impl(lambda x: 2 * x)
<function <lambda> at ...>
>>> twice_p.def_abstract_eval(lambda x: x)
<function <lambda> at ...>
>>> twice_p.bind(np.float32(3.0))
Array(6., dtype=float32)
"""
from __future__ import annotations

from typing import Any, Callable, Iterator

import numpy as np

from ..core.avals import ShapedArray, aval_of, tangent_dtype
from ..core.eager import EagerArray
from ..core.errors import ConcretizationError, JaxprTypeError, UnsupportedError
from ..core.ir import ClosedJaxpr, Eqn as JaxprEqn, Jaxpr, Literal, Var
from ..core.trace import typecheck
from ..core.trace import (Primitive as _CorePrimitive, Tracer, abstract_eval_rules, batch_rules,
                           ctx as _ctx, eval_jaxpr, impl_rules, jvp_rules, lowering_rules,
                           transpose_rules)

__all__ = ["ClosedJaxpr", "Effect", "Effects", "Jaxpr", "JaxprEqn", "JaxprTypeError", "Literal",
           "Primitive", "Var", "array_types", "check_jaxpr", "concrete_or_error", "find_top_trace",
           "get_opaque_trace_state", "jaxpr_as_fun", "jaxprs_in_params", "mapped_aval", "new_jaxpr_eqn", "no_effects",
           "primal_dtype_to_tangent_dtype", "primitives", "subjaxprs", "unmapped_aval",
           "valid_jaxtype"]

# the types of concrete array values funcad takes as jaxpr inputs
array_types: set = {np.ndarray, EagerArray, np.bool_, np.int8, np.int16, np.int32, np.int64,
                    np.uint8, np.uint16, np.uint32, np.uint64, np.float16, np.float32, np.float64,
                    np.complex64, np.complex128}


class Effect:
    """Base class of side effects a primitive may declare (funcad declares none for libraries)."""


Effects = set
no_effects: frozenset = frozenset()


def as_aval(x) -> ShapedArray:
    """funcad's type for an abstract value given as any object with a shape and a dtype
    (funcad's or JAX's ShapedArray, a ShapeDtypeStruct)."""
    if type(x) is ShapedArray:
        return x
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return ShapedArray(x.shape, x.dtype, bool(getattr(x, "weak_type", False)))
    raise TypeError(f"an abstract evaluation rule returned {x!r}, which is not an abstract value; "
                    "return a ShapedArray (or a ShapeDtypeStruct) per output")


class Primitive(_CorePrimitive):
    """A primitive defined by a library: give it an implementation and an abstract
    evaluation rule, then (in funcad.interpreters) jvp, transpose, batching and
    lowering rules. Set `multiple_results = True` for a primitive with a list of outputs."""

    __slots__ = ()

    def def_impl(self, impl: Callable) -> Callable:
        """Evaluate eagerly with `impl(*arrays, **params)` (funcad or NumPy code)."""
        def rule(*args, **params):
            out = impl(*args, **params)
            return [np.asarray(o) for o in out] if self.multiple_results else np.asarray(out)
        impl_rules[self] = rule
        return impl

    def def_abstract_eval(self, abstract_eval: Callable) -> Callable:
        """Types of the outputs: `abstract_eval(*avals, **params)` returns an aval
        (a list of them for `multiple_results`)."""
        def rule(*avals, **params):
            out = abstract_eval(*avals, **params)
            return [as_aval(o) for o in out] if self.multiple_results else as_aval(out)
        abstract_eval_rules[self] = rule
        return abstract_eval

    def def_effectful_abstract_eval(self, effectful_abstract_eval: Callable) -> Callable:
        """As def_abstract_eval, for a rule returning `(avals, effects)`. funcad has no
        library-defined effects, so the effects must be empty."""
        def rule(*avals, **params):
            out, effects = effectful_abstract_eval(*avals, **params)
            if effects:
                raise UnsupportedError(
                    f"primitive `{self.name}` declared the effects {set(effects)}, but funcad has no "
                    "effect system for library primitives; return no effects, or express the side "
                    "effect with funcad.debug.callback / funcad.experimental.io_callback")
            return [as_aval(o) for o in out] if self.multiple_results else as_aval(out)
        abstract_eval_rules[self] = rule
        return effectful_abstract_eval

    def rule_hint(self, table: dict) -> str:
        return _HINTS.get(id(table), "")

    def impl(self, *args, **params):
        return self.bind(*args, **params) if _ctx.trace is None else _eager_only(self)

    def abstract_eval(self, *avals, **params):
        """`(out_avals, effects)`, as JAX's `Primitive.abstract_eval` returns them."""
        return abstract_eval_rules[self](*avals, **params), no_effects


_HINTS = {id(impl_rules): "`p.def_impl(impl)`",
          id(abstract_eval_rules): "`p.def_abstract_eval(rule)`",
          id(jvp_rules): "`funcad.interpreters.ad.primitive_jvps[p] = rule` (or ad.defjvp)",
          id(transpose_rules): "`funcad.interpreters.ad.primitive_transposes[p] = rule` (or ad.deflinear2)",
          id(batch_rules): "`funcad.interpreters.batching.primitive_batchers[p] = rule` (or "
                           "batching.defvectorized / defbroadcasting)",
          id(lowering_rules): "`funcad.interpreters.mlir.register_lowering(p, mlir.lower_fun(impl, "
                              "multiple_results=...))`, `impl` written with funcad ops"}


def _eager_only(p):
    raise ConcretizationError(f"{p.name}.impl runs the primitive on concrete arrays; under a "
                              f"transformation call {p.name}.bind instead")


def jaxpr_as_fun(closed_jaxpr: ClosedJaxpr) -> Callable:
    """The closed jaxpr as a Python function of its inputs returning the list of outputs.

    >>> import numpy as np, funcad, funcad.numpy as jnp
    >>> jaxpr_as_fun(funcad.make_jaxpr(jnp.cos)(np.float32(0)))(np.float32(0))
    [Array(1., dtype=float32)]
    """
    return lambda *args: eval_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.consts, *args)


def jaxprs_in_params(params: dict) -> Iterator[Jaxpr]:
    """The jaxprs an equation's params hold (a call's or a control-flow op's bodies)."""
    for v in params.values():
        for x in (v if isinstance(v, (tuple, list)) else [v]):
            if isinstance(x, ClosedJaxpr):
                yield x.jaxpr
            elif isinstance(x, Jaxpr):
                yield x


def subjaxprs(jaxpr: Jaxpr) -> Iterator[Jaxpr]:
    """The jaxprs nested one level inside `jaxpr`'s equations."""
    for eqn in jaxpr.eqns:
        yield from jaxprs_in_params(eqn.params)


def check_jaxpr(jaxpr: Jaxpr) -> None:
    """Raise JaxprTypeError if `jaxpr` is ill-typed."""
    typecheck(jaxpr)


def new_jaxpr_eqn(invars, outvars, primitive, params, effects=no_effects, source_info=None,
                  ctx=None) -> JaxprEqn:
    """An equation `outvars = primitive[params] invars`."""
    if effects:
        raise UnsupportedError("new_jaxpr_eqn: effects= must be empty; funcad has no effect system "
                               "for library primitives")
    return JaxprEqn(primitive, list(invars), list(outvars), dict(params),
                    source_info if isinstance(source_info, str) else None)


def find_top_trace(xs) -> Any:
    """The innermost transformation among the tracers in `xs`, else the current one
    (None when evaluating eagerly)."""
    traces = [x._trace for x in xs if isinstance(x, Tracer)]
    return traces[-1] if traces else _ctx.trace


class _TraceState:
    __slots__ = ("trace",)

    def __init__(self, trace):
        self.trace = trace

    def __eq__(self, other):
        return type(other) is _TraceState and other.trace is self.trace

    def __hash__(self):
        return id(self.trace)


def get_opaque_trace_state(convention=None) -> _TraceState:
    """A token equal to another exactly when both were taken under the same
    transformation (equinox uses it to detect a change of trace)."""
    return _TraceState(_ctx.trace)


def concrete_or_error(force: Callable | None, val, context: str = ""):
    """`force(val)` for a concrete `val`; a ConcretizationError naming `context` for an abstract one."""
    force = force or (lambda x: x)
    if isinstance(val, Tracer):
        try:
            return force(val.concrete())
        except ConcretizationError as e:
            raise ConcretizationError(f"{context}: {e}" if context else str(e)) from None
    return force(val)


def primal_dtype_to_tangent_dtype(dtype) -> np.dtype:
    """float0 for integer and boolean dtypes, else the dtype itself."""
    return tangent_dtype(dtype)


def valid_jaxtype(x) -> bool:
    """Whether funcad accepts `x` as an array value."""
    try:
        aval_of(x)
    except TypeError:
        return False
    return True


def mapped_aval(size: int, axis: int | None, aval: ShapedArray) -> ShapedArray:
    """`aval` without its mapped axis `axis` (of length `size`)."""
    if axis is None:
        return aval
    if aval.shape[axis] != size:
        raise ValueError(f"mapped_aval: axis {axis} of {aval.str_short()} has length "
                         f"{aval.shape[axis]}, not {size}")
    return ShapedArray(aval.shape[:axis] + aval.shape[axis + 1:], aval.dtype, aval.weak_type)


def unmapped_aval(size: int, axis: int | None, aval: ShapedArray, explicit_mesh_axis=None) -> ShapedArray:
    """`aval` with a new axis of length `size` at `axis`."""
    if explicit_mesh_axis is not None:
        raise UnsupportedError("unmapped_aval: explicit_mesh_axis= needs explicit sharding in types, "
                               "which funcad lacks; pass None")
    if axis is None:
        return aval
    return ShapedArray(aval.shape[:axis] + (size,) + aval.shape[axis:], aval.dtype, aval.weak_type)


