"""Control flow primitives: cond, while and scan, whose params hold closed jaxprs.

- `cond(index, *operands, branches)`: run `branches[index]` on the operands.
- `while(*cond_consts, *body_consts, *carry, cond_jaxpr, body_jaxpr, ...)`:
  `while cond(carry): carry = body(carry)`.
- `scan(*consts, *carry, *xs, jaxpr, length, reverse, ...)`: the body maps
  (consts, carry, x) -> (carry, y); the outputs are the last carry and the
  stacked ys.

Every body is traced once by funcad.lax (closure-converted: values of outer
transforms it closes over are explicit operands, concrete arrays stay as the
jaxpr's constants). The rules below transform the bodies with the jaxpr-level
transforms of jaxpr_transforms.py (jvp_jaxpr, partial_eval_jaxpr, backward,
batch_jaxpr), which re-trace them with the ordinary transforms, so they
compose to any order. They sit in transforms/, beside the call primitives,
above the transforms they use. Reverse mode needs a partial-eval rule (known part now,
unknown part staged, per-iteration residuals stacked) and a transpose rule;
while loops are differentiated in reverse by turning them into scans (see
`_while_partial_eval`).
"""
from __future__ import annotations

import numpy as np

from ..core.narrow import kind as _kind
from ..core.avals import ShapedArray, aval_of
from ..core.errors import FuncadError, FuncadTypeError, MissingRuleError
from ..core.ir import ClosedJaxpr, Jaxpr, Var
from ..core.staging import partial_eval_rules, trace_to_jaxpr
from ..core.typed_sharding import BY_SHAPE_RULE, with_dim, without_dim
from ..core.trace import (
                          Primitive, Tracer, abstract_eval_rules, batch_rules, eval_jaxpr, sharding_rules,
                          impl_rules, jvp_rules, lowering_rules, set_trace, transpose_rules,
                          some_weak, weak_type_from_some)
from ..lowering.python_source import fresh_name, nested_function, np_dtype
from ..lowering.stablehlo import compare, constants_as_arguments, convert
from ..primitives._base import defpython
from ..primitives._base import full, is_undefined, zeros_tangent
from ..primitives.elementwise import add, convert_element_type, select_n
from ..primitives.reductions import reduce_max
from ..primitives.structural import broadcast_in_dim, moveaxis, moveaxis0
from .jaxpr_transforms import (backward, batch_jaxpr, jvp_jaxpr, nonzero_tangent, partial_eval_jaxpr,
                               strip_weak)
from .passes._util import has_subjaxprs, subjaxprs
from .passes.dce import dce
from ..lowering.runtime import memo
from .vmap import batch_call
from .debugging import debug_print_p
from .jit_primitive import jit_p

# ------------------------------------------------------- jaxpr utilities ----


def _inexact(aval) -> bool:
    return _kind(aval.dtype) in "fc"  # bfloat16 and the float8s too


def _split(xs, *sizes):
    out, i = [], 0
    for n in sizes:
        out.append(list(xs[i:i + n]))
        i += n
    out.append(list(xs[i:]))
    return out


def _unstack(aval) -> ShapedArray:
    return ShapedArray(aval.shape[1:], aval.dtype, sharding=without_dim(aval._sharding, 0))


def with_outputs(closed: ClosedJaxpr, outvars) -> ClosedJaxpr:
    """`closed` returning `outvars` instead, without the equations they do not need."""
    return dce(closed.with_outputs(outvars))


def _variant_ids(jaxpr: Jaxpr, mask) -> set:
    """Ids of the variables that depend on the inputs flagged in `mask`."""
    dep = {id(v) for v, m in zip(jaxpr.invars, mask) if m}
    for eqn in jaxpr.eqns:
        if any(type(a) is Var and id(a) in dep for a in eqn.inputs):
            dep.update(id(v) for v in eqn.outvars)
    return dep


def _reads(jaxpr: Jaxpr) -> set:
    used = {id(a) for e in jaxpr.eqns for a in e.inputs if type(a) is Var}
    return used | {id(a) for a in jaxpr.outvars if type(a) is Var}


def _is_concrete(x) -> bool:
    if not isinstance(x, Tracer):
        return True
    try:
        x.concrete()
        return True
    except FuncadError:
        return False


def _to0(x, d, axis_size):
    return moveaxis0(x, d, axis_size)


def _lane_mask(pred, shape):
    """A batched (n,) predicate broadcast against a value of `shape` = (n, ...)."""
    return broadcast_in_dim(pred, tuple(shape), (0,))


# ------------------------------------------------------ eager execution ----
# Called eagerly, JAX runs a cond, while or scan as one compiled XLA program (its
# primitives are applied through jit). funcad does the same: run op by op on NumPy, a
# loop's float results would drift from JAX's by a few ulps per step (NumPy's pairwise
# sums, its dot and transcendental functions round differently from XLA's), which a
# long chain, such as an MCMC warmup, turns into different numbers. A body holding a
# primitive without a lowering rule, or a funcad.debug.print, runs on the interpreter.


def _compiled_impl(prim, interpret):
    def impl(*args, **params):
        anchor = (params["branches"][0] if "branches" in params
                  else params["jaxpr"] if "jaxpr" in params else params["body_jaxpr"])
        if not memo(anchor, ("lowerable",), lambda: _lowerable(params)):
            return interpret(*args, **params)
        avals = tuple(aval_of(a) for a in args)
        key = ("eager", prim.name, avals, tuple((k, v) for k, v in params.items()
                                                if not has_subjaxprs({k: v})))
        closed = memo(anchor, key, lambda: trace_to_jaxpr(
            lambda *xs: prim.bind(*xs, **params), list(avals), name=prim.name))
        with constants_as_arguments():  # as JAX's: the body's constants are operands
            return jit_p.bind(*args, jaxpr=closed, name=prim.name, backend=None)
    return impl


def _lowerable(params) -> bool:
    """Whether jit can compile these bodies: every primitive lowers, and no
    funcad.debug.print sits inside them (jit prints only outside control flow)."""
    for j in subjaxprs(params):
        for eqn in j.eqns:
            if eqn.prim not in lowering_rules or eqn.prim is debug_print_p or (
                    has_subjaxprs(eqn.params) and not _lowerable(eqn.params)):
                return False
    return True


# ------------------------------------------------------------------- cond ----

cond_p = Primitive("cond", multiple_results=True)


def _cond_impl(index, *ops, branches):
    i = int(np.clip(int(np.asarray(index)), 0, len(branches) - 1))
    return branches[i](*ops)


def _cond_abstract_eval(index, *ops, branches):
    if index.shape != () or index.dtype.kind not in "iu":
        raise FuncadTypeError(f"cond: the branch index must be a scalar integer, got {index.str_short()}")
    return list(branches[0].out_avals)


def _cond_jvp(primals, tangents, *, branches):
    index, ops = primals[0], primals[1:]
    in_nz = [nonzero_tangent(p, t) for p, t in zip(ops, tangents[1:])]
    n_out = len(branches[0].out_avals)
    out_nz = [False] * n_out
    for b in branches:  # a tangent is nonzero if it is in any branch
        out_nz = [a or b for a, b in zip(out_nz, jvp_jaxpr(b, in_nz, [False] * n_out)[1])]
    jvps = tuple(jvp_jaxpr(b, in_nz, out_nz)[0] for b in branches)
    outs = cond_p.bind(index, *ops, *[t for t, nz in zip(tangents[1:], in_nz) if nz], branches=jvps)
    it = iter(outs[n_out:])
    return outs[:n_out], [next(it) if nz else None for nz in out_nz]


def _cond_partial_eval(trace, args, params):
    branches = params["branches"]
    index, ops = args[0], args[1:]
    unknowns = [trace.is_own(x) for x in ops]
    if trace.is_own(index) or all(unknowns):
        return trace.stage(cond_p, args, params)
    n_out = len(branches[0].out_avals)
    out_uk = [False] * n_out
    for b in branches:
        out_uk = [a or b for a, b in zip(out_uk, partial_eval_jaxpr(b, unknowns, [False] * n_out)[2])]
    splits = [partial_eval_jaxpr(b, unknowns, out_uk) for b in branches]
    # Each branch has its own residuals; every known branch returns all of them
    # (fillers for the other branches'), and each unknown branch reads its own.
    res_avals = [[strip_weak(a) for a in known.out_avals[len(known.out_avals) - nres:]]
                 for known, _, _, nres in splits]
    offsets = np.cumsum([0] + [len(r) for r in res_avals]).tolist()
    all_res = [a for r in res_avals for a in r]
    known_ops = [x for x, u in zip(ops, unknowns) if not u]
    n_known_out = out_uk.count(False)

    def known_branch(i, known):
        def fun(*xs):
            outs = eval_jaxpr(known.jaxpr, known.consts, *xs)
            # Ones, not zeros: under vmap a batched cond runs every branch on every
            # lane, and 1/x or log x of a filler 1 stays finite (no spurious warnings).
            res = [full(a.shape, 1, a.dtype) for a in all_res]
            res[offsets[i]:offsets[i + 1]] = outs[n_known_out:]
            return outs[:n_known_out] + res
        return trace_to_jaxpr(fun, [strip_weak(aval_of(x)) for x in known_ops], name="cond_known")

    def unknown_branch(i, unknown):
        j = unknown.jaxpr
        n = len(res_avals[i])
        others = [Var(a) for a in all_res]
        others[offsets[i]:offsets[i + 1]] = j.invars[:n]
        return unknown.replace(invars=others + j.invars[n:])

    with set_trace(trace.parent):
        k_outs = cond_p.bind(index, *known_ops, branches=tuple(
            known_branch(i, s[0]) for i, s in enumerate(splits)))
    residuals = k_outs[n_known_out:]
    u_outs = trace.stage(cond_p, [index, *residuals, *[x for x, u in zip(ops, unknowns) if u]],
                         dict(branches=tuple(unknown_branch(i, s[1]) for i, s in enumerate(splits))))
    k_it, u_it = iter(k_outs[:n_known_out]), iter(u_outs)
    return [next(u_it) if u else next(k_it) for u in out_uk]


def _cond_transpose(cts, index, *ops, branches):
    if is_undefined(index):
        raise FuncadTypeError("cond: cannot transpose with respect to the branch index")
    undefined = [is_undefined(o) for o in ops]
    res = [o for o in ops if not is_undefined(o)]
    lin_avals = [o.aval for o in ops if is_undefined(o)]
    ct_mask = [c is not None for c in cts]
    present = [c for c in cts if c is not None]
    wanted = [_inexact(a) for a in lin_avals]

    def transposed(b):
        def fun(*xs):
            it = iter(xs[len(res):])
            cts_in = backward(b, undefined, xs[:len(res)], [next(it) if m else None for m in ct_mask])
            return [zeros_tangent(a) if c is None else c for c, a, w in zip(cts_in, lin_avals, wanted) if w]
        return trace_to_jaxpr(fun, [strip_weak(aval_of(x)) for x in res + present], name="transpose")

    outs = iter(cond_p.bind(index, *res, *present, branches=tuple(transposed(b) for b in branches)))
    w = iter(wanted)
    return [None] + [(next(outs) if next(w) else None) if u else None for u in undefined]


def _cond_batch(vals, dims, *, axis_size, branches):
    n = axis_size
    index, ops = vals[0], vals[1:]
    ops = [o if d is None else _to0(o, d, n) for o, d in zip(ops, dims[1:])]
    batched = [d is not None for d in dims[1:]]
    if dims[0] is not None:
        # A predicate that differs per lane: run every branch, then pick per lane.
        idx = _to0(index, dims[0], n)
        outs = []
        for b in branches:
            pairs = batch_call(lambda *ys, b=b: eval_jaxpr(b.jaxpr, b.consts, *ys), ops,
                               [0 if x else None for x in batched], n)
            outs.append([_to0(v, d, n) for v, d in pairs])
        picked = [select_n(_lane_mask(idx, aval_of(cases[0]).shape), *cases) for cases in zip(*outs)]
        return picked, [0] * len(picked)
    n_out = len(branches[0].out_avals)
    out_b = [False] * n_out
    for b in branches:
        out_b = [x or y for x, y in zip(out_b, batch_jaxpr(b, batched, n, [False] * n_out)[1])]
    new = tuple(batch_jaxpr(b, batched, n, out_b)[0] for b in branches)
    return cond_p.bind(index, *ops, branches=new), [0 if b else None for b in out_b]


impl_rules[cond_p] = _compiled_impl(cond_p, _cond_impl)
weak_type_from_some[cond_p] = some_weak  # results typed by the body, not the operands
abstract_eval_rules[cond_p] = _cond_abstract_eval
sharding_rules[cond_p] = BY_SHAPE_RULE
jvp_rules[cond_p] = _cond_jvp
partial_eval_rules[cond_p] = _cond_partial_eval
transpose_rules[cond_p] = _cond_transpose
batch_rules[cond_p] = _cond_batch


def _cond_python(eqn, a):
    """The branches as nested functions; the index picks one, clamped as in the impl."""
    branches = eqn.params["branches"]
    base = fresh_name("cond")
    names = [f"{base}_branch{i}" for i in range(len(branches))]
    defs = [nested_function(b, n) for b, n in zip(branches, names)]
    pick = f"({', '.join(names)},)[int(np.clip({a[0]}, 0, {len(branches) - 1}))]"
    return "\n".join(defs + [f"{pick}({', '.join(a[1:])})"])


defpython(cond_p, _cond_python)

# ------------------------------------------------------------------ while ----

while_p = Primitive("while", multiple_results=True)


def _while_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, max_steps):
    cc, bc, carry = _split(args, cond_nconsts, body_nconsts)
    while bool(np.asarray(eval_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts, *cc, *carry)[0])):
        carry = eval_jaxpr(body_jaxpr.jaxpr, body_jaxpr.consts, *bc, *carry)
    return [np.asarray(c, a.dtype) for c, a in zip(carry, body_jaxpr.out_avals)]


def _while_abstract_eval(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, max_steps):
    return list(body_jaxpr.in_avals[body_nconsts:])


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, max_steps):
    ncc, nbc = cond_nconsts, body_nconsts
    cc, bc, init = _split(primals, ncc, nbc)
    _, t_bc, t_init = _split(tangents, ncc, nbc)
    bc_nz = [nonzero_tangent(p, t) for p, t in zip(bc, t_bc)]
    carry_nz = [nonzero_tangent(p, t) for p, t in zip(init, t_init)]
    for _ in range(len(init) + 1):  # grow the nonzero carry tangents to a fixed point
        body_jvp, out_nz = jvp_jaxpr(body_jaxpr, bc_nz + carry_nz, carry_nz)
        if out_nz == carry_nz:
            break
        carry_nz = [a or b for a, b in zip(carry_nz, out_nz)]
    nk, n_tbc, n_tk = len(init), sum(bc_nz), sum(carry_nz)
    # body_jvp: (bc, carry, t_bc, t_carry) -> (carry, t_carry); reorder to (bc, t_bc, carry, t_carry).
    order = (list(range(nbc)) + list(range(nbc + nk, nbc + nk + n_tbc)) + list(range(nbc, nbc + nk))
             + list(range(nbc + nk + n_tbc, nbc + nk + n_tbc + n_tk)))
    body_jvp = body_jvp.permute(order, range(nk + n_tk))
    t_avals = [strip_weak(a) for a, nz in zip(body_jaxpr.in_avals[nbc:], carry_nz) if nz]
    cond_jvp = cond_jaxpr.with_extra_inputs(t_avals)  # the condition ignores the tangents
    t0 = [t if nonzero_tangent(p, t) else zeros_tangent(p) for p, t, nz in zip(init, t_init, carry_nz) if nz]
    outs = while_p.bind(*cc, *bc, *[t for t, nz in zip(t_bc, bc_nz) if nz], *init, *t0,
                        cond_jaxpr=cond_jvp, body_jaxpr=body_jvp, cond_nconsts=ncc,
                        body_nconsts=nbc + n_tbc, max_steps=max_steps)
    it = iter(outs[nk:])
    return outs[:nk], [next(it) if nz else None for nz in carry_nz]


def _while_partial_eval(trace, args, params):
    """Reverse mode through a while loop: make it a scan, which can be transposed.

    With concrete known inputs (eager code) the loop is run once to count its
    steps, then differentiated as a scan of that many steps. Otherwise
    (under jit) the trip count is unknown: with `max_steps` it becomes a scan
    of max_steps steps whose carry is frozen once the condition is false.
    Either way the scan stores its residuals per step: O(steps) memory.
    """
    cond, body = params["cond_jaxpr"], params["body_jaxpr"]
    ncc, nbc, max_steps = params["cond_nconsts"], params["body_nconsts"], params["max_steps"]
    unknowns = [trace.is_own(x) for x in args]
    cc_uk, bc_uk, carry_uk = _split(unknowns, ncc, nbc)
    cc, bc, init = _split(args, ncc, nbc)
    nk = len(init)
    if any(cc_uk):
        return trace.stage(while_p, args, params)
    for _ in range(nk + 1):
        known, _, out_uk, nres = partial_eval_jaxpr(body, bc_uk + carry_uk, carry_uk)
        if out_uk == carry_uk:
            break
        carry_uk = [a or b for a, b in zip(carry_uk, out_uk)]
    cj = cond.jaxpr
    if any(id(v) in _reads(cj) for v, u in zip(cj.invars[ncc:], carry_uk) if u):
        # The condition depends on unknown values: forward mode only.
        return trace.stage(while_p, args, params)
    known_args = [x for x, u in zip(args, unknowns) if not u]

    def count():
        return _count_steps(trace, cond, known, carry_uk, nres, cc, [x for x, u in zip(bc, bc_uk) if not u],
                            [x for x, u in zip(init, carry_uk) if not u], ncc)

    steps = None
    if all(_is_concrete(x) for x in known_args):
        steps = count()
    elif max_steps is None:
        # Under vmap the count may still be one number for every lane.
        steps = count()
        steps = int(steps) if _is_concrete(steps) else None
    if steps is not None:
        scan_body, scan_consts = body, list(bc)
    elif max_steps is not None:
        steps, scan_body, scan_consts = max_steps, _masked_body(cond, body, ncc, nbc), list(cc) + list(bc)
    else:
        # Staged whole: forward mode (and a loop whose result is unused) still works; only
        # transposing it fails, with _TRIP_COUNT's explanation.
        return trace.stage(while_p, args, params)
    scan_params = dict(jaxpr=scan_body, length=int(steps), reverse=False,
                       num_consts=len(scan_consts), num_carry=nk, unroll=1)
    return _scan_partial_eval(trace, scan_consts + list(init), scan_params)


def _count_steps(trace, cond, known_body, carry_uk, nres, cc, known_bc, known_init, ncc):
    """Run the known part of a while loop with a step counter; return the count
    (an int, or a tracer when the count is not known now)."""
    kb = known_body
    kb = with_outputs(kb, kb.jaxpr.outvars[:len(kb.jaxpr.outvars) - nres])
    n_kbc = len(known_bc)
    counter = ShapedArray((), np.int64)

    def count_body(*xs):
        outs = eval_jaxpr(kb.jaxpr, kb.consts, *xs[:-1])
        return list(outs) + [add(xs[-1], np.int64(1))]

    body = trace_to_jaxpr(count_body, [strip_weak(a) for a in kb.in_avals] + [counter], name="count")
    cj = cond.jaxpr
    carry_vars = [v for v, u in zip(cj.invars[ncc:], carry_uk) if not u]
    cond_k = cond.replace(invars=cj.invars[:ncc] + carry_vars).with_extra_inputs([counter])
    with set_trace(trace.parent):
        outs = while_p.bind(*cc, *known_bc, *known_init, np.int64(0), cond_jaxpr=cond_k, body_jaxpr=body,
                            cond_nconsts=ncc, body_nconsts=n_kbc, max_steps=None)
    count = outs[-1]
    return int(count) if _is_concrete(count) else count


def _masked_body(cond, body, ncc, nbc) -> ClosedJaxpr:
    """(cond consts, body consts, carry) -> carry: one step of the loop, or the
    carry unchanged once the condition is false (a cond, so that the step's
    derivative is not even evaluated then)."""
    carry_avals = [strip_weak(a) for a in body.in_avals[nbc:]]
    bc_avals = [strip_weak(a) for a in body.in_avals[:nbc]]
    keep_vars = [Var(a) for a in bc_avals + carry_avals]
    keep = ClosedJaxpr(Jaxpr([], keep_vars, [], keep_vars[nbc:]), [])
    step = body

    def fun(*xs):
        cc, bc, carry = _split(xs, ncc, nbc)
        pred = eval_jaxpr(cond.jaxpr, cond.consts, *cc, *carry)[0]
        return cond_p.bind(convert_element_type(pred, np.int32), *bc, *carry, branches=(keep, step))

    return trace_to_jaxpr(fun, [strip_weak(a) for a in cond.in_avals[:ncc]] + bc_avals + carry_avals,
                          name="masked_step")


_TRIP_COUNT = (
    "reverse-mode differentiation of while_loop needs its trip count, which is not known "
    "here (the loop runs under jit or vmap, where its inputs are abstract). Pass "
    "`max_steps=N` to funcad.lax.while_loop to bound it: it is then differentiated as a "
    "scan of N steps whose carry stops changing once the condition is false. Or use "
    "funcad.lax.fori_loop/scan, or forward mode (jvp, jacfwd).")


def _while_transpose(cts, *args, cond_jaxpr, body_nconsts, cond_nconsts, **params):
    carry = args[cond_nconsts + body_nconsts:]
    cj = cond_jaxpr.jaxpr
    if any(is_undefined(x) and id(v) in _reads(cj)
           for v, x in zip(cj.invars[cond_nconsts:], carry)):
        raise MissingRuleError(
            "while_loop cannot be transposed here: its condition depends on values being "
            "differentiated. Reverse mode supports loops whose condition reads only primal values.")
    raise FuncadTypeError(_TRIP_COUNT)


def _while_batch(vals, dims, *, axis_size, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts,
                 max_steps):
    n, ncc, nbc = axis_size, cond_nconsts, body_nconsts
    vals = [v if d is None else _to0(v, d, n) for v, d in zip(vals, dims)]
    cc, bc, init = _split(vals, ncc, nbc)
    cc_b, bc_b, carry_b = _split([d is not None for d in dims], ncc, nbc)
    nk = len(init)
    for _ in range(nk + 1):
        body_b, out_b = batch_jaxpr(body_jaxpr, bc_b + carry_b, n, carry_b)
        if out_b == carry_b:
            break
        carry_b = [a or b for a, b in zip(carry_b, out_b)]
    cond_b, pred_b = batch_jaxpr(cond_jaxpr, cc_b + carry_b, n, [False])
    if pred_b[0]:
        # Lanes finish at different steps: run until every lane is done; a lane
        # that is done keeps its carry. Then every carry is batched.
        carry_b = [True] * nk
        body_b, _ = batch_jaxpr(body_jaxpr, bc_b + carry_b, n, carry_b)
        cond_b, _ = batch_jaxpr(cond_jaxpr, cc_b + carry_b, n, [True])
        init = [v if d is not None else _to0(v, None, n) for v, d in zip(init, dims[ncc + nbc:])]
        cond_avals = [strip_weak(a) for a in cond_b.in_avals]
        body_avals = [strip_weak(a) for a in body_b.in_avals]

        def any_lane(*xs):
            return [reduce_max(eval_jaxpr(cond_b.jaxpr, cond_b.consts, *xs)[0], (0,))]

        def masked_step(*xs):
            c, b, carry = _split(xs, ncc, nbc)
            pred = eval_jaxpr(cond_b.jaxpr, cond_b.consts, *c, *carry)[0]
            new = eval_jaxpr(body_b.jaxpr, body_b.consts, *b, *carry)
            return [select_n(_lane_mask(pred, aval_of(o).shape), old, o) for old, o in zip(carry, new)]

        new_cond = trace_to_jaxpr(any_lane, cond_avals, name="vmap")
        new_body = trace_to_jaxpr(masked_step, cond_avals[:ncc] + body_avals, name="vmap")
        outs = while_p.bind(*cc, *cc, *bc, *init, cond_jaxpr=new_cond, body_jaxpr=new_body,
                            cond_nconsts=ncc, body_nconsts=ncc + nbc, max_steps=max_steps)
        return outs, [0] * nk
    init = [v if (d is not None or not b) else _to0(v, None, n)
            for v, d, b in zip(init, dims[ncc + nbc:], carry_b)]
    outs = while_p.bind(*cc, *bc, *init, cond_jaxpr=cond_b, body_jaxpr=body_b, cond_nconsts=ncc,
                        body_nconsts=nbc, max_steps=max_steps)
    return outs, [0 if b else None for b in carry_b]


impl_rules[while_p] = _compiled_impl(while_p, _while_impl)
weak_type_from_some[while_p] = some_weak  # results typed by the body, not the operands
abstract_eval_rules[while_p] = _while_abstract_eval
sharding_rules[while_p] = BY_SHAPE_RULE
jvp_rules[while_p] = _while_jvp
partial_eval_rules[while_p] = _while_partial_eval
transpose_rules[while_p] = _while_transpose
batch_rules[while_p] = _while_batch


def _while_python(eqn, a):
    """`while cond(carry): carry = body(carry)`, the two as nested functions."""
    p = eqn.params
    cc, bc, init = _split(a, p["cond_nconsts"], p["body_nconsts"])
    base = fresh_name("while")
    carry = f"{base}_carry"
    return "\n".join([
        nested_function(p["cond_jaxpr"], f"{base}_cond", single=True),
        nested_function(p["body_jaxpr"], f"{base}_body"),
        f"{carry} = ({', '.join(init)}{',' if len(init) == 1 else ''})",
        f"while {base}_cond({', '.join([*cc, f'*{carry}'])}):",
        f"    {carry} = {base}_body({', '.join([*bc, f'*{carry}'])})",
        carry])


defpython(while_p, _while_python)

# ------------------------------------------------------------------- scan ----

scan_p = Primitive("scan", multiple_results=True)


def _scan_impl(*args, jaxpr, length, reverse, num_consts, num_carry, unroll):
    consts, carry, xs = _split(args, num_consts, num_carry)
    xs = [np.asarray(x) for x in xs]
    out_avals = jaxpr.out_avals
    ys = []
    for i in (range(length - 1, -1, -1) if reverse else range(length)):
        out = eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *consts, *carry, *[x[i] for x in xs])
        carry = out[:num_carry]
        ys.append(out[num_carry:])
    if reverse:
        ys.reverse()
    carry = [np.asarray(c, a.dtype) for c, a in zip(carry, out_avals)]
    y_avals = out_avals[num_carry:]
    stacked = [np.stack([np.asarray(y[k], a.dtype) for y in ys]) if ys else np.zeros((0,) + a.shape, a.dtype)
               for k, a in enumerate(y_avals)]
    return carry + stacked


def _scan_abstract_eval(*avals, jaxpr, length, reverse, num_consts, num_carry, unroll):
    carry = list(jaxpr.in_avals[num_consts:num_consts + num_carry])
    return carry + [ShapedArray((length,) + a.shape, a.dtype, a.weak_type, with_dim(a._sharding, 0))
                    for a in jaxpr.out_avals[num_carry:]]


def _scan_jvp(primals, tangents, *, jaxpr, length, reverse, num_consts, num_carry, unroll):
    nc, nk = num_consts, num_carry
    nz = [nonzero_tangent(p, t) for p, t in zip(primals, tangents)]
    const_nz, carry_nz, xs_nz = _split(nz, nc, nk)
    ny = len(jaxpr.out_avals) - nk
    for _ in range(nk + 1):  # grow the nonzero carry tangents to a fixed point
        body_jvp, out_nz = jvp_jaxpr(jaxpr, const_nz + carry_nz + xs_nz, carry_nz + [False] * ny)
        if out_nz[:nk] == carry_nz:
            break
        carry_nz = [a or b for a, b in zip(carry_nz, out_nz[:nk])]
    nx = len(xs_nz)
    n_in = nc + nk + nx
    tc, tk, tx = sum(const_nz), sum(carry_nz), sum(xs_nz)
    ty = sum(out_nz[nk:])
    # body_jvp: (c, k, x, tc, tk, tx) -> (k, y, tk, ty); scan wants (c, tc, k, tk, x, tx) -> (k, tk, y, ty).
    r = range
    in_order = (list(r(nc)) + list(r(n_in, n_in + tc)) + list(r(nc, nc + nk))
                + list(r(n_in + tc, n_in + tc + tk)) + list(r(nc + nk, n_in))
                + list(r(n_in + tc + tk, n_in + tc + tk + tx)))
    out_order = list(r(nk)) + list(r(nk + ny, nk + ny + tk)) + list(r(nk, nk + ny)) + \
        list(r(nk + ny + tk, nk + ny + tk + ty))
    body_jvp = body_jvp.permute(in_order, out_order)
    consts, init, xs = _split(primals, nc, nk)
    t_consts, t_init, t_xs = _split(tangents, nc, nk)
    t0 = [t if nonzero_tangent(p, t) else zeros_tangent(p) for p, t, z in zip(init, t_init, carry_nz) if z]
    outs = scan_p.bind(*consts, *[t for t, z in zip(t_consts, const_nz) if z], *init, *t0,
                       *xs, *[t for t, z in zip(t_xs, xs_nz) if z],
                       jaxpr=body_jvp, length=length, reverse=reverse, num_consts=nc + tc,
                       num_carry=nk + tk, unroll=unroll)
    carry, t_carry, ys, t_ys = _split(outs, nk, tk, ny)
    it_k, it_y = iter(t_carry), iter(t_ys)
    return carry + ys, ([next(it_k) if z else None for z in carry_nz]
                        + [next(it_y) if z else None for z in out_nz[nk:]])


def _scan_partial_eval(trace, args, params):
    """Split a scan whose inputs are partly known (reverse mode's forward pass).

    The known scan runs now and also outputs the residuals the unknown scan
    needs, one per step, stacked. Residuals that do not change across steps
    (they depend only on known constants) are computed once, outside the
    loop, and residuals that are known xs are passed through unstacked again.
    """
    jaxpr, nc, nk = params["jaxpr"], params["num_consts"], params["num_carry"]
    unknowns = [trace.is_own(x) for x in args]
    if all(unknowns):
        return trace.stage(scan_p, args, params)
    ny = len(jaxpr.out_avals) - nk
    const_uk, carry_uk, xs_uk = _split(unknowns, nc, nk)
    for _ in range(nk + 1):
        known, unknown, out_uk, nres = partial_eval_jaxpr(jaxpr, const_uk + carry_uk + xs_uk,
                                                    carry_uk + [False] * ny)
        if out_uk[:nk] == carry_uk:
            break
        carry_uk = [a or b for a, b in zip(carry_uk, out_uk[:nk])]
    ys_uk = out_uk[nk:]
    consts, init, xs = _split(args, nc, nk)
    k_consts = [x for x, u in zip(consts, const_uk) if not u]
    k_init = [x for x, u in zip(init, carry_uk) if not u]
    k_xs = [x for x, u in zip(xs, xs_uk) if not u]
    kj = known.jaxpr
    n_kc, n_kk = len(k_consts), len(k_init)
    n_kout = len(kj.outvars) - nres
    res_out = kj.outvars[n_kout:]
    variant = _variant_ids(kj, [False] * n_kc + [True] * (len(kj.invars) - n_kc))
    kx_ids = {id(v): i for i, v in enumerate(kj.invars[n_kc + n_kk:])}
    inv_idx, fwd_idx, stack_idx = [], [], []
    for i, r in enumerate(res_out):
        if type(r) is not Var or id(r) not in variant:
            inv_idx.append(i)
        elif id(r) in kx_ids:
            fwd_idx.append(i)
        else:
            stack_idx.append(i)
    with set_trace(trace.parent):
        inv_vals = []
        if inv_idx:  # loop-invariant residuals: computed once, outside the loop
            hoist = dce(known.replace(
                invars=kj.invars[:n_kc], eqns=[e for e in kj.eqns if not any(id(v) in variant for v in e.outvars)],
                outvars=[res_out[i] for i in inv_idx]))
            inv_vals = eval_jaxpr(hoist.jaxpr, hoist.consts, *k_consts)
        k_body = with_outputs(known, kj.outvars[:n_kout] + [res_out[i] for i in stack_idx])
        k_outs = []
        if k_body.jaxpr.outvars:
            k_outs = scan_p.bind(*k_consts, *k_init, *k_xs, **dict(params, jaxpr=k_body, num_consts=n_kc,
                                                                   num_carry=n_kk))
    k_carry, k_ys, stacked = _split(k_outs, n_kk, n_kout - n_kk)
    uj = unknown.jaxpr
    res_vars, u_in = uj.invars[:nres], uj.invars[nres:]
    n_uc, n_uk = const_uk.count(True), carry_uk.count(True)
    u_invars = ([res_vars[i] for i in inv_idx] + u_in[:n_uc + n_uk] + [res_vars[i] for i in stack_idx]
                + [res_vars[i] for i in fwd_idx] + u_in[n_uc + n_uk:])
    u_body = unknown.replace(invars=u_invars)
    u_args = (list(inv_vals) + [x for x, u in zip(consts, const_uk) if u]
              + [x for x, u in zip(init, carry_uk) if u] + list(stacked)
              + [k_xs[kx_ids[id(res_out[i])]] for i in fwd_idx] + [x for x, u in zip(xs, xs_uk) if u])
    u_outs = trace.stage(scan_p, u_args, dict(params, jaxpr=u_body, num_consts=len(inv_idx) + n_uc,
                                              num_carry=n_uk))
    u_carry, u_ys = u_outs[:n_uk], u_outs[n_uk:]
    kc, uc, ky, uy = iter(k_carry), iter(u_carry), iter(k_ys), iter(u_ys)
    return ([next(uc) if u else next(kc) for u in carry_uk]
            + [next(uy) if u else next(ky) for u in ys_uk])


def _scan_transpose(cts, *args, jaxpr, length, reverse, num_consts, num_carry, unroll):
    """The transposed scan runs the other way: it carries the cotangents of the
    carry and accumulates those of the linear constants; each step's
    cotangents of the linear xs are its outputs. Residual constants and xs
    (the defined inputs) are read as they are; the carry is linear throughout."""
    nc, nk = num_consts, num_carry
    consts, carry, xs = _split(args, nc, nk)
    c_lin = [is_undefined(c) for c in consts]
    x_lin = [is_undefined(x) for x in xs]
    res_c = [c for c in consts if not is_undefined(c)]
    res_x = [x for x in xs if not is_undefined(x)]
    carry_avals = [c.aval if is_undefined(c) else aval_of(c) for c in carry]
    acc_avals = [c.aval for c in consts if is_undefined(c) and _inexact(c.aval)]
    k_ct = [_inexact(a) for a in carry_avals]
    x_ct_avals = [_unstack(x.aval) for x in xs if is_undefined(x) and _inexact(x.aval)]
    ct_carry, ct_ys = cts[:nk], cts[nk:]
    y_mask = [c is not None for c in ct_ys]
    ct_carry0 = [zeros_tangent(a) if c is None else c for c, a, w in zip(ct_carry, carry_avals, k_ct) if w]
    undefined = c_lin + [True] * nk + x_lin
    n_rc, n_acc, n_k, n_rx = len(res_c), len(acc_avals), len(ct_carry0), len(res_x)

    def body(*zs):
        rc, acc, ctk, rx, cty = _split(zs, n_rc, n_acc, n_k, n_rx)
        it_k, it_y = iter(ctk), iter(cty)
        cts_out = [next(it_k) if w else None for w in k_ct] + [next(it_y) if m else None for m in y_mask]
        cts_in = backward(jaxpr, undefined, rc + rx, cts_out)
        ct_c, ct_k, ct_x = _split(cts_in, c_lin.count(True), nk)
        lin_c_avals = [c.aval for c in consts if is_undefined(c)]
        ct_c = [c for c, a in zip(ct_c, lin_c_avals) if _inexact(a)]
        new_acc = [a if c is None else add(a, c) for a, c in zip(acc, ct_c)]
        new_k = [zeros_tangent(a) if c is None else c for c, a, w in zip(ct_k, carry_avals, k_ct) if w]
        lin_x_avals = [_unstack(x.aval) for x in xs if is_undefined(x)]
        ct_x = [zeros_tangent(a) if c is None else c for c, a in zip(ct_x, lin_x_avals) if _inexact(a)]
        return new_acc + new_k + ct_x

    present = [c for c in ct_ys if c is not None]
    in_avals = ([strip_weak(aval_of(c)) for c in res_c] + [strip_weak(a) for a in acc_avals]
                + [strip_weak(a) for a, w in zip(carry_avals, k_ct) if w]
                + [_unstack(aval_of(x)) for x in res_x] + [_unstack(aval_of(c)) for c in present])
    body_t = trace_to_jaxpr(body, in_avals, name="transpose")
    outs = scan_p.bind(*res_c, *[zeros_tangent(a) for a in acc_avals], *ct_carry0, *res_x, *present,
                       jaxpr=body_t, length=length, reverse=not reverse, num_consts=n_rc,
                       num_carry=n_acc + n_k, unroll=unroll)
    acc, ctk, ctx_ = _split(outs, n_acc, n_k)
    it_a, it_k, it_x = iter(acc), iter(ctk), iter(ctx_)
    out = [(next(it_a) if _inexact(c.aval) else None) if is_undefined(c) else None for c in consts]
    out += [next(it_k) if w else None for w in k_ct]
    out += [(next(it_x) if _inexact(x.aval) else None) if is_undefined(x) else None for x in xs]
    return out


def _scan_batch(vals, dims, *, axis_size, jaxpr, length, reverse, num_consts, num_carry, unroll):
    n, nc, nk = axis_size, num_consts, num_carry
    consts, init, xs = _split(vals, nc, nk)
    c_d, k_d, x_d = _split(list(dims), nc, nk)
    consts = [v if d is None else _to0(v, d, n) for v, d in zip(consts, c_d)]
    xs = [v if d is None else moveaxis(_to0(v, d, n), 0, 1) for v, d in zip(xs, x_d)]  # scan axis first
    const_b = [d is not None for d in c_d]
    carry_b = [d is not None for d in k_d]
    xs_b = [d is not None for d in x_d]
    ny = len(jaxpr.out_avals) - nk
    for _ in range(nk + 1):
        body_b, out_b = batch_jaxpr(jaxpr, const_b + carry_b + xs_b, n, carry_b + [False] * ny)
        if out_b[:nk] == carry_b:
            break
        carry_b = [a or b for a, b in zip(carry_b, out_b[:nk])]
    init = [_to0(v, d, n) if b else v for v, d, b in zip(init, k_d, carry_b)]
    outs = scan_p.bind(*consts, *init, *xs, jaxpr=body_b, length=length, reverse=reverse,
                       num_consts=nc, num_carry=nk, unroll=unroll)
    return outs, [0 if b else None for b in carry_b] + [1 if b else None for b in out_b[nk:]]


impl_rules[scan_p] = _compiled_impl(scan_p, _scan_impl)
weak_type_from_some[scan_p] = some_weak  # results typed by the body, not the operands
abstract_eval_rules[scan_p] = _scan_abstract_eval
sharding_rules[scan_p] = BY_SHAPE_RULE
jvp_rules[scan_p] = _scan_jvp
partial_eval_rules[scan_p] = _scan_partial_eval
transpose_rules[scan_p] = _scan_transpose
batch_rules[scan_p] = _scan_batch


def _scan_python(eqn, a):
    """A `for` loop over the leading axis calling the body as a nested function;
    the per-step outputs are stacked after the loop."""
    p = eqn.params
    consts, init, xs = _split(a, p["num_consts"], p["num_carry"])
    nk, length = p["num_carry"], p["length"]
    base = fresh_name("scan")
    carry, ys, out, i = f"{base}_carry", f"{base}_ys", f"{base}_out", f"{base}_i"
    steps = f"range({length - 1}, -1, -1)" if p["reverse"] else f"range({length})"
    lines = [
        nested_function(p["jaxpr"], f"{base}_body"),
        f"{carry}, {ys} = ({', '.join(init)}{',' if len(init) == 1 else ''}), []",
        f"for {i} in {steps}:",
        f"    {out} = {base}_body({', '.join([*consts, f'*{carry}', *[f'{x}[{i}]' for x in xs]])})",
        f"    {carry} = {out}[:{nk}]",
        f"    {ys}.append({out}[{nk}:])"]
    if p["reverse"]:
        lines.append(f"{ys}.reverse()")
    stacked = [f"np.array([_y[{k}] for _y in {ys}], dtype={np_dtype(y.dtype)}).reshape({(length,) + y.shape})"
               for k, y in enumerate(p["jaxpr"].out_avals[nk:])]
    return "\n".join(lines + [f"(*{carry}, {', '.join(stacked)})" if stacked else carry])


defpython(scan_p, _scan_python)


# ------------------------------------------------------------------ lowering ----
# cond is a stablehlo.case; while and scan are stablehlo.while loops. Branch and
# body jaxprs are emitted inline into the regions. Regions may read values
# defined outside them (the operands of a case, hoisted constants); a while
# loop's constants travel in its carry, as its regions see only the carry.

def _cond_lowering(ctx, index, *ops, branches):
    index = convert(ctx, index, np.int32)
    regions = [ctx.region([], lambda c, b=b: c.call(b, ops)) for b in branches]
    return ctx.op("stablehlo.case", [index], ctx.out_avals, regions=regions)


def _while_lowering(ctx, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, max_steps):
    ncc, nbc = cond_nconsts, body_nconsts
    avals = [a.aval for a in args]

    def cond_region(c, *xs):
        return c.call(cond_jaxpr, list(xs[:ncc]) + list(xs[ncc + nbc:]))

    def body_region(c, *xs):
        return list(xs[:ncc + nbc]) + c.call(body_jaxpr, list(xs[ncc:]))

    outs = ctx.op("stablehlo.while", args, avals,
                  regions=[ctx.region(avals, cond_region), ctx.region(avals, body_region)])
    return outs[ncc + nbc:]



def _scan_lowering(ctx, *args, jaxpr, length, reverse, num_consts, num_carry, unroll):
    """A while loop over a step counter; each iteration runs `unroll` steps, reading
    xs with dynamic_slice and writing ys with dynamic_update_slice. The steps
    left over (length % unroll) follow the loop, unrolled."""
    nc, nk = num_consts, num_carry
    consts, init, xs = list(args[:nc]), list(args[nc:nc + nk]), list(args[nc + nk:])
    nx = len(xs)
    y_avals = ctx.out_avals[nk:]
    ys = [ctx.full(0, a.dtype, a.shape) for a in y_avals]
    u = max(1, min(int(unroll), length)) if length else 1
    trips, rest = divmod(length, u)
    # A 32-bit step counter where the length allows (as JAX's): XLA's index arithmetic
    # and dynamic-slice clamping are cheaper in 32 bits (~3% of a 10^5-step small loop).
    it = np.int32 if length < 2**31 else np.int64
    i_aval = ShapedArray((), it)

    def step(c, t, consts, carry, xs, ys):
        """One step at position t (an `it` Value): returns (carry, ys)."""
        if reverse:
            t = c.op1("stablehlo.subtract", [c.constant(length - 1, it), t], i_aval)
        zero = c.constant(0, it)
        x_t = []
        for x in xs:
            shape = x.aval.shape
            sl = c.op1("stablehlo.dynamic_slice", [x, t] + [zero] * (len(shape) - 1),
                       ShapedArray((1,) + shape[1:], x.aval.dtype),
                       f"slice_sizes = array<i64: {', '.join(map(str, (1,) + shape[1:]))}>")
            x_t.append(c.op1("stablehlo.reshape", [sl], ShapedArray(shape[1:], x.aval.dtype)))
        outs = c.call(jaxpr, consts + carry + x_t)
        new_ys = []
        for y, o in zip(ys, outs[nk:]):
            shape = y.aval.shape
            o1 = c.op1("stablehlo.reshape", [o], ShapedArray((1,) + shape[1:], y.aval.dtype))
            new_ys.append(c.op1("stablehlo.dynamic_update_slice", [y, o1, t] + [zero] * (len(shape) - 1),
                                y.aval))
        return list(outs[:nk]), new_ys

    carry = init
    if trips:
        loop_args = [ctx.constant(0, it)] + consts + carry + xs + ys
        avals = [a.aval for a in loop_args]

        def cond_region(c, i, *rest_):
            return [compare(c, i, c.constant(trips, it), "LT")]

        def body_region(c, i, *vals):
            cs, k, x, y = (list(vals[:nc]), list(vals[nc:nc + nk]), list(vals[nc + nk:nc + nk + nx]),
                           list(vals[nc + nk + nx:]))
            base = c.op1("stablehlo.multiply", [i, c.constant(u, it)], i_aval)
            for j in range(u):
                t = base if j == 0 else c.op1("stablehlo.add", [base, c.constant(j, it)], i_aval)
                k, y = step(c, t, cs, k, x, y)
            i1 = c.op1("stablehlo.add", [i, c.constant(1, it)], i_aval)
            return [i1] + cs + k + x + y

        outs = ctx.op("stablehlo.while", loop_args, avals,
                      regions=[ctx.region(avals, cond_region), ctx.region(avals, body_region)])
        carry, ys = outs[1 + nc:1 + nc + nk], outs[1 + nc + nk + nx:]
    for j in range(rest):
        carry, ys = step(ctx, ctx.constant(trips * u + j, it), consts, carry, xs, ys)
    return list(carry) + list(ys)


lowering_rules[cond_p] = _cond_lowering
lowering_rules[while_p] = _while_lowering
lowering_rules[scan_p] = _scan_lowering
