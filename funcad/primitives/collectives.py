"""Collectives over named axes (psum, all_gather, ppermute, ...), as JAX's lax collectives.

A collective names mesh axes of an enclosing `shard_map`, or the `axis_name`
of an enclosing `vmap`/`pmap`. The names in scope live in a per-thread axis
environment (`axis_env`), pushed by those transforms; a name outside it is an
`UnboundAxisError` (a NameError), as in JAX.

Each collective is one primitive with every rule. Under `shard_map` it lowers
to a StableHLO collective (`all_reduce`, `all_gather`, `reduce_scatter`,
`collective_permute`, `all_to_all`, `partition_id`) whose replica groups are
computed from the mesh (`ctx.module.manual`, set by shard_map's lowering).
Under `vmap` with an `axis_name`, the batch trace of that name applies the
rule in `named_batch_rules` (psum is a sum over the batch axis, axis_index an
iota, all_gather the batch itself, ppermute a permutation of it); any other
batch trace maps the collective over its batch axis (`batch_rules`).

The gather-like primitives are all "tiled" (their public functions reshape for
`tiled=False`, as JAX's do). Derivatives follow JAX: every collective but
pmax/pmin is linear; all_gather and psum_scatter transpose into each other,
ppermute into the inverse permutation, all_to_all into the swapped one. Two
sums exist, as in JAX: `psum` (under vmap/pmap and `shard_map(check_vma=False)`,
its transpose a psum) and `psum_invariant` with `pvary` (under `shard_map`'s
default `check_vma=True`: psum maps device-varying values to invariant ones
and transposes into pvary, the identity per device that marks a value varying,
whose transpose is the psum).
"""
from __future__ import annotations

import math
import threading
from contextlib import contextmanager
from typing import NamedTuple

import numpy as np

from ..core.narrow import kind as _dtype_kind
from ..core.avals import ShapedArray
from ..core.errors import FuncadTypeError, FuncadValueError, UnboundAxisError, UnsupportedError
from ..core.trace import batch_rules, jvp_rules, lowering_rules, sharding_rules
from ..core.typed_sharding import same_as_operand
from ..lowering.stablehlo import reducer_region, tensor_type
from ._base import canonical_axis, deflinear, defzero, full, new_primitive
from .elementwise import add, convert_element_type, div, eq, mul
from .reductions import reduce_max, reduce_min, reduce_sum
from .structural import concatenate, expand_dims, iota, moveaxis, moveaxis0, reshape, squeeze
from .structural import slice as slice_
from ..core.pytree import tree_flatten, tree_unflatten
from ..core.avals import aval_of
from ..core.sharding import PartitionSpec

__all__ = ["all_gather", "all_to_all", "axis_index", "axis_size", "pmax", "pmean", "pmin",
           "ppermute", "pshuffle", "psum", "psum_scatter", "pswapaxes", "pvary"]


# ----------------------------------------------------------- axis environment ----

class AxisFrame(NamedTuple):
    name: str
    size: int
    kind: str             # "shard_map", "vmap" or "pmap"
    check_vma: bool       # shard_map(check_vma=True): psum is the varying -> invariant one
    mesh: object = None   # shard_map's Mesh


class _Env(threading.local):
    def __init__(self):
        self.frames: list = []


_env = _Env()


@contextmanager
def axis_env(frames):
    """Bind the named axes `frames` (AxisFrames) for collectives while tracing."""
    n = len(_env.frames)
    _env.frames.extend(frames)
    try:
        yield
    finally:
        del _env.frames[n:]


def axis_frame(name, what: str) -> AxisFrame:
    for f in reversed(_env.frames):
        if f.name == name:
            return f
    bound = sorted({f.name for f in _env.frames})
    raise UnboundAxisError(
        f"{what}: unbound axis name: {name!r}. The axis names bound here (by shard_map's mesh, "
        f"or vmap's and pmap's axis_name) are {bound}. Call {what} inside shard_map over a mesh "
        f"with that axis, or inside vmap/pmap(..., axis_name={name!r})")


def _names(axis_name) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _frames(axis_name, what) -> list:
    names = _names(axis_name)
    if len(set(names)) != len(names):
        raise FuncadValueError(f"{what}: axis_name {axis_name!r} names an axis twice")
    return [axis_frame(n, what) for n in names]


def axis_size(axis_name) -> int:
    """The number of devices (or batch entries) along the named axis or axes.

    >>> import funcad, numpy as np
    >>> funcad.vmap(lambda x: x * axis_size("i"), axis_name="i")(np.ones(3))
    Array([3., 3., 3.], dtype=float64)
    """
    return math.prod(f.size for f in _frames(axis_name, "axis_size"))


def _unbound_impl(name):
    def impl(*args, axes, **params):
        for a in axes:
            axis_frame(a, name)
        raise UnboundAxisError(f"{name} over {axes} ran outside of the shard_map, vmap or pmap "
                               f"that binds them; call it inside that transformation")
    return impl


def _same(x, **params):
    return x


# -------------------------------------------------------- lowering helpers ----

def replica_groups(mesh, axes, assignment) -> list:
    """The partitions of each group over mesh axes `axes`: devices that agree on the
    other axes, ordered by their linear index over `axes` (the first axis major)."""
    names = mesh.axis_names
    position = {id(d): i for i, d in enumerate(assignment)}
    groups: dict = {}
    for idx in np.ndindex(mesh.devices.shape):
        key = tuple(i for n, i in zip(names, idx) if n not in axes)
        rank = 0
        for a in axes:
            k = names.index(a)
            rank = rank * mesh.devices.shape[k] + idx[k]
        groups.setdefault(key, {})[rank] = position[id(mesh.devices[idx])]
    return [[g[r] for r in sorted(g)] for _, g in sorted(groups.items())]


def _manual(ctx, name):
    m = getattr(ctx.module, "manual", None)
    if not m:
        raise FuncadValueError(f"{name} can only be compiled inside shard_map (or a vmap/pmap "
                               f"with that axis_name); it names axes no enclosing shard_map has")
    return m[-1]


def _groups_attr(groups) -> str:
    rows = ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups)
    return f"replica_groups = dense<[{rows}]> : tensor<{len(groups)}x{len(groups[0])}xi64>"


def _channel(ctx) -> str:
    ctx.module.channels = getattr(ctx.module, "channels", 0) + 1
    return f"channel_handle = #stablehlo.channel_handle<handle = {ctx.module.channels}, type = 1>"


def _collective(ctx, axes, index_groups=None):
    """(groups, common attributes) for a collective over `axes` (split further into
    `index_groups` of indices along them); groups None when every group is one
    device (then the collective is the identity)."""
    man = _manual(ctx, "a collective")
    groups = replica_groups(man.mesh, axes, man.assignment)
    if index_groups is not None:
        groups = [[row[i] for i in g] for row in groups for g in index_groups]
    if len(groups[0]) == 1:
        return None, ""
    return groups, f"{_channel(ctx)}, {_groups_attr(groups)}, use_global_device_ids"


def _all_reduce_rule(kind):
    def rule(ctx, x, *, axes, axis_index_groups=None):
        groups, attrs = _collective(ctx, axes, axis_index_groups)
        if groups is None:
            return x
        region = reducer_region(ctx, kind, x.aval)
        return ctx.op1("stablehlo.all_reduce", [x], x.aval, attrs, [region])
    return rule


# ------------------------------------------------------------- batching ----
# named_batch_rules[prim](vals, dims, *, axis_size, axis_name, **params): the
# collective over the axis of the vmap doing the batching (see vmap.py).
named_batch_rules: dict = {}


def _others(axes, name) -> tuple:
    return tuple(a for a in axes if a != name)


def _mapped(prim, shift=()):
    """The rule of a collective over other axes than the batching vmap's: the same
    collective per batch entry (the batch axis first; positional params shifted)."""
    def rule(vals, dims, *, axis_size, **params):
        x = moveaxis0(vals[0], dims[0], axis_size)
        params = {k: (v + 1 if k in shift else v) for k, v in params.items()}
        return prim.bind(x, **params), 0
    return rule


def _reduction_batch(reduce, then):
    def rule(vals, dims, *, axis_size, axis_name, axes, axis_index_groups=None):
        _no_groups(then.name, axis_index_groups)
        x = moveaxis0(vals[0], dims[0], axis_size)
        y = reduce(x, (0,))
        rest = _others(axes, axis_name)
        return (then.bind(y, axes=rest) if rest else y), None
    return rule


def _no_groups(name, groups):
    if groups is not None:
        raise UnsupportedError(f"{name}: axis_index_groups is not supported in vmap collectives "
                               f"(as in JAX); use pmap, or shard_map(check_vma=False)")


def _only_this_axis(name, axes, axis_name):
    if tuple(axes) != (axis_name,):
        raise FuncadValueError(f"{name} under vmap(axis_name={axis_name!r}) over the axes {axes}: "
                               f"a vmap axis can only be combined with other axes in psum, pmean, "
                               f"pmax, pmin and axis_index; call {name} once per axis instead")


# ------------------------------------------------------------------ psum ----

def _reduction_aval(x, *, axes, axis_index_groups=None):
    return ShapedArray(x.shape, x.dtype)


psum_p = new_primitive("psum", _unbound_impl("psum"), _reduction_aval)
psum_invariant_p = new_primitive("psum_invariant", _unbound_impl("psum"), _reduction_aval)
pvary_p = new_primitive("pvary", _same, _reduction_aval)

deflinear(psum_p, lambda ct, x, **p: [psum_p.bind(ct, **p)])
deflinear(psum_invariant_p, lambda ct, x, *, axes: [pvary_p.bind(ct, axes=axes)])
deflinear(pvary_p, lambda ct, x, *, axes: [psum_invariant_p.bind(ct, axes=axes)])
for _p in (psum_p, psum_invariant_p):
    batch_rules[_p] = _mapped(_p)
    named_batch_rules[_p] = _reduction_batch(reduce_sum, _p)
    lowering_rules[_p] = _all_reduce_rule("add")
batch_rules[pvary_p] = _mapped(pvary_p)
named_batch_rules[pvary_p] = lambda vals, dims, *, axis_size, axis_name, axes: (
    pvary_p.bind(vals[0], axes=_others(axes, axis_name)) if _others(axes, axis_name)
    else vals[0], dims[0])
lowering_rules[pvary_p] = lambda ctx, x, *, axes: x


def _in_shard_map_vma(frames) -> bool:
    return any(f.kind == "shard_map" and f.check_vma for f in frames)


def _leaves(x):
    leaves, tree = tree_flatten(x)
    return leaves, lambda outs: tree_unflatten(tree, outs)


def _index_groups(axis_index_groups, axis_name, what):
    """axis_index_groups checked as JAX does (None stays None): a partition of the
    indices of one pmap or shard_map(check_vma=False) axis into groups of one size."""
    if axis_index_groups is None:
        return None
    frames = _frames(axis_name, what)
    if len(frames) != 1:
        raise FuncadValueError(f"{what}: axis_index_groups needs a single axis name, got "
                               f"{axis_name!r}")
    groups = tuple(tuple(int(i) for i in g) for g in axis_index_groups)
    n = frames[0].size
    if sorted(i for g in groups for i in g) != list(range(n)):
        raise FuncadValueError("axis_index_groups must cover all indices exactly once: got "
                               f"{[list(g) for g in groups]} for the axis {axis_name!r} of "
                               f"size {n}")
    if len({len(g) for g in groups}) != 1:
        raise FuncadValueError(f"{what}: axis_index_groups must all have the same size, got "
                               f"{[list(g) for g in groups]}")
    if frames[0].kind == "vmap":
        _no_groups(what, groups)
    if _in_shard_map_vma(frames):
        raise UnsupportedError(f"{what}: axis_index_groups is not supported inside "
                               f"shard_map(check_vma=True) (as in JAX); pass check_vma=False")
    return groups


def _group_kw(groups) -> dict:
    return {} if groups is None else {"axis_index_groups": groups}


def psum(x, axis_name, *, axis_index_groups=None):
    """The sum of x (a pytree) over the devices (or vmap entries) of the named axes;
    with `axis_index_groups` (under pmap or shard_map(check_vma=False)), over each
    group of indices along the axis separately.

    >>> import funcad, numpy as np
    >>> funcad.vmap(lambda v: psum(v, "i"), axis_name="i")(np.arange(3.0))
    Array([3., 3., 3.], dtype=float64)
    """
    frames = _frames(axis_name, "psum")
    kw = _group_kw(_index_groups(axis_index_groups, axis_name, "psum"))
    prim = psum_invariant_p if _in_shard_map_vma(frames) else psum_p
    leaves, back = _leaves(x)
    outs = []
    for v in leaves:
        if np.dtype(_dtype(v)) == np.bool_:
            v = convert_element_type(v, np.int32)
        outs.append(prim.bind(v, axes=_names(axis_name), **kw))
    return back(outs)


def _dtype(v):
    return aval_of(v).dtype


def pmean(x, axis_name, *, axis_index_groups=None):
    """The mean of x (a pytree) over the named axes (or each of `axis_index_groups`).

    >>> import funcad, numpy as np
    >>> funcad.vmap(lambda v: pmean(v, "i"), axis_name="i")(np.arange(3.0))
    Array([1., 1., 1.], dtype=float64)
    """
    groups = _index_groups(axis_index_groups, axis_name, "pmean")
    n = axis_size(axis_name) if groups is None else len(groups[0])
    leaves, back = _leaves(psum(x, axis_name, axis_index_groups=groups))
    return back([div(v, np.asarray(n, _dtype(v))) if _dtype_kind(_dtype(v)) in "fc"
                 else div(convert_element_type(v, np.float64), np.float64(n)) for v in leaves])


def pvary(x, axis_name):
    """x marked as varying over the named shard_map axes (the identity on values).

    >>> import funcad, numpy as np
    >>> funcad.vmap(lambda v: pvary(v, "i"), axis_name="i")(np.arange(3.0))
    array([0., 1., 2.])
    """
    _frames(axis_name, "pvary")
    leaves, back = _leaves(x)
    return back([pvary_p.bind(v, axes=_names(axis_name)) for v in leaves])


# ------------------------------------------------------------ pmax, pmin ----

def _minmax_jvp(prim):
    def rule(primals, tangents, *, axes, **kw):
        (x,), (t,) = primals, tangents
        y = prim.bind(x, axes=axes, **kw)
        if t is None:
            return y, None
        # the tangent of the devices holding the extremum, averaged over ties
        hit = convert_element_type(eq(x, y), _dtype(t))
        s = psum_p.bind(mul(t, hit), axes=axes, **kw)
        return y, div(s, psum_p.bind(hit, axes=axes, **kw))
    return rule


pmax_p = new_primitive("pmax", _unbound_impl("pmax"), _reduction_aval)
pmin_p = new_primitive("pmin", _unbound_impl("pmin"), _reduction_aval)
for _p, _kind, _reduce in ((pmax_p, "max", reduce_max), (pmin_p, "min", reduce_min)):
    jvp_rules[_p] = _minmax_jvp(_p)
    batch_rules[_p] = _mapped(_p)
    named_batch_rules[_p] = _reduction_batch(_reduce, _p)
    lowering_rules[_p] = _all_reduce_rule(_kind)


def pmax(x, axis_name, *, axis_index_groups=None):
    """The maximum of x (a pytree) over the named axes (or each of `axis_index_groups`).

    >>> import funcad, numpy as np
    >>> funcad.vmap(lambda v: pmax(v, "i"), axis_name="i")(np.arange(3.0))
    Array([2., 2., 2.], dtype=float64)
    """
    _frames(axis_name, "pmax")
    kw = _group_kw(_index_groups(axis_index_groups, axis_name, "pmax"))
    leaves, back = _leaves(x)
    return back([pmax_p.bind(v, axes=_names(axis_name), **kw) for v in leaves])


def pmin(x, axis_name, *, axis_index_groups=None):
    """The minimum of x (a pytree) over the named axes (or each of `axis_index_groups`).

    >>> import funcad, numpy as np
    >>> funcad.vmap(lambda v: pmin(v, "i"), axis_name="i")(np.arange(3.0))
    Array([0., 0., 0.], dtype=float64)
    """
    _frames(axis_name, "pmin")
    kw = _group_kw(_index_groups(axis_index_groups, axis_name, "pmin"))
    leaves, back = _leaves(x)
    return back([pmin_p.bind(v, axes=_names(axis_name), **kw) for v in leaves])


# ------------------------------------------------------------- all_gather ----
# Tiled: the pieces of all devices concatenated along `axis`.

def _gather_aval(x, *, axes, axis, group_size, axis_index_groups=None):
    shape = list(x.shape)
    shape[axis] *= group_size
    return ShapedArray(tuple(shape), x.dtype)


def _scatter_aval(x, *, axes, axis, group_size, axis_index_groups=None):
    shape = list(x.shape)
    if shape[axis] % group_size:
        raise FuncadValueError(f"psum_scatter: dimension {axis} of size {shape[axis]} does not "
                               f"split evenly over the {group_size} devices of {axes}")
    shape[axis] //= group_size
    return ShapedArray(tuple(shape), x.dtype)


all_gather_p = new_primitive("all_gather", _unbound_impl("all_gather"), _gather_aval)
psum_scatter_p = new_primitive("psum_scatter", _unbound_impl("psum_scatter"), _scatter_aval)
deflinear(all_gather_p, lambda ct, x, **p: [psum_scatter_p.bind(ct, **p)])
deflinear(psum_scatter_p, lambda ct, x, **p: [all_gather_p.bind(ct, **p)])
batch_rules[all_gather_p] = _mapped(all_gather_p, shift=("axis",))
batch_rules[psum_scatter_p] = _mapped(psum_scatter_p, shift=("axis",))


def _gather_batch(vals, dims, *, axis_size, axis_name, axes, axis, axis_index_groups=None, **_):
    _no_groups("all_gather", axis_index_groups)
    _only_this_axis("all_gather", axes, axis_name)
    x = moveaxis0(vals[0], dims[0], axis_size)      # (n, ..., k at axis + 1, ...)
    x = moveaxis(x, 0, axis)                        # (..., n at axis, k, ...)
    shape = list(x.shape)
    shape[axis:axis + 2] = [shape[axis] * shape[axis + 1]]
    return reshape(x, shape), None


def _scatter_batch(vals, dims, *, axis_size, axis_name, axes, axis, axis_index_groups=None,
                   **_):
    _no_groups("psum_scatter", axis_index_groups)
    _only_this_axis("psum_scatter", axes, axis_name)
    x = reduce_sum(moveaxis0(vals[0], dims[0], axis_size), (0,))
    shape = list(x.shape)
    shape[axis:axis + 1] = [axis_size, shape[axis] // axis_size]
    return reshape(x, shape), axis


named_batch_rules[all_gather_p] = _gather_batch
named_batch_rules[psum_scatter_p] = _scatter_batch


def _gather_lowering(ctx, x, *, axes, axis, group_size, axis_index_groups=None):
    groups, attrs = _collective(ctx, axes, axis_index_groups)
    if groups is None:
        return x
    return ctx.op1("stablehlo.all_gather", [x], ctx.out_aval,
                   f"all_gather_dim = {axis} : i64, {attrs}")


def _scatter_lowering(ctx, x, *, axes, axis, group_size, axis_index_groups=None):
    groups, attrs = _collective(ctx, axes, axis_index_groups)
    if groups is None:
        return x
    region = reducer_region(ctx, "add", x.aval)
    return ctx.op1("stablehlo.reduce_scatter", [x], ctx.out_aval,
                   f"scatter_dimension = {axis} : i64, {attrs}", [region])


lowering_rules[all_gather_p] = _gather_lowering
lowering_rules[psum_scatter_p] = _scatter_lowering


def all_gather(x, axis_name, *, axis_index_groups=None, axis: int = 0, tiled: bool = False):
    """Every device's x (a pytree) stacked along a new axis `axis` (or, with
    `tiled=True`, concatenated along the existing axis `axis`); with
    `axis_index_groups`, the devices of each group's.

    >>> import funcad, numpy as np
    >>> funcad.vmap(lambda v: all_gather(v, "i"), axis_name="i")(np.arange(2.0))
    Array([[0., 1.],
           [0., 1.]], dtype=float64)
    """
    groups = _index_groups(axis_index_groups, axis_name, "all_gather")
    n = axis_size(axis_name) if groups is None else len(groups[0])
    leaves, back = _leaves(x)
    outs = []
    for v in leaves:
        nd = _ndim(v)
        a = canonical_axis(axis, nd + (0 if tiled else 1), "all_gather")
        if not tiled:
            v = expand_dims(v, (a,))
        outs.append(all_gather_p.bind(v, axes=_names(axis_name), axis=a, group_size=n,
                                      **_group_kw(groups)))
    return back(outs)


def _ndim(v):
    return aval_of(v).ndim


def psum_scatter(x, axis_name, *, scatter_dimension: int = 0, axis_index_groups=None,
                 tiled: bool = False):
    """The psum of x (a pytree) with each device keeping one block of it along
    `scatter_dimension` (whose size must be the number of devices unless `tiled`);
    with `axis_index_groups`, summed and scattered within each group.

    >>> import funcad, numpy as np
    >>> funcad.vmap(lambda v: psum_scatter(v, "i"), axis_name="i")(np.ones((2, 2)))
    Array([2., 2.], dtype=float64)
    """
    groups = _index_groups(axis_index_groups, axis_name, "psum_scatter")
    n = axis_size(axis_name) if groups is None else len(groups[0])
    leaves, back = _leaves(x)
    outs = []
    for v in leaves:
        shape = _shape(v)
        d = canonical_axis(scatter_dimension, len(shape), "psum_scatter")
        if not tiled and shape[d] != n:
            raise FuncadValueError(
                f"psum_scatter: dimension {d} of x has size {shape[d]}, but without tiled=True "
                f"it must equal the size {n} of the axis {axis_name!r} (or of its groups)")
        y = psum_scatter_p.bind(v, axes=_names(axis_name), axis=d, group_size=n,
                                **_group_kw(groups))
        outs.append(y if tiled else squeeze(y, (d,)))
    return back(outs)


def _shape(v):
    return aval_of(v).shape


# --------------------------------------------------------------- ppermute ----

def _perm_aval(x, *, axes, perm):
    return ShapedArray(x.shape, x.dtype)


ppermute_p = new_primitive("ppermute", _unbound_impl("ppermute"), _perm_aval)
deflinear(ppermute_p, lambda ct, x, *, axes, perm: [
    ppermute_p.bind(ct, axes=axes, perm=tuple((d, s) for s, d in perm))])
batch_rules[ppermute_p] = _mapped(ppermute_p)


def _ppermute_batch(vals, dims, *, axis_size, axis_name, axes, perm):
    _only_this_axis("ppermute", axes, axis_name)
    x = moveaxis0(vals[0], dims[0], axis_size)
    rest = _shape(x)[1:]
    src = dict((d, s) for s, d in perm)
    pieces = [slice_(x, (src[i],) + (0,) * len(rest), (src[i] + 1,) + rest) if i in src else
              full((1,) + rest, 0, _dtype(x)) for i in range(axis_size)]
    return concatenate(pieces, 0), 0


named_batch_rules[ppermute_p] = _ppermute_batch


def _ppermute_lowering(ctx, x, *, axes, perm):
    man = _manual(ctx, "ppermute")
    groups = replica_groups(man.mesh, axes, man.assignment)
    pairs = [(g[s], g[d]) for g in groups for s, d in perm]
    if not pairs:
        return ctx.full(0, x.aval.dtype, x.aval.shape)
    if len(groups[0]) == 1:
        return x
    rows = ", ".join(f"[{s}, {d}]" for s, d in pairs)
    return ctx.op1("stablehlo.collective_permute", [x], x.aval,
                   f"{_channel(ctx)}, source_target_pairs = dense<[{rows}]> : "
                   f"tensor<{len(pairs)}x2xi64>")


lowering_rules[ppermute_p] = _ppermute_lowering


def ppermute(x, axis_name, perm):
    """x (a pytree) sent along the named axes: for each (source, destination) in
    `perm`, the device at index destination receives the source's value; devices
    that receive nothing get zeros.

    >>> import funcad, numpy as np
    >>> funcad.vmap(lambda v: ppermute(v, "i", [(0, 1), (1, 2), (2, 0)]), axis_name="i")(
    ...     np.arange(3.0))
    Array([2., 0., 1.], dtype=float64)
    """
    n = axis_size(axis_name)
    perm = tuple((int(s), int(d)) for s, d in perm)
    srcs, dsts = [s for s, _ in perm], [d for _, d in perm]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise FuncadValueError(f"ppermute: perm {list(perm)} sends from or to a device twice; "
                               f"each index may appear at most once as a source and once as a "
                               f"destination")
    if not all(0 <= i < n for i in srcs + dsts):
        raise FuncadValueError(f"ppermute: perm {list(perm)} has an index outside the axis "
                               f"{axis_name!r} of size {n}")
    leaves, back = _leaves(x)
    return back([ppermute_p.bind(v, axes=_names(axis_name), perm=perm) for v in leaves])


def pshuffle(x, axis_name, perm):
    """x (a pytree) with device i receiving device perm[i]'s value.

    >>> import funcad, numpy as np
    >>> funcad.vmap(lambda v: pshuffle(v, "i", [2, 0, 1]), axis_name="i")(np.arange(3.0))
    Array([2., 0., 1.], dtype=float64)
    """
    if sorted(perm) != list(range(axis_size(axis_name))):
        raise FuncadValueError(f"pshuffle: perm {list(perm)} is not a permutation of the "
                               f"indices of the axis {axis_name!r}")
    return ppermute(x, axis_name, [(s, d) for d, s in enumerate(perm)])


# ------------------------------------------------------------- all_to_all ----
# Tiled: x split along split_axis into one block per device; device j gets
# block j of every device, concatenated along concat_axis in device order.

def _a2a_aval(x, *, axes, split_axis, concat_axis, group_size):
    shape = list(x.shape)
    if shape[split_axis] % group_size:
        raise FuncadValueError(f"all_to_all: split_axis {split_axis} of size "
                               f"{shape[split_axis]} does not split evenly over the {group_size} "
                               f"devices of {axes}")
    shape[split_axis] //= group_size
    shape[concat_axis] *= group_size
    return ShapedArray(tuple(shape), x.dtype)


all_to_all_p = new_primitive("all_to_all", _unbound_impl("all_to_all"), _a2a_aval)
deflinear(all_to_all_p, lambda ct, x, *, axes, split_axis, concat_axis, group_size: [
    all_to_all_p.bind(ct, axes=axes, split_axis=concat_axis, concat_axis=split_axis,
                      group_size=group_size)])
batch_rules[all_to_all_p] = _mapped(all_to_all_p, shift=("split_axis", "concat_axis"))


def _a2a_batch(vals, dims, *, axis_size, axis_name, axes, split_axis, concat_axis, **_):
    _only_this_axis("all_to_all", axes, axis_name)
    n = axis_size
    x = moveaxis0(vals[0], dims[0], n)            # (n_src, *S)
    s = split_axis + 1
    shape = list(x.shape)
    shape[s:s + 1] = [n, shape[s] // n]           # (n_src, ..., n_dst, m, ...)
    x = moveaxis(reshape(x, shape), s, 0)         # (n_dst, n_src, *S') with S[split] -> m
    x = moveaxis(x, 1, concat_axis + 1)           # n_src just before S'[concat]: its major part
    shape = list(x.shape)
    c = concat_axis + 1
    shape[c:c + 2] = [shape[c] * shape[c + 1]]
    return reshape(x, shape), 0


named_batch_rules[all_to_all_p] = _a2a_batch


def _a2a_lowering(ctx, x, *, axes, split_axis, concat_axis, group_size):
    groups, attrs = _collective(ctx, axes)
    if groups is None:
        return x
    return ctx.op1("stablehlo.all_to_all", [x], ctx.out_aval,
                   f"split_dimension = {split_axis} : i64, concat_dimension = {concat_axis} : i64, "
                   f"split_count = {group_size} : i64, {attrs.replace(', use_global_device_ids', '')}")


lowering_rules[all_to_all_p] = _a2a_lowering


def all_to_all(x, axis_name, split_axis: int, concat_axis: int, *, tiled: bool = False):
    """Split x (a pytree) along `split_axis` into one block per device and send
    block j to device j; the received blocks are stacked along `concat_axis` (a
    new axis of the result unless `tiled`, where they are concatenated).

    >>> import funcad, numpy as np
    >>> funcad.vmap(lambda v: all_to_all(v, "i", 0, 0), axis_name="i")(
    ...     np.arange(4.0).reshape(2, 2))
    Array([[0., 2.],
           [1., 3.]], dtype=float64)
    """
    n = axis_size(axis_name)
    leaves, back = _leaves(x)
    outs = []
    for v in leaves:
        nd = _ndim(v)
        s = canonical_axis(split_axis, nd, "all_to_all")
        c = canonical_axis(concat_axis, nd, "all_to_all")
        size = _shape(v)[s]
        if tiled and size % n:
            raise FuncadValueError(f"all_to_all: the size {size} of split_axis {s} must be "
                                   f"divisible by the size {n} of the axis {axis_name!r}")
        if not tiled:
            if size != n:
                raise FuncadValueError(
                    f"all_to_all requires the size of the axis {axis_name!r} ({n}) to equal "
                    f"x.shape[split_axis] ({size}); pass tiled=True to split it into blocks")
            if s < c:
                c += 1
                v = expand_dims(v, (c,))
            elif c < s:
                v = expand_dims(v, (c,))
                s += 1
        y = all_to_all_p.bind(v, axes=_names(axis_name), split_axis=s, concat_axis=c,
                              group_size=n)
        outs.append(y if tiled or s == c else squeeze(y, (s,)))
    return back(outs)


def pswapaxes(x, axis_name, axis):
    """all_to_all(x, axis_name, axis, axis): swap the named axis with axis `axis`.

    >>> import funcad, numpy as np
    >>> funcad.vmap(lambda v: pswapaxes(v, "i", 0), axis_name="i")(np.arange(4.0).reshape(2, 2))
    Array([[0., 2.],
           [1., 3.]], dtype=float64)
    """
    return all_to_all(x, axis_name, axis, axis)


# ------------------------------------------------------------- axis_index ----

def _index_aval(*, axes):
    return ShapedArray((), np.int32)


axis_index_p = new_primitive("axis_index", _unbound_impl("axis_index"), _index_aval)
defzero(axis_index_p)


def _index_batch(vals, dims, *, axis_size, axis_name, axes):
    # the linear index over several axes (the first one major): this axis's iota,
    # plus each other axis's own index times its stride
    sizes = [axis_size if a == axis_name else axis_frame(a, "axis_index").size for a in axes]
    strides = [math.prod(sizes[k + 1:]) for k in range(len(axes))]
    k = axes.index(axis_name)
    idx = mul(iota(np.int32, (axis_size,)), np.int32(strides[k]))
    for a, st in zip(axes, strides):
        if a != axis_name:
            idx = add(idx, mul(axis_index_p.bind(axes=(a,)), np.int32(st)))
    return idx, 0


named_batch_rules[axis_index_p] = _index_batch


def _index_lowering(ctx, *, axes):
    man = _manual(ctx, "axis_index")
    part, names = ctx.module.partition, man.mesh.axis_names
    rest = [a for a in names if a not in man.axes]
    if part is not None and part.shardy and math.prod(man.mesh.shape[a] for a in rest) > 1:
        # Shardy refuses partition_id where axes are left to it; as JAX, read it in a
        # region manual over those too
        i32 = ShapedArray((), np.int32)
        return part.manual(ctx, [], man.mesh, (), (PartitionSpec(),), frozenset(rest), [], [i32],
                           lambda c, consts, locals_: [_partition_index(c, man, axes)],
                           bound=frozenset(man.axes))[0]
    return _partition_index(ctx, man, axes)


def _partition_index(ctx, man, axes):
    """The index along `axes` of the partition running, from partition_id."""
    groups = replica_groups(man.mesh, axes, man.assignment)
    table = np.zeros(len(man.assignment), np.int32)
    for g in groups:
        for rank, part in enumerate(g):
            table[part] = rank
    if len(man.assignment) == 1:
        return ctx.constant(0, np.int32)
    i32 = ShapedArray((), np.int32)
    pid = ctx.op1("stablehlo.partition_id", [], ShapedArray((), np.uint32))
    pid = ctx.op1("stablehlo.convert", [pid], i32)
    vec = ShapedArray((len(table),), np.int32)
    const = ctx.op1("stablehlo.constant", [], vec,
                    f"value = dense<[{', '.join(map(str, table))}]> : {tensor_type(vec)}")
    one = ctx.op1("stablehlo.dynamic_slice", [const, pid], ShapedArray((1,), np.int32),
                  "slice_sizes = array<i64: 1>")
    return ctx.op1("stablehlo.reshape", [one], i32)


lowering_rules[axis_index_p] = _index_lowering


def axis_index(axis_name):
    """This device's (or vmap entry's) index along the named axis (over several
    axes: the linear index, the first axis major), an int32.

    >>> import funcad, numpy as np
    >>> funcad.vmap(lambda v: v + axis_index("i"), axis_name="i")(np.zeros(3))
    Array([0., 1., 2.], dtype=float64)
    """
    _frames(axis_name, "axis_index")
    return axis_index_p.bind(axes=_names(axis_name))


COLLECTIVES = (psum_p, psum_invariant_p, pvary_p, pmax_p, pmin_p, all_gather_p, psum_scatter_p,
               ppermute_p, all_to_all_p, axis_index_p)


# Sharding rules: inside a shard_map over some of an Explicit mesh's axes a value's type
# keeps its split over the free axes; a collective over the manual axes keeps it (a
# dimension it grows or shrinks must stay divisible), as JAX's.
for _p in (psum_p, psum_invariant_p, pvary_p, pmax_p, pmin_p, all_gather_p, psum_scatter_p,
           ppermute_p, all_to_all_p):
    sharding_rules[_p] = same_as_operand
sharding_rules[axis_index_p] = lambda **params: ()
