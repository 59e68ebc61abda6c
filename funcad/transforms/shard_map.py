"""shard_map: a per-device program over a mesh, with collectives (as JAX's shard_map).

`shard_map(f, mesh=, in_specs=, out_specs=)(*args)` splits each argument as its
PartitionSpec says, runs `f` on every device's block (the *local* values), and
joins the local results as `out_specs` says. `f` is traced once, on local
shapes, into the call primitive `shard_map_p`; inside it the collectives of
`funcad.lax` (psum, all_gather, ppermute, ...) act over the mesh axes.

Lowered, as JAX does, to Shardy's `sdy.manual_computation` over the manual axes:
the inputs' and outputs' shardings are its `in_shardings`/`out_shardings`, and its
region is the body on local shapes with StableHLO collectives (GSPMD's
`SPMDFullToShardShape`/`SPMDShardToFullShape` custom calls where Shardy is off;
see `lowering/partitioning.py`). Eagerly a shard_map call is compiled like `jit`.

Device-varying types (`check_vma=True`, JAX's default, `transforms/vma.py`):
every value of the body is invariant or varies over a set of mesh axes (its
*vma*); implicit broadcasts of an invariant value to a varying one are
explicit `pvary`s, whose transpose is a psum, and psum (`psum_invariant`)
transposes into pvary. The types are inferred while the body is traced (so a
`grad` taken inside the body sums the cotangent of a replicated value over
the devices, as JAX's does) and again on every body the rules derive. With
`check_vma=False` the body keeps JAX's older convention instead: psum
transposes into psum, output cotangents are divided by the number of devices
that replicate them and input cotangents are summed over those.
"""
from __future__ import annotations

import contextlib
import functools
import math
from typing import Callable, NamedTuple

import numpy as np

from ..core.narrow import kind as _kind
from ..core.avals import ShapedArray, aval_of
from ..core.errors import FuncadTypeError, FuncadValueError
from ..core.ir import ClosedJaxpr, Jaxpr
from ..core.pytree import tree_flatten, tree_map, tree_unflatten
from ..core.sharding import (AxisType, Mesh, NamedSharding, PartitionSpec, batching as sharding_batching,
                             context_mesh, flatten_prefix)
from ..core.staging import lift_traced_consts, partial_eval_rules, trace_to_jaxpr
from ..core.typed_sharding import axes_of, type_sharding
from ..core.trace import (Primitive, sharding_rules, abstract_eval_rules, batch_rules, call_rules, ctx, eval_jaxpr,
                          impl_rules, jvp_rules, lowering_rules, set_trace, transpose_rules)
from ..lowering.stablehlo import lower_jaxpr_body
from ..primitives import collectives as C
from ..primitives._base import is_undefined
from ..primitives.elementwise import div
from ..primitives.structural import expand_dims, moveaxis0, squeeze
from .vma import live_typing, with_vma
from .jaxpr_transforms import (batch_jaxpr, jvp_jaxpr, nonzero_tangent, partial_eval_jaxpr,
                               transpose_jaxpr)
from .jit_spmd import SpmdExecutable
from .jit_spmd import program_shardings

__all__ = ["shard_map"]

shard_map_p = Primitive("shard_map", multiple_results=True)


# ----------------------------------------------------------------- specs ----

def _axes_of(spec) -> list:
    """The mesh axes a spec names, in order."""
    return [a for p in spec for a in (p if isinstance(p, tuple) else (p,)) if a is not None]


def _tiles(mesh: Mesh, spec, ndim: int) -> list:
    parts = list(spec) + [None] * (ndim - len(spec))
    return [math.prod(mesh.shape[a] for a in (p if isinstance(p, tuple) else (p,)) if a is not None)
            for p in parts]


def _global(mesh, spec, aval) -> ShapedArray:
    t = _tiles(mesh, spec, aval.ndim)
    return ShapedArray(tuple(s * k for s, k in zip(aval.shape, t)), aval.dtype, aval.weak_type)


def _local(mesh, spec, aval, what) -> ShapedArray:
    t = _tiles(mesh, spec, aval.ndim)
    for d, (s, k) in enumerate(zip(aval.shape, t)):
        if s % k:
            raise FuncadValueError(
                f"shard_map: {what} has shape {aval.shape}, and its spec {spec} splits dimension "
                f"{d} over {k} devices, but {s} is not divisible by {k}; pad the array or pick a "
                f"spec whose mesh axes divide it")
    return ShapedArray(tuple(s // k for s, k in zip(aval.shape, t)), aval.dtype, aval.weak_type)


def _body_typed(local, aval, mesh, manual):
    """A body argument's type: over the Explicit axes the shard_map leaves free, split
    as the argument is (JAX's: `f32[4,8@Y]` for `f32[8@X,8@Y]` mapped over X), on the
    mesh whose mapped axes are Manual; untyped where no Explicit axis is left free."""
    free = [a for a in mesh.explicit_axes if a not in manual]
    if not free or aval._sharding is None:
        return local
    inner = mesh.abstract_mesh.update_axis_types({a: AxisType.Manual for a in manual})
    entries = [tuple(a for a in axes_of(p) if a in free) for p in aval._sharding.spec]
    spec = PartitionSpec(*[None if not e else e[0] if len(e) == 1 else e for e in entries])
    return local.update(sharding=NamedSharding(inner, spec))


def _check_spec(mesh, spec, ndim, manual, what):
    if not isinstance(spec, PartitionSpec):
        raise FuncadTypeError(f"shard_map: {what} must be a PartitionSpec (or None), got {spec!r}")
    if len(spec) > ndim:
        raise FuncadValueError(f"shard_map: {what} {spec} has {len(spec)} entries but the value "
                               f"has rank {ndim}; give at most one entry per dimension")
    names = _axes_of(spec)
    for a in names:
        if a not in mesh.axis_names:
            raise FuncadValueError(f"shard_map: {what} {spec} names the axis {a!r}, which the "
                                   f"mesh {mesh} does not have; use one of {mesh.axis_names}")
        if a not in manual:
            raise FuncadValueError(f"shard_map: {what} {spec} names the axis {a!r}, which is not "
                                   f"among axis_names={sorted(manual)}")
    if len(set(names)) != len(names):
        raise FuncadValueError(f"shard_map: {what} {spec} uses a mesh axis more than once")


def _vma_of(spec) -> frozenset:
    return frozenset(_axes_of(spec))


def _mesh_order(mesh, axes) -> tuple:
    return tuple(a for a in mesh.axis_names if a in axes)


# ------------------------------------------------------------- binding ----

class _Params(NamedTuple):
    mesh: Mesh
    in_specs: tuple
    out_specs: tuple
    check_vma: bool
    manual_axes: frozenset


def _bind(args, body: ClosedJaxpr, p: _Params, in_vmas=None):
    """Bind shard_map_p on a (derived) body, its implicit broadcasts made explicit."""
    in_vmas = [_vma_of(s) for s in p.in_specs] if in_vmas is None else in_vmas
    body, _ = with_vma(body, in_vmas, p.check_vma)
    return shard_map_p.bind(*args, jaxpr=body, mesh=p.mesh, in_specs=tuple(p.in_specs),
                            out_specs=tuple(p.out_specs), check_vma=p.check_vma,
                            manual_axes=p.manual_axes)


def _params(params, **changes) -> _Params:
    base = _Params(params["mesh"], params["in_specs"], params["out_specs"], params["check_vma"],
                   params["manual_axes"])
    return base._replace(**changes)


def _abstract_eval(*avals, jaxpr, mesh, in_specs, out_specs, check_vma, manual_axes):
    return [_global(mesh, s, a) for s, a in zip(out_specs, jaxpr.out_avals)]


def _sharding_rule(*avals, jaxpr, mesh, in_specs, out_specs, check_vma, manual_axes):
    # outside the body the Explicit axes of out_specs split the results' types, then
    # (major to minor) the free Explicit axes the body's result types name
    outs = []
    for s, a in zip(out_specs, jaxpr.out_avals):
        typed = type_sharding(NamedSharding(mesh, s), len(a.shape))
        spec = (None,) * len(a.shape) if typed is None else tuple(typed.spec)
        if a._sharding is not None:
            spec = tuple(_joined(p, q) for p, q in zip(spec, a._sharding.spec))
        outs.append(spec)
    return outs


def _joined(outer, inner):
    axes = axes_of(outer) + axes_of(inner)
    return None if not axes else axes[0] if len(axes) == 1 else axes


# ---------------------------------------------------------------- eager ----

@functools.lru_cache(maxsize=256)
def _executable(jaxpr, mesh, in_specs, out_specs, check_vma, manual_axes, in_avals):
    params = dict(jaxpr=jaxpr, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                  check_vma=check_vma, manual_axes=manual_axes)
    closed = trace_to_jaxpr(lambda *xs: shard_map_p.bind(*xs, **params), list(in_avals),
                            name="shard_map")
    return SpmdExecutable(closed, "shard_map", mesh.devices.flat[0].platform,
                          [NamedSharding(mesh, s) for s in in_specs],
                          [NamedSharding(mesh, s) for s in out_specs])


def _impl(*args, jaxpr, mesh, in_specs, out_specs, check_vma, manual_axes):
    """Eagerly, shard_map runs compiled, as JAX's does."""
    avals = tuple(aval_of(x) for x in args)
    exe = _executable(jaxpr, mesh, in_specs, out_specs, check_vma, manual_axes, avals)
    return exe(list(args))


# ---------------------------------------------------------------- rules ----

def _jvp(primals, tangents, **params):
    p, body = _params(params), params["jaxpr"]
    in_nz = [nonzero_tangent(x, t) for x, t in zip(primals, tangents)]
    jvp_body, out_nz = jvp_jaxpr(body, in_nz)
    n = len(body.out_avals)
    outs = _bind([*primals, *[t for t, nz in zip(tangents, in_nz) if nz]], jvp_body, p._replace(
        in_specs=p.in_specs + tuple(s for s, nz in zip(p.in_specs, in_nz) if nz),
        out_specs=p.out_specs + tuple(s for s, nz in zip(p.out_specs, out_nz) if nz)))
    it = iter(outs[n:])
    return outs[:n], [next(it) if nz else None for nz in out_nz]


def _residual_spec(mesh, vma):
    """Residuals cross from the known call to the unknown one per device: a residual
    varying over `vma` travels with a leading axis split over those axes."""
    axes = _mesh_order(mesh, vma)
    return PartitionSpec(axes if len(axes) > 1 else axes[0]) if axes else PartitionSpec()


def _partial_eval(trace, args, params):
    p, body = _params(params), params["jaxpr"]
    unknowns = [trace.is_own(x) for x in args]
    known, unknown, out_uk, nres = partial_eval_jaxpr(body, unknowns)
    k_vmas = [_vma_of(s) for s, u in zip(p.in_specs, unknowns) if not u]
    known, k_out_vmas = with_vma(known, k_vmas, p.check_vma)
    n_known_out = len(known.out_avals) - nres
    res_vmas = k_out_vmas[n_known_out:] if p.check_vma else \
        [p.manual_axes] * nres
    res_specs = tuple(_residual_spec(p.mesh, m) for m in res_vmas)
    expand = [bool(_axes_of(s)) for s in res_specs]

    def known_fun(*xs):
        outs = eval_jaxpr(known.jaxpr, known.consts, *xs)
        res = [expand_dims(r, (0,)) if e else r for r, e in zip(outs[n_known_out:], expand)]
        return list(outs[:n_known_out]) + res

    def unknown_fun(*xs):
        res = [squeeze(r, (0,)) if e else r for r, e in zip(xs[:nres], expand)]
        return eval_jaxpr(unknown.jaxpr, unknown.consts, *res, *xs[nres:])

    known_body = trace_to_jaxpr(known_fun, list(known.in_avals), name="shard_map")
    k_specs = tuple(s for s, u in zip(p.in_specs, unknowns) if not u)
    k_out_specs = tuple(s for s, u in zip(p.out_specs, out_uk) if not u)
    with set_trace(trace.parent):
        k_outs = _bind([x for x, u in zip(args, unknowns) if not u], known_body, p._replace(
            in_specs=k_specs, out_specs=k_out_specs + res_specs), k_vmas)
    residuals = k_outs[n_known_out:]
    u_outs = []
    if any(out_uk):
        u_in_avals = [ShapedArray((1,) + a.shape, a.dtype) if e else a
                      for a, e in zip(unknown.in_avals[:nres], expand)] + list(unknown.in_avals[nres:])
        unknown_body = trace_to_jaxpr(unknown_fun, u_in_avals, name="shard_map")
        u_specs = res_specs + tuple(s for s, u in zip(p.in_specs, unknowns) if u)
        u_vmas = list(res_vmas) + [_vma_of(s) for s, u in zip(p.in_specs, unknowns) if u]
        unknown_body, _ = with_vma(unknown_body, u_vmas, p.check_vma)
        u_outs = trace.stage(shard_map_p, list(residuals) + [x for x, u in zip(args, unknowns) if u],
                             dict(params, jaxpr=unknown_body, in_specs=u_specs,
                                  out_specs=tuple(s for s, u in zip(p.out_specs, out_uk) if u)))
    k_it, u_it = iter(k_outs[:n_known_out]), iter(u_outs)
    return [next(u_it) if u else next(k_it) for u in out_uk]


def _unmentioned(p: _Params, spec) -> tuple:
    return tuple(a for a in p.mesh.axis_names if a in p.manual_axes and a not in _axes_of(spec))


def _transpose(cts, *args, **params):
    p, body = _params(params), params["jaxpr"]
    undefined = [is_undefined(a) for a in args]
    ct_mask = [c is not None for c in cts]
    t_body, out_nz = transpose_jaxpr(body, undefined, ct_mask)
    if not any(out_nz):
        return [None] * len(args)
    lin_specs = [s for s, u in zip(p.in_specs, undefined) if u]
    out_specs = tuple(s for s, nz in zip(lin_specs, out_nz) if nz)
    ct_specs = tuple(s for s, m in zip(p.out_specs, ct_mask) if m)
    if not p.check_vma:  # JAX's convention without device-varying types
        nres = undefined.count(False)
        inner = t_body

        def fun(*xs):
            cts_in = [div(c, np.asarray(_count(p, s), aval_of(c).dtype)) if _count(p, s) > 1
                      and _kind(aval_of(c).dtype) in "fc" else c
                      for c, s in zip(xs[nres:], ct_specs)]
            outs = eval_jaxpr(inner.jaxpr, inner.consts, *xs[:nres], *cts_in)
            return [C.psum_p.bind(o, axes=_unmentioned(p, s)) if _unmentioned(p, s) else o
                    for o, s in zip(outs, out_specs)]
        t_body = trace_to_jaxpr(fun, list(t_body.in_avals), name="shard_map")
    outs = _bind([a for a in args if not is_undefined(a)] + [c for c in cts if c is not None],
                 t_body, p._replace(
                     in_specs=tuple(s for s, u in zip(p.in_specs, undefined) if not u) + ct_specs,
                     out_specs=out_specs))
    it, nz = iter(outs), iter(out_nz)
    return [(next(it) if next(nz) else None) if u else None for u in undefined]


def _count(p: _Params, spec) -> int:
    return math.prod(p.mesh.shape[a] for a in _unmentioned(p, spec))


def _batch(vals, dims, *, axis_size, **params):
    p, body = _params(params), params["jaxpr"]
    vals = [v if d is None else moveaxis0(v, d, axis_size) for v, d in zip(vals, dims)]
    batched = [d is not None for d in dims]
    entry, size = _spmd_split(p, axis_size)
    b_body, out_b = batch_jaxpr(body, batched, size)
    front = lambda s: PartitionSpec(entry, *s)  # noqa: E731  (the batch axis, split or not)
    outs = _bind(vals, b_body, p._replace(
        in_specs=tuple(front(s) if b else s for s, b in zip(p.in_specs, batched)),
        out_specs=tuple(front(s) if b else s for s, b in zip(p.out_specs, out_b))))
    return outs, [0 if b else None for b in out_b]


def _spmd_split(p: _Params, axis_size: int) -> tuple:
    """(spec entry of the batch axis, batch size per device): under
    vmap(spmd_axis_name=) the batch is split over those mesh axes, as in JAX."""
    names = sharding_batching.spmd_axis_name
    if not names:
        return None, axis_size
    shown = names[0] if len(names) == 1 else tuple(names)
    for what, specs in (("in_specs", p.in_specs), ("out_specs", p.out_specs)):
        used = {a for s in specs for a in _axes_of(s)}
        if used & set(names):
            raise FuncadValueError(
                f"vmap spmd_axis_name cannot appear in shard_map {what}: vmap(spmd_axis_name="
                f"{shown!r}) splits the batch over {sorted(used & set(names))}, which the "
                f"shard_map's {what} already split; name another mesh axis in one of them")
    for a in names:
        if a not in p.manual_axes:
            raise FuncadValueError(
                f"vmap(spmd_axis_name={shown!r}): the mesh axis {a!r} is not one the shard_map "
                f"inside maps over (its mesh {p.mesh}, axis_names={sorted(p.manual_axes)}); "
                f"name one of those")
    k = math.prod(p.mesh.shape[a] for a in names)
    if axis_size % k:
        raise FuncadValueError(
            f"vmap(spmd_axis_name={shown!r}) splits the batch of size {axis_size} over {k} "
            f"devices for the shard_map inside, but {axis_size} is not divisible by {k}")
    return shown, axis_size // k


class _Manual(NamedTuple):
    mesh: Mesh
    assignment: tuple
    axes: frozenset  # the mesh axes manual here (the others are left to the partitioner)


def _lowering(lctx, *args, jaxpr, mesh, in_specs, out_specs, check_vma, manual_axes):
    module = lctx.module
    part = module.partition
    if not hasattr(module, "manual"):
        module.manual = []
    # a shard_map inside another makes only the axes manual that are not already
    newly = manual_axes.difference(*(m.axes for m in module.manual))
    # one device, or (under Shardy, as JAX) new manual axes of one device: the body is the program
    if part is None or len(part.assignment) == 1 or \
            (part.shardy and math.prod(mesh.shape[a] for a in newly) == 1):
        module.manual.append(_Manual(mesh, part.assignment if part else tuple(mesh.devices.flat),
                                     manual_axes))
        try:
            return lctx.call(jaxpr, args)
        finally:
            module.manual.pop()

    def body(ctx, consts, locals_):
        module.manual.append(_Manual(mesh, part.assignment, manual_axes))
        try:
            return lower_jaxpr_body(ctx, jaxpr.jaxpr, consts, locals_)
        finally:
            module.manual.pop()
    return part.manual(lctx, args, mesh, in_specs, out_specs, newly, jaxpr.in_avals,
                       lctx.out_avals, body, jaxpr.consts, bound=manual_axes - newly)


impl_rules[shard_map_p] = _impl
abstract_eval_rules[shard_map_p] = _abstract_eval
sharding_rules[shard_map_p] = _sharding_rule
jvp_rules[shard_map_p] = _jvp
partial_eval_rules[shard_map_p] = _partial_eval
transpose_rules[shard_map_p] = _transpose
batch_rules[shard_map_p] = _batch
lowering_rules[shard_map_p] = _lowering


def _program_shardings(params):
    return [NamedSharding(params["mesh"], PartitionSpec())]


def _register_with_jit():
    program_shardings[shard_map_p] = _program_shardings


_register_with_jit()


# ------------------------------------------------------------------ API ----

def _flat_specs(specs, tree_value, what) -> list:
    """One PartitionSpec per leaf of `tree_value`, from a prefix tree `specs` (None: P())."""
    is_leaf = lambda s: s is None or isinstance(s, PartitionSpec)  # noqa: E731
    if is_leaf(specs):
        return [specs or PartitionSpec()] * len(tree_flatten(tree_value)[0])
    leaves, _ = tree_flatten(specs, is_leaf=is_leaf)
    try:
        subtrees = flatten_prefix(specs, tree_value, what)
    except FuncadValueError:
        raise FuncadValueError(f"shard_map: {what} {specs!r} must be one PartitionSpec or a tree "
                               f"prefix of the values it describes") from None
    if len(subtrees) != len(leaves):
        raise FuncadValueError(f"shard_map: {what} {specs!r} does not match the structure of the "
                               f"values it describes")
    out = []
    for s, sub in zip(leaves, subtrees):
        out += [s or PartitionSpec()] * len(tree_flatten(sub)[0])
    return out


_MISSING = object()
_nothing = contextlib.nullcontext


def shard_map(f: Callable | None = None, /, *, out_specs, in_specs=_MISSING, mesh: Mesh | None = None,
              axis_names=frozenset(), check_vma: bool = True) -> Callable:
    """Map `f` over the blocks of its arguments on a mesh of devices (as JAX's shard_map).

    Each argument is split as its PartitionSpec in `in_specs` says (a spec per
    argument, or a tree prefix of them; an axis the spec leaves out replicates
    it); `f` runs once per device on that device's blocks and may use the
    collectives of `funcad.lax` over the mesh axes; its local results are
    joined as `out_specs` says (an output whose spec leaves an axis out must be
    the same on every device along it, which `check_vma` checks).
    `axis_names` (default: all mesh axes) names the axes `f` maps over; the
    others stay replicated inside `f`. Without `mesh=`, the mesh of
    `funcad.set_mesh` at the call is used.

    >>> import funcad, numpy as np
    >>> from funcad.sharding import PartitionSpec as P
    >>> mesh = funcad.make_mesh((1,), ("i",))
    >>> f = shard_map(lambda a: funcad.lax.psum(a.sum(), "i"), mesh=mesh, in_specs=P("i"),
    ...               out_specs=P())
    >>> f(np.arange(4.0))
    Array(6., dtype=float64)
    """
    if f is None:
        return functools.partial(shard_map, out_specs=out_specs, in_specs=in_specs, mesh=mesh,
                                 axis_names=axis_names, check_vma=check_vma)
    if not callable(f):
        raise FuncadTypeError(f"shard_map requires a callable, got {f!r} of type {type(f).__name__}")
    if mesh is not None:
        _manual_axes(mesh, axis_names)
    name = getattr(f, "__name__", "f")

    @functools.wraps(f)
    def wrapped(*args):
        m = mesh if mesh is not None else context_mesh()
        if m is None:
            raise FuncadValueError("shard_map without mesh= needs a context mesh: enter one with "
                                   "funcad.set_mesh(mesh), or pass mesh=")
        manual = _manual_axes(m, axis_names)
        specs = _inferred_specs(args, m, manual) if in_specs is _MISSING else in_specs
        return _call(f, name, args, m, manual, specs, out_specs, check_vma)

    return wrapped


def _inferred_specs(args, mesh, manual) -> tuple:
    """shard_map's in_specs from the arguments' types (JAX's default, Infer): each
    array is split as the sharding in its type says, over Explicit mesh axes."""
    not_explicit = [a for a, t in zip(mesh.axis_names, mesh.axis_types)
                    if a in manual and t is not AxisType.Explicit]
    if not_explicit:
        raise FuncadTypeError(
            f"shard_map without in_specs infers them from the arguments' types, which needs "
            f"Explicit mesh axes, but {not_explicit} of {mesh} are not; pass in_specs (a "
            f"PartitionSpec per argument) or make the mesh with AxisType.Explicit axes")

    def spec(x):
        s = aval_of(x)._sharding
        return PartitionSpec() if s is None else PartitionSpec(*s.spec)
    return tuple(tree_map(spec, a) for a in args)


def _manual_axes(mesh, axis_names) -> frozenset:
    if not isinstance(mesh, Mesh):
        raise FuncadTypeError(f"shard_map needs mesh=funcad.sharding.Mesh (e.g. from "
                              f"funcad.make_mesh), got {mesh!r}")
    manual = frozenset(axis_names) or frozenset(mesh.axis_names)
    for a in manual:
        if a not in mesh.axis_names:
            raise FuncadValueError(f"shard_map: axis_names names {a!r}, which the mesh {mesh} "
                                   f"does not have")
    return manual


def _call(f, name, args, mesh, manual, in_specs, out_specs, check_vma):
    """Trace `f` on the local blocks of `args` and bind shard_map_p."""
    flat, in_tree = tree_flatten(args)
    specs = _flat_specs(tuple(in_specs) if isinstance(in_specs, list) else in_specs, args,
                        "in_specs")
    avals = [aval_of(x) for x in flat]
    local = []
    for i, (s, a) in enumerate(zip(specs, avals)):
        what = f"argument leaf {i} ({a.str_short()})"
        _check_spec(mesh, s, a.ndim, manual, f"in_specs for {what}")
        local.append(_body_typed(_local(mesh, s, a, what), a, mesh, manual))
    store = []

    def flat_fun(*xs):
        with live_typing(manual, xs, [_vma_of(s) for s in specs]) if check_vma else _nothing():
            outs, out_tree = tree_flatten(f(*tree_unflatten(in_tree, xs)))
        store.append(out_tree)
        return outs

    frames = [C.AxisFrame(a, mesh.shape[a], "shard_map", check_vma, mesh)
              for a in mesh.axis_names if a in manual]
    with C.axis_env(frames):
        body = trace_to_jaxpr(flat_fun, local, name=f"shard_map({name})", parent=ctx.trace)
    body, lifted = lift_traced_consts(body)
    out_tree = store[0]
    o_specs = _flat_specs(out_specs, tree_unflatten(out_tree, [0] * out_tree.num_leaves),
                          "out_specs")
    all_specs = [PartitionSpec()] * len(lifted) + specs
    typed, out_vmas = with_vma(body, [_vma_of(s) for s in all_specs], check_vma)
    for i, (s, a, m) in enumerate(zip(o_specs, body.out_avals, out_vmas)):
        _check_spec(mesh, s, a.ndim, manual, f"out_specs for output {i} ({a.str_short()})")
        if check_vma and not m <= _vma_of(s):
            raise FuncadValueError(
                f"shard_map applied to {name} was given out_specs which require replication "
                f"which can't be statically inferred: output {i} ({a.str_short()}) varies over "
                f"the mesh axes {sorted(m - _vma_of(s))} that its spec {s} leaves out. Name "
                f"them in the spec, reduce over them first (e.g. funcad.lax.psum), or pass "
                f"check_vma=False")
    outs = shard_map_p.bind(*lifted, *flat, jaxpr=typed, mesh=mesh, in_specs=tuple(all_specs),
                            out_specs=tuple(o_specs), check_vma=bool(check_vma),
                            manual_axes=manual)
    return tree_unflatten(out_tree, outs)
