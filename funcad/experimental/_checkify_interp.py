"""The checkify interpreter: evaluate a jaxpr with the current trace, threading an Error.

`checkify_jaxpr` walks the equations as `eval_jaxpr` does, binding each primitive on
the current trace (NumPy eagerly, the staging trace under jit, the batch trace under
vmap), so the checks it adds are ordinary funcad ops that jit, vmap and grad
transform. A rule per instrumented primitive runs it and records a possible error
with the next code (program order, so the smallest code that fired is the first error).

- nan_checks: the primitives of `NAN_PRIMITIVES` (JAX's list) check their outputs.
- div_checks: `div` checks its divisor for zeros (before its NaN check).
- index_checks: `dynamic_slice`, `dynamic_update_slice`, `gather` and `scatter_add`
  check their start indices against the operand (the payload is the first bad index).
- `check` equations are discharged into the error when user_checks are enabled.

Bodies are rewritten to take and return the error's leaves: `jit` is bound again with
the checkified body; cond branches, while and scan bodies likewise, after a first pass
that finds every effect the bodies can add (inactive placeholders for them, so the
carry and the branches have one structure). Other calls (checkpoint, the custom
derivative calls, linear_solve, custom_vmap) run unchanged; their errors come from
checkifying their body on `stop_gradient`ed inputs beside them, as JAX does for
custom derivatives (the call's own derivative rules stay the user's).
"""
from __future__ import annotations

import numpy as np

from .. import lax as _lax
from .. import numpy as _fnp
from ..core.avals import ShapedArray, aval_of
from ..core.ir import ClosedJaxpr, Literal
from ..core.pytree import tree_flatten, tree_unflatten
from ..core.staging import trace_to_jaxpr
from ..core.trace import call_rules
from ..lowering.runtime import memo
from ..primitives import collectives as _coll, convolution as _conv, elementwise as _E, fft as _fft
from ..primitives import indexing as _indexing, linalg as _linalg, reductions as _R, rng as _rng
from ..primitives import special as _special, structural as _structural
from ..transforms.linear_solve import linear_solve_p
from ..transforms.control_flow import cond_p, scan_p, while_p
from ..core.sharding import PartitionSpec
from ..transforms.jit import jit_p
from ..transforms.shard_map import _bind as _bind_shard_map, _params as _shard_map_params, shard_map_p
from ._checkify_error import (DivisionByZeroError, Error, NaNError, OOBError, _Spec, _effect_of,
                              _reduce_any, check_p, update_error)

__all__ = ["Context", "checkify_jaxpr", "checkify_rules", "NAN_PRIMITIVES"]


class Context:
    """The next free check code."""

    __slots__ = ("code",)

    def __init__(self, start: int = 0):
        self.code = start

    def next_code(self) -> int:
        self.code += 1
        return self.code - 1


def _assert(ctx: Context, error: Error, pred, cls, static: tuple, payload: list) -> Error:
    code = ctx.next_code()
    spec = _Spec((cls, static, None))
    return update_error(error, pred, np.int32(code), {code: spec}, payload, _effect_of(cls, payload))


def checkify_jaxpr(ctx: Context, closed: ClosedJaxpr, enabled: frozenset, error: Error, *args):
    """Evaluate `closed` on `args` with the current trace, adding the `enabled` checks to
    `error`. Returns (error, outputs)."""
    jaxpr = closed.jaxpr
    env = {id(v): x for v, x in zip(jaxpr.constvars, closed.consts)}
    env.update((id(v), x) for v, x in zip(jaxpr.invars, args))

    def read(a):
        return a.val if type(a) is Literal else env[id(a)]

    for eqn in jaxpr.eqns:
        ins = [read(a) for a in eqn.inputs]
        rule = checkify_rules.get(eqn.prim)
        if rule is not None:
            error, out = rule(ctx, error, enabled, eqn, ins)
        elif eqn.prim in call_rules:
            error, out = _other_call(ctx, error, enabled, eqn, ins)
        else:
            out = eqn.prim.bind(*ins, **eqn.params)
        if eqn.prim.multiple_results:
            env.update((id(v), x) for v, x in zip(eqn.outvars, out))
        else:
            env[id(eqn.outvars[0])] = out
    return error, [read(a) for a in jaxpr.outvars]


# --------------------------------------------------------------- NaN, div ----

def _nan_check(ctx, error, enabled, prim, out):
    if NaNError not in enabled:
        return error
    outs = out if prim.multiple_results else [out]
    flags = [_fnp.any(_fnp.isnan(x)) for x in outs if np.dtype(aval_of(x).dtype).kind in "fc"]
    if not flags:
        return _assert(ctx, error, np.bool_(False), NaNError, (prim.name,), [])
    any_nan = flags[0]
    for f in flags[1:]:
        any_nan = _fnp.logical_or(any_nan, f)
    return _assert(ctx, error, any_nan, NaNError, (prim.name,), [])


def _nan_rule(ctx, error, enabled, eqn, ins):
    out = eqn.prim.bind(*ins, **eqn.params)
    return _nan_check(ctx, error, enabled, eqn.prim, out), out


def _div_rule(ctx, error, enabled, eqn, ins):
    if DivisionByZeroError in enabled:
        error = _assert(ctx, error, _fnp.any(_fnp.equal(ins[1], 0)), DivisionByZeroError, (), [])
    return _nan_rule(ctx, error, enabled, eqn, ins)


# ---------------------------------------------------------------- indexing ----

def _oob_payload(mask, indices, axes, shape):
    """[index, axis, axis size] of the first out-of-bounds entry of `indices` (JAX's payload)."""
    flat = _fnp.argmin(_fnp.logical_not(_fnp.ravel(mask)))
    last = np.shape(indices)[-1] if np.ndim(indices) else 1
    axis = _fnp.asarray(np.asarray(axes, np.int32))[flat % last]
    size = _fnp.asarray(np.asarray(shape, np.int32)[np.asarray(axes, np.int64)] if len(axes) else
                        np.zeros(0, np.int32))[flat % last]
    index = _fnp.ravel(indices)[flat]
    return _fnp.stack([_lax.convert_element_type(index, np.int32), axis, size])


def _oob(ctx, error, prim_name, operand_shape, mask, indices, axes):
    payload = _oob_payload(mask, indices, axes, operand_shape)
    return _assert(ctx, error, _fnp.any(mask), OOBError, (prim_name, tuple(operand_shape)), [payload])


def _window_rule(n_before):
    """dynamic_slice (operand, *starts) and dynamic_update_slice (operand, update, *starts)."""
    def rule(ctx, error, enabled, eqn, ins):
        out = eqn.prim.bind(*ins, **eqn.params)
        if OOBError not in enabled or len(ins) == n_before:
            return error, out
        shape = aval_of(ins[0]).shape
        sizes = eqn.params["slice_sizes"] if n_before == 1 else aval_of(ins[1]).shape
        starts = _fnp.stack([_fnp.asarray(s) for s in ins[n_before:]])
        mask = (starts < 0) | (starts + np.asarray(sizes, np.int64).astype(starts.dtype)
                               > np.asarray(shape, np.int64).astype(starts.dtype))
        return _oob(ctx, error, eqn.prim.name, shape, mask, starts, range(len(shape))), out
    return rule


def _point_rule(ctx, error, enabled, eqn, ins):
    """gather (x, idx) and scatter_add (x, idx, updates): idx[..., k] indexes axis k."""
    out = eqn.prim.bind(*ins, **eqn.params)
    if OOBError in enabled:
        shape, idx = aval_of(ins[0]).shape, ins[1]
        k = np.shape(idx)[-1]
        bound = np.asarray(shape[:k], np.int64).astype(aval_of(idx).dtype)
        mask = (idx < 0) | (idx >= bound)
        error = _oob(ctx, error, eqn.prim.name, shape, mask, idx, range(k))
    if eqn.prim.name == "scatter_add":
        error = _nan_check(ctx, error, enabled, eqn.prim, out)
    return error, out


# ------------------------------------------------------------------- check ----

def _check_rule(ctx, error, enabled, eqn, ins):
    """Discharge a `check`: its error (numbered from 0) joins `error` with fresh codes."""
    new = tree_unflatten(eqn.params["err_tree"], ins)
    offset = ctx.code
    ctx.code += max(new._metadata, default=-1) + 1
    meta = {k + offset: v for k, v in new._metadata.items()}
    for effect, pred in new._pred.items():
        if effect.error_type in enabled:
            code = _fnp.add(new._code[effect], np.int32(offset))
            error = update_error(error, pred, code, meta, new._payload[effect], effect)
    return error, []


# ------------------------------------------------------------------- bodies ----

def _leaf_avals(leaves):
    return [ShapedArray(np.shape(x), aval_of(x).dtype) for x in leaves]


def _checkify_body(start: int, body: ClosedJaxpr, enabled, err_tree, err_avals, in_avals, wrap=None,
                   stacked=False):
    """`body` rewritten as (error leaves, inputs) -> (error leaves, outputs), checking
    from code `start` (`stacked`: each error leaf out with a new leading axis of 1).
    Returns (jaxpr, output error tree, codes used)."""
    ctx, box = Context(start), []

    def fun(*flat):
        err = tree_unflatten(err_tree, list(flat[:len(err_avals)]))
        args = flat[len(err_avals):]
        err, outs = (wrap or checkify_jaxpr)(ctx, body, enabled, err, *args)
        leaves, tree = tree_flatten(err)
        box.append(tree)
        # a loop carry keeps its types: no weak types in the error leaves
        leaves = [_lax.convert_element_type(x, aval_of(x).dtype) for x in leaves]
        if stacked:
            leaves = [_lax.expand_dims(x, (0,)) for x in leaves]
        return leaves + list(outs)

    closed = trace_to_jaxpr(fun, list(err_avals) + list(in_avals), name="checkify")
    return closed, box[0], ctx.code - start


def _body_effects(body, enabled, error, in_avals, wrap=None) -> set:
    leaves, tree = tree_flatten(error)
    _, out_tree, _ = _checkify_body(0, body, enabled, tree, _leaf_avals(leaves), in_avals, wrap)
    return set(tree_unflatten(out_tree, [None] * out_tree.num_leaves)._pred)


def _jit_rule(ctx, error, enabled, eqn, ins):
    body = eqn.params["jaxpr"]
    leaves, tree = tree_flatten(error)
    avals = _leaf_avals(leaves)
    # memoized on the body, so an eager checkify of a jitted function compiles once
    new, out_tree, used = memo(body, ("checkify", enabled, tree, tuple(avals), ctx.code), lambda: _checkify_body(
        ctx.code, body, enabled, tree, avals, body.in_avals))
    ctx.code += used
    outs = jit_p.bind(*leaves, *ins, **dict(eqn.params, jaxpr=new))
    n = out_tree.num_leaves
    return tree_unflatten(out_tree, list(outs[:n])), list(outs[n:])


def _cond_rule(ctx, error, enabled, eqn, ins):
    index, ops = ins[0], ins[1:]
    branches = eqn.params["branches"]
    in_avals = branches[0].in_avals
    effects = set().union(*[_body_effects(b, enabled, error, in_avals) for b in branches])
    error = error._add_placeholder_effects(effects)
    leaves, tree = tree_flatten(error)
    avals = _leaf_avals(leaves)
    new, trees = [], []
    for b in branches:
        nb, t, used = _checkify_body(ctx.code, b, enabled, tree, avals, in_avals)
        ctx.code += used
        new.append(nb)
        trees.append(t)
    outs = cond_p.bind(index, *leaves, *ops, **dict(eqn.params, branches=tuple(new)))
    n = trees[0].num_leaves
    err = tree_unflatten(trees[0], list(outs[:n]))
    for t in trees[1:]:
        err._metadata.update(tree_unflatten(t, list(outs[:n]))._metadata)
    return err, list(outs[n:])


def _scan_rule(ctx, error, enabled, eqn, ins):
    p = eqn.params
    body, nc, nk = p["jaxpr"], p["num_consts"], p["num_carry"]
    in_avals = body.in_avals
    error = error._add_placeholder_effects(_body_effects(body, enabled, error, in_avals))
    leaves, tree = tree_flatten(error)
    new, out_tree, used = _checkify_body(ctx.code, body, enabled, tree, _leaf_avals(leaves), in_avals)
    ctx.code += used
    ne = len(leaves)
    # scan's body takes (consts, carry, xs): the error leaves lead the carry
    order = list(range(ne, ne + nc)) + list(range(ne)) + list(range(ne + nc, ne + len(in_avals)))
    new = new.permute(order, range(len(new.out_avals)))
    outs = scan_p.bind(*ins[:nc], *leaves, *ins[nc:], **dict(p, jaxpr=new, num_carry=ne + nk))
    return tree_unflatten(out_tree, list(outs[:ne])), list(outs[ne:])


def _while_rule(ctx, error, enabled, eqn, ins):
    p = eqn.params
    cond, body, ncc, nbc = p["cond_jaxpr"], p["body_jaxpr"], p["cond_nconsts"], p["body_nconsts"]
    cc, bc, carry = ins[:ncc], ins[ncc:ncc + nbc], ins[ncc + nbc:]
    error, _ = checkify_jaxpr(ctx, cond, enabled, error, *cc, *carry)  # the first test

    def body_then_cond(sub, closed, enabled_, err, *flat):
        # (cond consts, body consts, carry) -> carry, checking the next test too
        c_consts, rest = flat[:ncc], flat[ncc:]
        err, out = checkify_jaxpr(sub, body, enabled_, err, *rest)
        err, _ = checkify_jaxpr(sub, cond, enabled_, err, *c_consts, *out)
        return err, out

    in_avals = cond.in_avals[:ncc] + body.in_avals
    error = error._add_placeholder_effects(_body_effects(body, enabled, error, in_avals, body_then_cond))
    leaves, tree = tree_flatten(error)
    avals = _leaf_avals(leaves)
    new, out_tree, used = _checkify_body(ctx.code, body, enabled, tree, avals, in_avals, body_then_cond)
    ctx.code += used
    ne, nb = len(leaves), ncc + nbc
    # while's body takes (consts, carry): the error leaves lead the carry
    new = new.permute(list(range(ne, ne + nb)) + list(range(ne)) + list(range(ne + nb, ne + len(in_avals))),
                      range(len(new.out_avals)))
    new_cond = cond.with_extra_inputs(avals, position=ncc)  # the test ignores the error
    outs = while_p.bind(*cc, *cc, *bc, *leaves, *carry,
                        **dict(p, cond_jaxpr=new_cond, body_jaxpr=new, body_nconsts=nb))
    return tree_unflatten(out_tree, list(outs[:ne])), list(outs[ne:])


def _shard_map_rule(ctx, error, enabled, eqn, ins):
    """Each device checks its shard: its error leaves come out stacked over the manual
    mesh axes, and the stack is cut down to one error (a device that found one)."""
    p = eqn.params
    body = p["jaxpr"]
    leaves, tree = tree_flatten(error)
    new, out_tree, used = _checkify_body(ctx.code, body, enabled, tree, _leaf_avals(leaves),
                                         body.in_avals, stacked=True)
    ctx.code += used
    axes = tuple(a for a in p["mesh"].axis_names if a in p["manual_axes"])
    n_out = out_tree.num_leaves
    sm = _shard_map_params(p, in_specs=(PartitionSpec(),) * len(leaves) + tuple(p["in_specs"]),
                           out_specs=(PartitionSpec(axes),) * n_out + tuple(p["out_specs"]))
    outs = _bind_shard_map([*leaves, *ins], new, sm)
    return _reduce_any(tree_unflatten(out_tree, list(outs[:n_out]))), list(outs[n_out:])


def _other_call(ctx, error, enabled, eqn, ins):
    """A call that must stay itself (its derivative or batching rule is the user's): run
    it, and find its errors by checkifying its body on inputs cut from differentiation."""
    out = eqn.prim.bind(*ins, **eqn.params)
    body = eqn.params[call_rules[eqn.prim].param]
    error, _ = checkify_jaxpr(ctx, body, enabled, error, *[_lax.stop_gradient(x) for x in ins])
    return error, out


# ------------------------------------------------------------------ table ----

# The primitives that can make a NaN (JAX's list): nan_checks checks their outputs.
NAN_PRIMITIVES = (
    _E.acos_p, _E.acosh_p, _E.add_p, _E.asin_p, _E.asinh_p, _E.atan2_p, _E.atan_p, _E.atanh_p,
    _special.bessel_i0e_p, _special.bessel_i1e_p, _E.cbrt_p, _conv.conv_general_dilated_p, _E.cos_p,
    _E.cosh_p, _R.cummax_p, _R.cummin_p, _R.cumprod_p, _R.cumsum_p, _E.digamma_p, _linalg.dot_general_p,
    _E.erf_inv_p, _E.erf_p, _E.erfc_p, _E.exp_p, _E.exp2_p, _E.expm1_p, _fft.fft_p,
    _special.igamma_grad_a_p, _special.igamma_p, _special.igammac_p, _E.integer_pow_p, _E.lgamma_p,
    linear_solve_p, _E.log1p_p, _E.log_p, _E.logistic_p, _E.mul_p, _structural.pad_p, _E.pow_p,
    _coll.psum_p, _R.reduce_prod_p, _R.reduce_sum_p, _special.regularized_incomplete_beta_p, _E.rem_p,
    _rng.rng_uniform_p, _E.rsqrt_p, _E.sin_p, _E.sinh_p, _E.sqrt_p, _E.sub_p, _E.tan_p, _E.tanh_p)

# primitive -> rule(ctx, error, enabled, eqn, ins) -> (error, outputs); call primitives
# without a rule here check their bodies, and every other primitive runs unchecked.
checkify_rules: dict = dict.fromkeys(NAN_PRIMITIVES, _nan_rule)
checkify_rules.update({
    _indexing.dynamic_slice_p: _window_rule(1), _indexing.dynamic_update_slice_p: _window_rule(2),
    _indexing.gather_p: _point_rule, _indexing.scatter_add_p: _point_rule, _E.div_p: _div_rule,
    check_p: _check_rule, jit_p: _jit_rule, cond_p: _cond_rule, scan_p: _scan_rule,
    while_p: _while_rule, shard_map_p: _shard_map_rule})
