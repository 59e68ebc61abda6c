"""Sharding in types: how an operation's result sharding follows from its operands'.

On a mesh with `AxisType.Explicit` axes an array's sharding is part of its type
(`ShapedArray.sharding`, a NamedSharding on the AbstractMesh whose spec has one
entry per dimension). Each primitive has a *sharding rule* in
`trace.sharding_rules`, registered beside its other rules: `rule(*avals,
**params)` returns the spec of its result (a tuple, one entry per dimension: None,
a mesh axis name, or a tuple of names), or a list of them for several results,
or raises `ShardingTypeError` where JAX does (the result's sharding is
ambiguous; the message names the `out_sharding=` to pass). Staging applies the
rule to every equation one of whose operands has a sharding in its type, or whose
`out_sharding` param is set (`with_shardings`). Primitives whose shape rule
computes the shardings itself register `BY_SHAPE_RULE`: those with a body (jit,
scan, cond, ...), whose bodies' types carry them, and `sharding_constraint`
(`reshard`), which sets one.

>>> from funcad.core.sharding import AbstractMesh, AxisType, NamedSharding, PartitionSpec as P
>>> from funcad.core.avals import ShapedArray
>>> m = AbstractMesh((2,), ("x",), (AxisType.Explicit,))
>>> ShapedArray((4, 3), "float32", sharding=NamedSharding(m, P("x", None))).str_short()
'f32[4@x,3]'
"""
from __future__ import annotations

import math

from .errors import FuncadValueError, ShardingTypeError, UnsupportedError
from .sharding import AbstractMesh, Mesh, NamedSharding, PartitionSpec, _axes, resolve_spec
from .trace import hooks
from .trace import sharding_rules
from .sharding import concrete_mesh

__all__ = ["BY_SHAPE_RULE", "axes_of", "broadcasting_rule", "linalg_rule", "spec_of", "type_sharding",
           "with_shardings"]

# The rule of a primitive whose shape rule computes the shardings (from its body).
BY_SHAPE_RULE = object()


def _entry(axes: tuple):
    """One spec entry from the mesh axes splitting a dimension."""
    return None if not axes else axes[0] if len(axes) == 1 else tuple(axes)


def axes_of(entry) -> tuple:
    """The mesh axes of one spec entry (major first)."""
    return _axes(entry)


def is_sharded_array(x) -> bool:
    """Whether x is a device array laid out over several devices: funcad operations on it
    run on its devices (transforms/jit_spmd.py), as JAX's, instead of on its host copy."""
    return type(x) in hooks.typed_types


def spec_of(aval) -> tuple:
    """The spec of `aval`'s type, one entry per dimension (all None when it has none)."""
    s = aval._sharding
    if s is None:
        return (None,) * len(aval.shape)
    return tuple(s.spec)


def type_sharding(sharding, ndim: int):
    """The sharding an array laid out as `sharding` has in its type: its spec over the
    Explicit axes of its mesh (Auto and Manual axes are not in types), on the
    abstract mesh; None when the mesh has no Explicit axis."""
    if not isinstance(sharding, NamedSharding):
        return None
    mesh = sharding.mesh
    explicit = set(mesh.explicit_axes)
    if not explicit:
        return None
    parts = list(sharding.spec) + [None] * (ndim - len(sharding.spec))
    given = sharding.spec
    if given.reduced:
        raise UnsupportedError(
            f"PartitionSpec(reduced={set(given.reduced)}) types values replicated over those axes "
            f"whose cotangents are unreduced, which needs reduced array types and their transposes; "
            f"funcad lacks them (it has unreduced ones). Leave reduced empty and reshard the "
            f"cotangents yourself")
    spec = PartitionSpec(*[_entry(tuple(a for a in _axes(p) if a in explicit)) for p in parts],
                         unreduced=given.unreduced, unreduced_kind=given.unreduced_kind)
    return NamedSharding(mesh.abstract_mesh, spec)


def _out_sharding_mesh(out_sharding):
    s = resolve_spec(out_sharding, "out_sharding")
    if not isinstance(s, NamedSharding):
        raise ShardingTypeError(f"out_sharding must be a NamedSharding or a PartitionSpec under "
                                f"funcad.sharding.set_mesh, got {out_sharding!r}")
    return s.mesh.abstract_mesh, s


def explicit_out_sharding(out_sharding, what: str):
    """`out_sharding=` of an op as its param: a NamedSharding on a mesh with Explicit
    axes (a PartitionSpec over the context mesh), or None where it names no Explicit
    axis (then the op's result is only laid out so, with_sharding_constraint)."""
    if out_sharding is None:
        return None
    s = resolve_spec(out_sharding, f"{what}: out_sharding")
    return s if isinstance(s, NamedSharding) and s.mesh.explicit_axes else None


def out_spec(out_sharding, ndim: int) -> tuple:
    """The spec of an `out_sharding=` (a NamedSharding or a PartitionSpec over the
    context mesh) as a type's spec of rank `ndim` (a PartitionSpec where it keeps
    unreduced axes)."""
    _, s = _out_sharding_mesh(out_sharding)
    t = type_sharding(s, ndim)
    if t is None:
        return (None,) * ndim
    return t.spec if t.spec.unreduced else tuple(t.spec)


def with_shardings(prim, in_avals, out, params):
    """`out` (the shape rule's aval, or list of avals) with the shardings `prim`'s
    sharding rule gives for operands typed `in_avals`."""
    rule = sharding_rules.get(prim)
    if rule is BY_SHAPE_RULE:
        return out
    meshes = {a._sharding.mesh for a in in_avals if a._sharding is not None}
    out_sharding = params.get("out_sharding")
    if out_sharding is not None:
        meshes.add(_out_sharding_mesh(out_sharding)[0])
    meshes.discard(AbstractMesh((), ()))
    if not meshes:
        return out
    if len(meshes) > 1:
        raise ShardingTypeError(f"Mesh for all inputs should be equal. Got one of {prim.name}'s "
                                f"operands on {sorted(map(repr, meshes))[0]} and another on "
                                f"{sorted(map(repr, meshes))[1]}; reshard them onto one mesh")
    mesh = meshes.pop()
    unreduced = _unreduced_inputs(prim, in_avals)
    if rule is None:
        types = ", ".join(a.str_short() for a in in_avals)
        raise ShardingTypeError(
            f"`{prim.name}` has no sharding rule, so it cannot take operands with shardings in "
            f"their types (Explicit mesh axes); got {types}. Reshard the operands to replicated "
            f"(funcad.sharding.reshard(x, P())) or run it under funcad.sharding.auto_axes")
    specs = rule(*in_avals, **params)
    if unreduced:  # a sum of partial sums stays unreduced over the same axes
        specs = PartitionSpec(*specs, unreduced=unreduced[0].unreduced,
                              unreduced_kind=unreduced[0].unreduced_kind)
    if not prim.multiple_results:
        return _typed(prim, in_avals, out, specs, mesh)
    return [_typed(prim, in_avals, o, s, mesh) for o, s in zip(out, specs)]


# The primitives that take unreduced operands (JAX's): sums of partial sums alike.
SUMS_OF_PARTIALS = frozenset({"add", "sub", "add_any"})


def _unreduced_inputs(prim, in_avals) -> list:
    """The specs of the unreduced operands of `prim` (JAX's checks: only sums of
    operands unreduced over the same axes take them)."""
    specs = [a._sharding.spec if a._sharding is not None else PartitionSpec() for a in in_avals]
    if not any(sp.unreduced for sp in specs):
        return []
    types = ", ".join(a.str_short() for a in in_avals)
    if prim.name == "mul" and len(in_avals) == 2:  # JAX's takes a reduced factor; funcad has none
        lhs_u = bool(specs[0].unreduced)
        raise ShardingTypeError(
            f"{'RHS' if lhs_u else 'LHS'} should be reduced along the same axes "
            f"{'LHS' if lhs_u else 'RHS'} is unreduced on. Got lhs={in_avals[0].str_short()} and "
            f"rhs={in_avals[1].str_short()} (funcad has no reduced types: reduce the unreduced "
            f"factor first with funcad.sharding.reshard)")
    if prim.name not in SUMS_OF_PARTIALS or len(in_avals) != 2:
        raise ShardingTypeError(f"{prim.name} is a non-linear operation and cannot accept input that "
                                f"is unreduced. Got {types}. Reduce it first with "
                                f"funcad.sharding.reshard(x, P(...)) (no unreduced axes)")
    (lhs, rhs), names = specs, ("lhs", "rhs")
    for one, other, (a, b) in ((lhs, rhs, names), (rhs, lhs, names[::-1])):
        if one.unreduced and not other.unreduced:
            raise ShardingTypeError(
                f"{a} is unreduced while {b} is not. `{prim.name}` operation does not allow this "
                f"because there will be implicit communication. Please reduce {a} via `reshard` "
                f"before calling `{prim.name}`. Got {types}")
    if (lhs.unreduced, lhs.unreduced_kind) != (rhs.unreduced, rhs.unreduced_kind):
        raise ShardingTypeError(f"lhs and rhs to `{prim.name}` must be unreduced along the same mesh "
                                f"axes. Got {types}")
    return [lhs]


def _typed(prim, in_avals, aval, spec, mesh):
    if not hasattr(aval, "shape") or type(aval).__name__ != "ShapedArray":
        return aval  # tokens and other non-array types carry no sharding
    partial = {"unreduced": spec.unreduced, "unreduced_kind": spec.unreduced_kind} \
        if isinstance(spec, PartitionSpec) and spec.unreduced else {}
    spec = tuple(spec) + (None,) * (len(aval.shape) - len(spec))
    used = [a for p in spec for a in _axes(p)]
    if len(set(used)) != len(used):
        types = ", ".join(a.str_short() for a in in_avals)
        shown = ",".join(f"{n}{'@' + ','.join(_axes(p)) if p else ''}" for n, p in zip(aval.shape, spec))
        raise ShardingTypeError(f"{prim.name} operation with inputs: {types} produces an illegally "
                                f"sharded result: {aval.str_short().split('[')[0]}[{shown}]")
    out = aval.update(sharding=NamedSharding(mesh, PartitionSpec(*spec, **partial)))
    for d, (n, p) in enumerate(zip(aval.shape, spec)):
        k = math.prod(mesh.shape[a] for a in _axes(p))
        if n % k:
            raise FuncadValueError(  # a ValueError, as JAX's
                f"Sharding spec {_axes(p)!r} implies that array axis {d} is partitioned {k} times, but "
                f"does not evenly divide the dimension size {n}. Got shape: {tuple(aval.shape)} "
                f"and sharding {out.sharding}")
    return out


def concrete(type_sh: NamedSharding, *candidates) -> NamedSharding:
    """A type's sharding laid out on devices: the spec on the concrete mesh of the
    abstract one (the first of `candidates`, the context mesh, or the last made)."""
    mesh = type_sh.mesh if isinstance(type_sh.mesh, Mesh) else concrete_mesh(type_sh.mesh, *candidates)
    return NamedSharding(mesh, type_sh.spec)


# ------------------------------------------------------------ shared rules ----

def broadcasting_rule(name: str):
    """The rule of an elementwise (broadcasting) primitive: per dimension, the operands
    whose size is not 1 must agree on the axes, or leave the dimension unsplit."""
    def rule(*avals, **params):
        nd = max(len(a.shape) for a in avals)
        out = [None] * nd
        specs = []
        for a in avals:
            if a._sharding is None:
                continue
            spec = (None,) * (nd - len(a.shape)) + spec_of(a)
            shape = (1,) * (nd - len(a.shape)) + tuple(a.shape)
            specs.append(spec)
            for d, (p, n) in enumerate(zip(spec, shape)):
                if p is None or (n == 1 and len(avals) > 1):
                    continue
                if out[d] is not None and out[d] != p:
                    raise ShardingTypeError(
                        f"{name} got incompatible shardings for broadcasting: "
                        f"{', '.join(map(str, specs))}.")
                out[d] = p
        return tuple(out)
    return rule


def same_as_operand(x, *rest, **params) -> tuple:
    """The result has its (first) operand's type sharding."""
    return spec_of(x)


def dropping(axes):
    """The spec of `x` without the dimensions `axes` (a reduction's)."""
    def rule(x, **params):
        dims = params[axes] if isinstance(params[axes], (tuple, list)) else (params[axes],)
        return tuple(p for i, p in enumerate(spec_of(x)) if i not in dims)
    return rule


def unsplit_along(param: str, what: str):
    """Same as the operand, which must not be split along `params[param]` (a scan along
    an axis, a sort): JAX's error otherwise."""
    def rule(x, *rest, **params):
        axis = params[param]
        spec = spec_of(x)
        if spec[axis] is not None:
            raise ShardingTypeError(f"{what}. Got input type={x.str_short()} and axis={axis}")
        return spec if not rest else [spec] * (1 + len(rest))
    return rule


def reshape_rule(x, *, new_sizes, out_sharding=None, **params) -> tuple:
    """JAX's reshape rule: with the size-1 dimensions set aside, a reshape keeps the
    dimensions, splits one into consecutive ones (its mesh axes handed out major
    first), or merges consecutive ones (their axes joined, no unsplit dimension before
    a split one); anything else needs `out_sharding=`."""
    if out_sharding is not None:
        return out_spec(out_sharding, len(new_sizes))
    spec = spec_of(x)
    if all(p is None for p in spec):
        return (None,) * len(new_sizes)

    def fail():
        raise ShardingTypeError(
            "This reshape is not supported. Please specify the sharding of the output via the "
            "`out_sharding` argument of funcad.lax.reshape. Got operand type: "
            f"{x.str_short()}, new sizes: {tuple(new_sizes)}")
    old = [(n, p) for n, p in zip(x.shape, spec) if n != 1]
    new = [n for n in new_sizes if n != 1]
    sizes = dict(x.sharding.mesh.shape_tuple)

    def hand_out(axes, dims):
        # each new dimension takes the next axes while its size is still split further
        axes, out = list(axes), []
        for n in dims:
            taken = []
            while n > 1 and axes:
                n, r = divmod(n, sizes[axes[0]])
                if r:
                    fail()
                taken.append(axes.pop(0))
            out.append(_entry(tuple(taken)))
        if axes:
            fail()
        return out

    if [n for n, _ in old] == new:
        kept = [p for _, p in old]
    else:
        groups = _one_group(tuple(n for n, _ in old), tuple(new))
        if groups is not None:  # one old dimension split into several
            kept = []
            for (n, p), g in zip(old, groups):
                kept += hand_out(_axes(p), g) if len(g) > 1 else [p]
        else:
            groups = _one_group(tuple(new), tuple(n for n, _ in old))
            if groups is None:
                fail()
            kept, it = [], iter(old)
            for n, g in zip(new, groups):  # several old dimensions merged into one
                parts = [next(it)[1] for _ in g]
                if len(g) == 1:
                    kept.append(parts[0])
                    continue
                while parts and parts[-1] is None:
                    parts.pop()
                if None in parts:
                    fail()
                kept += hand_out([a for p in parts for a in _axes(p)], [n])
    it = iter(kept)
    return tuple(None if n == 1 else next(it) for n in new_sizes)


def _one_group(small: tuple, big: tuple):
    """How `big` refines `small` when exactly one dimension of `small` is the product of
    a run of consecutive dimensions of `big` and the others appear as they are: one
    list of sizes of `big` per dimension of `small`; else None."""
    if len(big) <= len(small):
        return None
    out, j, runs = [], 0, 0
    for n in small:
        if j < len(big) and big[j] == n:
            out.append([n])
            j += 1
            continue
        runs += 1
        run = []
        while j < len(big) and math.prod(run) < n:
            run.append(big[j])
            j += 1
        if runs > 1 or math.prod(run) != n:
            return None
        out.append(run)
    return out if j == len(big) else None


def varying_shape_rule(what: str, out_shape_of):
    """The rule of an op that keeps the operand's spec while changing sizes (slice, pad,
    dynamic_slice): a split dimension's new size must stay divisible by its axes."""
    def rule(x, *rest, **params):
        spec, out_shape = spec_of(x), out_shape_of(x, *rest, **params)
        if all(m == 1 for m in out_shape):  # one element: replicated (JAX's)
            return (None,) * len(out_shape)
        sizes = dict(x.sharding.mesh.shape_tuple) if x._sharding is not None else {}
        for n, m, p in zip(x.shape, out_shape, spec):
            k = math.prod(sizes[a] for a in _axes(p))
            if p is not None and n != m and m % k:
                raise ShardingTypeError(
                    f"{what} on sharded dims where out dim ({m}) is not divisible by mesh axes "
                    f"({k}) with spec ({', '.join(_axes(p))}) is not implemented. Got input "
                    f"type={x.str_short()} and output shape={tuple(out_shape)}")
        return spec
    return rule


def without_dim(sharding, d: int):
    """A type's sharding without dimension `d`'s entry (a scan's slice, vmap's lane)."""
    if sharding is None:
        return None
    spec = tuple(sharding.spec)
    return NamedSharding(sharding.mesh, PartitionSpec(*(spec[:d] + spec[d + 1:])))


def with_dim(sharding, d: int, entry=None):
    """A type's sharding with a new dimension at `d` (split over `entry`'s axes)."""
    if sharding is None:
        return None
    spec = tuple(sharding.spec)
    return NamedSharding(sharding.mesh, PartitionSpec(*(spec[:d] + (entry,) + spec[d:])))


def linalg_rule(name: str, ranks: tuple, out_avals):
    """The rule of a decomposition or solve of stacks of matrices (JAX's): operand i's
    trailing `ranks[i]` (core) dimensions unsplit, every operand's leading (batch)
    dimensions split alike; each result split as the batch, its core dimensions not.
    `out_avals(*avals, **params)` is the shape rule, which says how many results."""
    def rule(*avals, **params):
        batches = []
        for i, (rank, a) in enumerate(zip(ranks, avals)):
            spec = spec_of(a)
            if any(p is not None for p in spec[len(spec) - rank:]):
                raise ShardingTypeError(f"Input {i} to {name} must be unsharded on non-batch "
                                        f"dimensions, but got {PartitionSpec(*spec)}. Reshard it "
                                        f"(funcad.sharding.reshard) to split only the batch dimensions")
            batches.append(spec[:len(spec) - rank])
        if any(b != batches[0] for b in batches[1:]):
            raise ShardingTypeError(f"All inputs to {name} must have the same batch sharding, but "
                                    f"got {batches}. Reshard them alike")
        outs = out_avals(*avals, **params)
        return [batches[0]] * len(outs) if isinstance(outs, (list, tuple)) else batches[0]
    return rule


def triangular_solve_rule(a, b, *, left_side, transpose_a, **params) -> tuple:
    """JAX's: batches split alike, the contracted dimensions of `a` and `b` unsplit; the
    result is split as `a`'s free dimension and `b`'s."""
    sa, sb = spec_of(a), spec_of(b)
    (ba, ca), (bb, cb) = (sa[:-2], sa[-2:]), (sb[:-2], sb[-2:])
    if ba != bb:
        raise ShardingTypeError(f"All inputs to triangular_solve must have the same batch "
                                f"sharding, but got {ba} and {bb}.")
    if ca[left_side ^ transpose_a] is not None:
        raise ShardingTypeError(f"triangular solve input `a` must be unsharded on the contracting "
                                f"axis, but got {PartitionSpec(*sa)} with left_side={left_side} "
                                f"and transpose_a={transpose_a}.")
    if cb[not left_side] is not None:
        raise ShardingTypeError(f"triangular solve input `b` must be unsharded on the contracting "
                                f"axis, but got {PartitionSpec(*sb)} with left_side={left_side} "
                                f"and transpose_a={transpose_a}.")
    core = (ca[transpose_a], cb[1]) if left_side else (cb[0], ca[not transpose_a])
    return ba + core
