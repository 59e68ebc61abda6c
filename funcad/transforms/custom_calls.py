"""Staged custom-derivative calls: how make_jaxpr and jit keep custom rules.

A staging trace records a custom_jvp (custom_vjp) function as one equation:
its body is traced now, with closed-over values as explicit operands, and
its rules (jvp; fwd and bwd) are traced on first use, lazily as in JAX, since
a rule commonly calls the custom function itself. Binding the equation under
any other trace rebuilds the custom function, so the rules are used wherever
the equation is later differentiated or batched: `grad(jit(f))` follows the
user's rule rather than the body.
"""
from __future__ import annotations

import numpy as np

from ..core.avals import ShapedArray, aval_of, float0, tangent_dtype, tangent_aval
from ..core.errors import FuncadTypeError
from ..core.ir import ClosedJaxpr, Literal
from ..core.staging import convert_constvars, trace_to_jaxpr
from ..core.trace import Primitive, bind_custom_jvp, bind_custom_vjp, eval_jaxpr, hooks
from ..primitives._base import zeros_tangent
from .calls import define_call
from .custom_zeros import take_zeros_info as _take_zeros_info, zeros_info as _zeros_info


def _closed_over_error(kind):
    return FuncadTypeError(
        f"a {kind} function closes over a value that is being differentiated, so its custom rule "
        "cannot account for that value's derivative. Pass the value to the function as an explicit "
        "argument instead of closing over it.")


class LazyRule:
    """A rule (a flat function) traced to a jaxpr on first use, at fixed input types."""

    __slots__ = ("fun", "in_avals", "name", "_closed")

    def __init__(self, fun, in_avals, name):
        self.fun, self.in_avals, self.name, self._closed = fun, list(in_avals), name, None

    def jaxpr(self):
        if self._closed is None:
            self._closed = trace_to_jaxpr(self.fun, self.in_avals, name=f"{self.name} rule")
        return self._closed

    def __call__(self, *args):
        closed = self.jaxpr()
        return eval_jaxpr(closed.jaxpr, closed.consts, *args)

    def __repr__(self):
        return self.name


class _CustomJvpCall(Primitive):
    """custom_jvp_call[call_jaxpr, jvp, num_consts] consts args."""

    def bind(self, *operands, call_jaxpr, jvp, num_consts):
        n = num_consts
        n_out = len(call_jaxpr.out_avals)

        def fun(*ops):
            return eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *ops)

        def rule(primals, tangents):
            if any(t is not None for t in tangents[:n]):
                raise _closed_over_error("custom_jvp")
            ps, ts = primals[n:], tangents[n:]
            if jvp.symbolic_zeros:
                nonzero = tuple(f and t is not None for t, f in zip(ts, jvp.float_in))
                ts = [t for t, nz in zip(ts, nonzero) if nz]
            else:
                nonzero = tuple(jvp.float_in)
                ts = [zeros_tangent(aval_of(p)) if t is None else t
                      for p, t, f in zip(ps, ts, nonzero) if f]
            res = jvp.at(nonzero)(*ps, *ts)
            return res[:n_out], res[n_out:]

        return bind_custom_jvp(fun, rule, list(operands), True)


class _CustomVjpCall(Primitive):
    """custom_vjp_call[call_jaxpr, fwd, bwd, num_consts] consts args."""

    def bind(self, *operands, call_jaxpr, fwd, bwd, num_consts):
        n = num_consts
        n_out = len(call_jaxpr.out_avals)
        out_avals = call_jaxpr.out_avals
        chosen = []  # the perturbation fwd ran with, which picks bwd's residual types

        def fun(*ops):
            return eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *ops)

        def fwd_rule(*ops):
            perturbed = _take_zeros_info("perturbed")
            perturbed = (True,) * len(ops) if perturbed is None else perturbed
            chosen[:] = [tuple(perturbed[n:])]
            res = fwd.at(chosen[0])(*ops[n:])
            return res[:n_out], res[n_out:]

        def bwd_rule(res, cts):
            ct_zero = _take_zeros_info("ct_zero") or (False,) * len(cts)
            cts = [zeros_tangent(a) if c is None else c for c, a in zip(cts, out_avals)]
            return [None] * n + list(bwd.at(chosen[0], tuple(ct_zero))(*res, *cts))

        bwd_rule.num_closed_over = n  # custom_vjp_jvp refuses tangents for these
        return bind_custom_vjp(fun, fwd_rule, bwd_rule, list(operands))


custom_jvp_call_p = _CustomJvpCall("custom_jvp_call", multiple_results=True)
custom_vjp_call_p = _CustomVjpCall("custom_vjp_call", multiple_results=True)


# Compiled code needs only the body (the rules were used when differentiating);
# the passes keep the call, and so the user's rules.
for _p in (custom_jvp_call_p, custom_vjp_call_p):
    define_call(_p, "call_jaxpr", optimizable=False)


def _trace_body(fun, avals):
    jaxpr, consts = convert_constvars(trace_to_jaxpr(fun, avals, name="custom function"))
    return ClosedJaxpr(jaxpr, []), consts


class _StagedJvp:
    """A staged custom_jvp's rule, traced lazily at fixed input types: once, with every
    float input's tangent (zeros instantiated), or, for a `symbolic_zeros` rule, once
    per pattern of nonzero tangents (known only when the call is differentiated)."""

    def __init__(self, jvp, in_avals, name):
        self.jvp, self.in_avals, self.name = jvp, list(in_avals), name
        self.symbolic_zeros = getattr(jvp, "symbolic_zeros", False)
        self.float_in = [tangent_dtype(a.dtype) != float0 for a in in_avals]
        self._rules = {}

    def at(self, nonzero: tuple) -> LazyRule:
        """The rule taking the primals and then the tangents at positions `nonzero`."""
        if nonzero not in self._rules:
            n, in_avals, jvp, sz = len(self.in_avals), self.in_avals, self.jvp, self.symbolic_zeros

            def flat_jvp(*xs):  # keeps no tracers: the rule lives on in the jaxpr
                ps, ts = list(xs[:n]), iter(xs[n:])
                tangents = [next(ts) if nz else None if sz else np.zeros(a.shape, float0)
                            for a, nz in zip(in_avals, nonzero)]
                outs, t_outs = jvp(ps, tangents)
                return list(outs) + [zeros_tangent(aval_of(o)) if t is None else t
                                     for o, t in zip(outs, t_outs)]
            t_avals = [ShapedArray(a.shape, a.dtype) for a, nz in zip(in_avals, nonzero) if nz]
            self._rules[nonzero] = LazyRule(flat_jvp, in_avals + t_avals, f"{self.name} jvp")
        return self._rules[nonzero]

    def __repr__(self):
        return self.name


def stage_custom_jvp(trace, fun, jvp, args):
    """Record a custom_jvp function applied to args as one equation of `trace`."""
    in_avals = [aval_of(x) for x in args]
    call, consts = _trace_body(fun, in_avals)
    rule = _StagedJvp(jvp, in_avals, getattr(fun, "__name__", "custom_jvp"))
    return trace.stage(custom_jvp_call_p, [*consts, *args],
                       dict(call_jaxpr=call, jvp=rule, num_consts=len(consts)))


class _StagedFwd:
    """A staged custom_vjp's fwd, traced lazily once per perturbation pattern (which
    inputs are differentiated is known only when the call is differentiated); a fwd
    that ignores the pattern is traced once."""

    def __init__(self, fwd, in_avals, name):
        self.fwd, self.in_avals, self.name = fwd, in_avals, name
        self.per_pattern = getattr(fwd, "symbolic_zeros", True)
        self._rules = {}

    def at(self, perturbed: tuple) -> LazyRule:
        key = perturbed if self.per_pattern else None
        if key not in self._rules:
            def flat_fwd(*xs):
                with _zeros_info("perturbed", perturbed):
                    outs, res = self.fwd(*xs)
                return [*outs, *res]
            self._rules[key] = LazyRule(flat_fwd, self.in_avals, f"{self.name} fwd")
        return self._rules[key]

    def __repr__(self):
        return f"{self.name} fwd"


class _StagedBwd:
    """A staged custom_vjp's bwd, traced lazily per (perturbation, zero cotangents)."""

    def __init__(self, bwd, fwd: _StagedFwd, out_avals, name):
        self.bwd, self.fwd, self.out_avals, self.name = bwd, fwd, list(out_avals), name
        self._rules = {}

    def at(self, perturbed: tuple, ct_zero: tuple) -> LazyRule:
        key = (perturbed, ct_zero) if self.fwd.per_pattern else None
        if key not in self._rules:
            in_avals = self.fwd.in_avals
            # the residual types are those of fwd traced at the same perturbation
            fwd_jaxpr = self.fwd.at(perturbed).jaxpr()
            res_avals = fwd_jaxpr.out_avals[len(self.out_avals):]
            # A residual fwd returned as a constant (a Python flag) reaches bwd as that
            # value, as JAX passes it on as a literal: bwd may branch on it.
            literal = {i: v.val for i, v in enumerate(fwd_jaxpr.jaxpr.outvars[len(self.out_avals):])
                       if isinstance(v, Literal)}

            def flat_bwd(*xs):
                n_res = len(xs) - len(self.out_avals)
                res = [literal.get(i, x) for i, x in enumerate(xs[:n_res])]
                with _zeros_info("ct_zero", ct_zero):
                    got = self.bwd(res, list(xs[n_res:]))
                return [zeros_tangent(a) if g is None else g for g, a in zip(got, in_avals)]
            ct = [tangent_aval(a) for a in self.out_avals]
            self._rules[key] = LazyRule(flat_bwd, list(res_avals) + ct, f"{self.name} bwd")
        return self._rules[key]

    def __repr__(self):
        return f"{self.name} bwd"


def stage_custom_vjp(trace, fun, fwd, bwd, args):
    """Record a custom_vjp function applied to args as one equation of `trace`."""
    in_avals = [aval_of(x) for x in args]
    call, consts = _trace_body(fun, in_avals)
    name = getattr(fun, "__name__", "custom_vjp")
    fwd_rules = _StagedFwd(fwd, in_avals, name)
    bwd_rules = _StagedBwd(bwd, fwd_rules, call.out_avals, name)
    return trace.stage(custom_vjp_call_p, [*consts, *args],
                       dict(call_jaxpr=call, fwd=fwd_rules, bwd=bwd_rules, num_consts=len(consts)))


hooks.stage_custom_jvp = stage_custom_jvp
hooks.stage_custom_vjp = stage_custom_vjp
