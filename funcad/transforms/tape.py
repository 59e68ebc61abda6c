"""Reverse mode on a tape: vjp as jvp whose tangent operations are recorded as they run,
then walked backwards with the transpose rules.

It computes what linearize-then-transpose computes (the same primitives on the same
values, in the same order), without the linear jaxpr in between: no variables, no
equations and no constants to name, and no pass to find the linear equations, since
everything on the tape is linear. Under nested eager derivatives every operation is
recorded once per level, so this bookkeeping was most of their time.

An operation that needs the partial evaluator (a primitive with a partial eval rule:
jit, checkpoint and the other calls, cond, scan, while, shard_map; or a custom_jvp or
custom_vjp function applied to tangents) is partially evaluated on its own, and the
tape holds its small linear jaxpr, transposed by `backward_pass` in its turn.
"""
from __future__ import annotations

import numpy as np

from ..core import x64 as _x64
from ..core.eager import EagerArray, WeakEagerArray
from ..core.avals import ShapedArray, aval_of, float0, tangent_aval, tangent_dtype
from ..core.staging import StagingTrace, partial_eval_rules
from ..core.trace import (TRANSPOSED_ON_ZERO, Trace, Tracer, abstract_eval_rules, bind_below, bind_custom_jvp,
                          bind_custom_vjp, check_alive, ctx, rule_for, set_trace, transpose_rules)
from ..core.typed_sharding import with_shardings
from ..primitives._base import UndefinedPrimal
from ..primitives.elementwise import add
from .jvp import JVPTrace, with_tangent
from .transpose import backward_pass, live_ids, typed_as


# (primitive, x64, each input's shape, dtype and weak type) -> the output type(s), for
# parameterless primitives on unsharded types (their shape rules read nothing else)
_out_types: dict = {}


_PLAIN = frozenset((int, bool, str, float, type(None)))


def _plain(v) -> bool:
    """Whether a parameter is a value that its hash and equality stand for (ints, dtypes,
    tuples of them): unlike an object hashed by identity, it can key a cache."""
    t = type(v)
    if t in _PLAIN or isinstance(v, np.dtype):
        return True
    if t is tuple:
        for e in v:
            if type(e) not in _PLAIN and not _plain(e):
                return False
        return True
    return False


class TapeTracer(Tracer):
    """A tangent on the tape: only its type is known until the backward walk."""

    __slots__ = ("_aval",)

    def __init__(self, trace, aval):
        self._trace = trace
        self._aval = aval

    @property
    def aval(self):
        return self._aval


class _Staged:
    """A tape entry partially evaluated on its own: `closed` maps the tangents `ins` to
    the tangents `outs`."""

    __slots__ = ("closed", "ins", "outs")

    def __init__(self, closed, ins, outs):
        self.closed, self.ins, self.outs = closed, ins, outs


class TapeTrace(Trace):
    """The trace beneath jvp during vjp: primal operations go on to the parent trace at
    once; tangent operations are recorded on `tape` as (prim, args, params, outputs)."""

    name = "linearize"  # its tracers are linearize's tangents, in errors too

    def __init__(self, parent):
        super().__init__(parent)
        self.tape: list = []

    def finish(self):
        # Not remembered for check_tracer_leaks: the tape holds its tracers on purpose (a
        # vjp's pullback keeps it), and a tangent reaches user code only inside a
        # JVPTracer, whose own trace's check reports the leak.
        self.alive = False

    def process_primitive(self, prim, args, params):
        for x in args:
            if type(x) is TapeTracer and x._trace is self:
                break
        else:  # no tangent: run now on the parent trace
            return bind_below(self.parent, prim, args, params)
        if prim in partial_eval_rules:
            return self._staged(lambda *xs: prim.bind(*xs, **params), args)
        # A tangent operation's shape rule runs once per (primitive, x64, plain params, each
        # operand's shape, dtype and weak type). The key is read off the operands; their
        # types are built only when it is new.
        key = [prim, _x64.enabled]
        if params:
            for v in params.values():
                if not _plain(v):  # a jaxpr, a function, a sharding: no key
                    return self._record(prim, args, params, self._shape_rule(prim, self._avals(args), params))
            key += (tuple(params.items()), tuple(map(type, params.values())))  # 1, 1.0 and True differ
        for x in args:
            t = type(x)
            if t is EagerArray or t is WeakEagerArray:
                key += (x.shape, x.dtype, t is WeakEagerArray)
                continue
            if t is TapeTracer and x._trace is self:
                a = x._aval
            else:
                check_alive(x)
                a = aval_of(x)
            if type(a) is not ShapedArray or a._sharding is not None:
                key = None
                break
            key += (a.shape, a.dtype, a.weak_type)
        if key is None:
            return self._record(prim, args, params, self._shape_rule(prim, self._avals(args), params))
        key = tuple(key)
        out_avals = _out_types.get(key)
        if out_avals is None:
            if len(_out_types) > 4096:
                _out_types.clear()
            out_avals = _out_types[key] = self._shape_rule(prim, self._avals(args), params)
        return self._record(prim, args, params, out_avals)

    def _avals(self, args) -> list:
        avals = []
        for x in args:
            if type(x) is TapeTracer and x._trace is self:
                avals.append(x._aval)
            else:
                check_alive(x)
                avals.append(aval_of(x))
        return avals

    def _record(self, prim, args, params, out_avals):
        if prim.multiple_results:
            outs = [TapeTracer(self, a) for a in out_avals]
        else:
            outs = TapeTracer(self, out_avals)
        self.tape.append((prim, args, params, outs))
        return outs

    @staticmethod
    def _shape_rule(prim, in_avals, params):
        rule = abstract_eval_rules.get(prim) or rule_for(abstract_eval_rules, prim, "shape inference")
        out_avals = rule(*in_avals, **params)
        # sharding in types, as the staging trace does: only when an operand has one
        if any(a._sharding is not None for a in in_avals) or params.get("out_sharding") is not None:
            out_avals = with_shardings(prim, in_avals, out_avals, params)
        return out_avals

    def process_custom_jvp(self, fun, jvp, args, symbolic_zeros):
        if not any(self._is_own(x) for x in args):
            with set_trace(self.parent):
                return bind_custom_jvp(fun, jvp, args, symbolic_zeros)
        return self._staged(lambda *xs: bind_custom_jvp(fun, jvp, list(xs), symbolic_zeros), args)

    def process_custom_vjp(self, fun, fwd, bwd, args):
        if not any(self._is_own(x) for x in args):
            with set_trace(self.parent):
                return bind_custom_vjp(fun, fwd, bwd, args)
        return self._staged(lambda *xs: bind_custom_vjp(fun, fwd, bwd, list(xs)), args)

    def _is_own(self, x) -> bool:
        return type(x) is TapeTracer and x._trace is self

    def _staged(self, apply, args):
        """`apply(*args)` partially evaluated on a staging trace of its own; the tape holds
        the linear jaxpr of its tangent outputs."""
        pe = StagingTrace(self.parent, known_passthrough=True, name="linearize")
        ins, subs = [], {}
        for x in args:
            if self._is_own(x) and id(x) not in subs:
                subs[id(x)] = pe.new_arg(x._aval)
                ins.append(x)
        try:
            with set_trace(pe):
                outs = apply(*[subs[id(x)] if self._is_own(x) else x for x in args])
            many = isinstance(outs, (list, tuple))
            flat = list(outs) if many else [outs]
            staged = [o for o in flat if pe.is_own(o)]
            closed = pe.to_jaxpr(staged)
        finally:
            pe.finish()
        new = {id(o): TapeTracer(self, o.aval) for o in staged}
        self.tape.append(_Staged(closed, ins, [new[id(o)] for o in staged]))
        flat = [new.get(id(o), o) for o in flat]
        return flat if many else flat[0]

    def backward(self, outs, cts_out, ins) -> list:
        """Cotangents of the tangents `ins` given those of the tangents `outs` (None: a
        symbolic zero, in and out), walking the tape backwards; as backward_pass does for
        a linear jaxpr, and in the same order."""
        ct_env: dict = {}
        get, pop = ct_env.get, ct_env.pop

        def add_cts(vs, cts):  # the hot loop of reverse mode, kept to plain dict operations
            for v, ct in zip(vs, cts):
                if ct is None or type(v) is not TapeTracer or v._trace is not self or v._aval.dtype == float0:
                    continue
                k = id(v)
                prev = get(k)
                ct_env[k] = ct if prev is None else add(prev, ct)

        add_cts(outs, cts_out)
        live = None
        for entry in reversed(self.tape):
            if type(entry) is _Staged:
                cts = [pop(id(v), None) for v in entry.outs]
                if any(c is not None for c in cts):
                    add_cts(entry.ins, backward_pass(entry.closed.jaxpr, entry.closed.consts, cts))
                continue
            prim, args, params, out = entry
            if prim.multiple_results:
                cts = [pop(id(v), None) for v in out]
                if all(c is None for c in cts):
                    if prim not in TRANSPOSED_ON_ZERO:
                        continue
                    if live is None:
                        live = live_ids(outs, cts_out, [
                            (e.ins, e.outs) if type(e) is _Staged else
                            (e[1], e[3] if e[0].multiple_results else [e[3]]) for e in self.tape])
                    if not any(id(v) in live for v in out):
                        continue  # dead code (JAX removes it before transposing)
            else:
                cts = pop(id(out), None)
                if cts is None:
                    continue
            targs = [UndefinedPrimal(x._aval) if type(x) is TapeTracer and x._trace is self else x
                     for x in args]
            rule = transpose_rules.get(prim) or rule_for(transpose_rules, prim,
                                                         "transpose (reverse-mode differentiation)")
            add_cts(args, rule(cts, *targs, **params))
        return [typed_as(v._aval, get(id(v))) for v in ins]


class Recording:
    """vjp_flat's steps for a caller that calls the function itself, inside `with`:

        rec = Recording(primals)
        with rec:
            p_out, backward = rec.outputs(fun(*rec.ins))

    `grad` calls the user's function this way, with no wrapper frames in between:
    under a nested eager derivative every level's frames stay on CPython's stack for
    each operation of the levels inside it, and a deeper stack spans more of the
    interpreter's 16 KB frame chunks (each new one an mmap).

    Integer inputs, and those `in_nzs` marks False, get no tangent.
    """

    __slots__ = ("tape", "jvp", "ins", "tangent_in", "prev")

    def __init__(self, primals, in_nzs=None):
        tape = self.tape = TapeTrace(ctx.trace)
        jvp = self.jvp = JVPTrace(tape)
        self.ins, self.tangent_in = [], []
        for i, p in enumerate(primals):
            a = aval_of(p)
            t = TapeTracer(tape, tangent_aval(a))
            self.tangent_in.append(t)
            nz = tangent_dtype(a.dtype) != float0 and (in_nzs is None or in_nzs[i])
            self.ins.append(with_tangent(jvp, p, t if nz else None))

    def __enter__(self):
        self.prev = ctx.trace
        ctx.trace = self.jvp

    def __exit__(self, *exc):
        ctx.trace = self.prev
        self.jvp.finish()
        self.tape.finish()

    def outputs(self, outs, out_nzs=None):
        """(primals_out, backward) for the function's flat outputs, where backward(cts_out)
        gives the input cotangents (None: a symbolic zero, in and out); `out_nzs`, a list
        if given, receives whether each output's tangent may be nonzero."""
        unpack = self.jvp.unpack
        p_out, t_out = [], []
        for o in outs:
            p, t = unpack(o)
            p_out.append(p)
            t_out.append(t)
        if out_nzs is not None:
            out_nzs.extend(t is not None for t in t_out)
        tape, ins = self.tape, self.tangent_in

        def backward(cts_out):
            return tape.backward(t_out, cts_out, ins)

        return p_out, backward


def vjp_flat(fun, primals, in_nzs=None, out_nzs=None):
    """Run `fun` (flat lists in and out) at `primals`, recording its tangent operations.
    Returns (primals_out, backward) where backward(cts_out) gives the input cotangents
    (None: a symbolic zero, in and out).

    Integer inputs, and those `in_nzs` marks False, get no tangent; `out_nzs`, a list
    if given, receives whether each output's tangent may be nonzero.
    """
    rec = Recording(primals, in_nzs)
    with rec:
        return rec.outputs(fun(*rec.ins), out_nzs)
