"""with_sharding_constraint: fix a value's layout inside an SPMD program.

The identity on values; under `jit` it becomes `sdy.sharding_constraint` (GSPMD's
`Sharding` custom call where Shardy is off), which XLA's partitioner honours
(resharding as needed). Its derivative and
transpose are the same constraint on the tangent and cotangent, as in JAX.
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from ..core.errors import FuncadTypeError, FuncadValueError
from ..core.layout import Format, sharding_of_format
from ..core.pytree import tree_flatten, tree_unflatten
from ..core.trace import (Primitive, abstract_eval_rules, batch_rules, impl_rules, lowering_rules,
                          sharding_rules)
from ..core.avals import aval_of
from ..core.typed_sharding import BY_SHAPE_RULE, concrete, type_sharding
from ..lowering.stablehlo import unconstrained
from ..core.sharding import AxisType, NamedSharding, PartitionSpec, Sharding, batching, resolve_spec
from ._base import deflinear, defpython
from ..core.trace import ctx
from ..lowering.runtime import device_put
from ..lowering.array import is_device_array
from ..lowering.spmd import device_put_sharded

__all__ = ["on_auto_axes", "out_sharded", "takes_out_sharding", "typed_as", "with_sharding_constraint"]

sharding_constraint_p = Primitive("sharding_constraint")


def with_sharding_constraint(x, shardings):
    """x (a pytree), each leaf laid out as `shardings` says (one Sharding for all,
    or a matching tree; a PartitionSpec means one over the mesh of `funcad.set_mesh`)
    wherever XLA's partitioner places it.

    >>> import funcad, numpy as np
    >>> from funcad.sharding import SingleDeviceSharding
    >>> s = SingleDeviceSharding(funcad.devices()[0])
    >>> funcad.jit(lambda v: funcad.lax.with_sharding_constraint(v * 2.0, s))(np.ones(2))
    Array([2., 2.], dtype=float64)
    """
    leaves, tree = tree_flatten(x)
    if isinstance(shardings, (Sharding, PartitionSpec, Format)):
        per_leaf = [shardings] * len(leaves)
    else:
        per_leaf, s_tree = tree_flatten(shardings,
                                        is_leaf=lambda s: isinstance(s, (Sharding, PartitionSpec, Format)))
        if s_tree != tree:
            raise FuncadTypeError(f"with_sharding_constraint: the shardings {shardings!r} do not "
                                  f"match the structure of the values; pass one Sharding or a tree "
                                  f"of Shardings shaped like the values")
    # A Format (jax.experimental.layout) with the layout funcad's arrays have is its sharding.
    per_leaf = [sharding_of_format(s, len(getattr(v, "shape", ())), "with_sharding_constraint")
                if isinstance(s, Format) else s for s, v in zip(per_leaf, leaves)]
    per_leaf = [resolve_spec(s, "with_sharding_constraint") for s in per_leaf]
    for s in per_leaf:
        if not isinstance(s, Sharding):
            raise FuncadTypeError(f"with_sharding_constraint expects funcad.sharding shardings "
                                  f"(NamedSharding, SingleDeviceSharding) or PartitionSpecs "
                                  f"under funcad.set_mesh, got {s!r}")
    outs = [sharding_constraint_p.bind(v, sharding=s) for v, s in zip(leaves, per_leaf)]
    return tree_unflatten(tree, outs)


def out_sharded(x, out_sharding):
    """x laid out as `out_sharding` (a Sharding, or a PartitionSpec over the mesh of
    funcad.set_mesh), as JAX's `out_sharding=` parameters; None leaves it to XLA. A
    sharding funcad cannot express raises with_sharding_constraint's error."""
    if out_sharding is None:
        return x
    if isinstance(out_sharding, NamedSharding) and out_sharding.mesh.empty:
        # the type of an unsharded array (`typeof(x).sharding`): no mesh, nothing to lay out
        return x
    if ctx.trace is None:  # an eager result (a device or a host array) is placed so
        return device_put(x, resolve_spec(out_sharding, "out_sharding"))
    return with_sharding_constraint(x, out_sharding)


def on_auto_axes(x):
    """x with the Explicit axes of its type's mesh made Auto (its layout kept, its type
    unsplit), as inside `auto_axes`: what an op whose `out_sharding=` JAX honours by
    running it under auto_axes computes on. Untyped values are returned as they are."""
    typed = getattr(aval_of(x), "_sharding", None)
    if typed is None or not typed.mesh.explicit_axes:
        return x
    laid = _placeable(typed)
    mesh = laid.mesh.update_axis_types({a: AxisType.Auto for a in laid.mesh.explicit_axes})
    return sharding_constraint_p.bind(x, sharding=NamedSharding(mesh, laid.spec))


def typed_as(x, sharding: NamedSharding):
    """x with the type's sharding `sharding` (on an abstract mesh: staged values keep
    it so, and lowering finds its devices; eager ones are placed on them)."""
    return out_sharded(x, _placeable(sharding))


def _placeable(typed: NamedSharding) -> NamedSharding:
    """`typed` on the devices of its mesh where they are known; else (tracing on an
    AbstractMesh alone, as eval_shape may) on the abstract mesh, which types only."""
    try:
        return concrete(typed)
    except FuncadValueError:
        if ctx.trace is None:
            raise
        return typed


def takes_out_sharding(fn):
    """`fn` with JAX's keyword-only `out_sharding=None` added: the result laid out so."""
    sig = inspect.signature(fn)

    @functools.wraps(fn)
    def run(*args, out_sharding=None, **kwargs):
        return out_sharded(fn(*args, **kwargs), out_sharding)
    params = [p for p in sig.parameters.values() if p.kind is not p.VAR_KEYWORD]
    params.append(inspect.Parameter("out_sharding", inspect.Parameter.KEYWORD_ONLY, default=None))
    params += [p for p in sig.parameters.values() if p.kind is p.VAR_KEYWORD]
    run.__signature__ = sig.replace(parameters=params)
    return run


def _impl(x, *, sharding):
    # a device array is laid out as asked, as JAX does, and so is a value whose type
    # gets the sharding (Explicit mesh axes: a reshard)
    if is_device_array(x) or type_sharding(sharding, np.ndim(x)) is not None:
        return device_put_sharded(x, sharding)
    return x


def _batch(vals, dims, *, axis_size, sharding):
    (x,), (d,) = vals, dims
    if isinstance(sharding, NamedSharding):
        # the batch axis is split over vmap's spmd_axis_name, else not split
        names = batching.spmd_axis_name
        entry = None
        if names:
            for a in names:
                if a not in sharding.mesh.axis_names:
                    raise FuncadValueError(
                        f"vmap(spmd_axis_name={names if len(names) > 1 else names[0]!r}): the "
                        f"mesh axis {a!r} is not in the mesh {sharding.mesh} of the sharding "
                        f"constraint inside; name an axis of that mesh")
                if a in [n for p in sharding.spec for n in (p if isinstance(p, tuple) else (p,))]:
                    raise FuncadValueError(
                        f"vmap(spmd_axis_name={a!r}): the sharding constraint inside already "
                        f"splits a dimension over {a!r} ({sharding.spec}); a mesh axis can split "
                        f"one dimension only")
            entry = names[0] if len(names) == 1 else tuple(names)
        spec = list(sharding.spec) + [None] * max(0, d - len(sharding.spec))
        spec.insert(d, entry)
        sharding = NamedSharding(sharding.mesh, PartitionSpec(*spec))
    return sharding_constraint_p.bind(x, sharding=sharding), d


def _lowering(ctx, x, *, sharding):
    if ctx.module.partition is None:  # a one-device program: nothing to partition
        return x
    if isinstance(sharding, NamedSharding) and not hasattr(sharding.mesh, "devices"):
        sharding = concrete(sharding)  # named under use_abstract_mesh: its devices' mesh
    return ctx.module.partition.constrain(ctx, x, sharding)


impl_rules[sharding_constraint_p] = _impl


def _abstract_eval(x, *, sharding):
    # the layout's Explicit axes become the type's (a reshard; none on an Auto mesh)
    return x.update(sharding=type_sharding(sharding, len(x.shape)))


abstract_eval_rules[sharding_constraint_p] = _abstract_eval
sharding_rules[sharding_constraint_p] = BY_SHAPE_RULE
unconstrained.add(sharding_constraint_p)  # it lowers to the constraint itself
deflinear(sharding_constraint_p,
          lambda ct, x, *, sharding: [sharding_constraint_p.bind(ct, sharding=sharding)])
batch_rules[sharding_constraint_p] = _batch
lowering_rules[sharding_constraint_p] = _lowering
defpython(sharding_constraint_p, "{0}")
