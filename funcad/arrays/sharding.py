"""`funcad.sharding`'s functions: meshes over the devices, `reshard`, and the scopes
that change mesh axis types (`auto_axes`, `explicit_axes`). The types themselves
(Mesh, NamedSharding, PartitionSpec, ...) are in core/sharding.py; the sharding
constraint primitive in primitives/sharding.py.

>>> import funcad
>>> make_mesh((funcad.device_count(),), ("data",)).axis_names
('data',)
"""
import functools as _functools
import math as _math
from typing import Sequence as _Sequence

import numpy as _np

from ..core.avals import aval_of as _aval_of
from ..core.errors import FuncadValueError as _FuncadValueError
from ..core.pytree import tree_flatten as _tree_flatten, tree_unflatten as _tree_unflatten
from ..core.sharding import (AxisType, Mesh, NamedSharding, PartitionSpec, Sharding, SingleDeviceSharding,
                             _axes, concrete_mesh as _concrete_mesh, context_mesh as _context_mesh,
                             get_abstract_mesh, resolve_spec, set_mesh)
from ..core.trace import ctx as _ctx
from ..lowering.array import Array as _Array
from ..lowering.devices import devices as _all_devices
from ..lowering.runtime import device_put as _device_put
from ..primitives.sharding import sharding_constraint_p as _sharding_constraint_p
from .creation import asarray as _asarray

__all__ = ["auto_axes", "explicit_axes", "make_mesh", "make_single_device_sharding", "reshard"]


def make_mesh(axis_sizes: _Sequence[int], axis_names: _Sequence[str], axis_types=None, *,
              devices=None) -> Mesh:
    """A mesh of `axis_sizes` over `devices` (default: all devices of the default backend).

    Its axes are `AxisType.Explicit` unless `axis_types` says otherwise, as JAX 0.12's:
    arrays laid out on it carry their shardings in their types (`funcad.typeof`).

    >>> import funcad
    >>> funcad.make_mesh((funcad.device_count(),), ("data",)).axis_types
    (Explicit,)
    """
    axis_shapes = tuple(int(s) for s in axis_sizes)
    if devices is None:
        devices = _all_devices()
    devices = list(devices)
    n = _math.prod(axis_shapes)
    if n != len(devices):
        raise _FuncadValueError(f"make_mesh: the mesh shape {axis_shapes} needs {n} devices, but "
                               f"{len(devices)} are given; pick axis sizes whose product is "
                               f"{len(devices)}, or pass devices=...")
    if axis_types is None:
        axis_types = (AxisType.Explicit,) * len(axis_shapes)
    return Mesh(_np.array(devices, dtype=object).reshape(axis_shapes), axis_names, axis_types)


def make_single_device_sharding(device) -> SingleDeviceSharding:
    """`SingleDeviceSharding(device)`.

    >>> import funcad
    >>> make_single_device_sharding(funcad.devices()[0]).num_devices
    1
    """
    return SingleDeviceSharding(device)


def _per_leaf(tree_of_shardings, leaves, tree, what: str) -> list:
    is_leaf = lambda s: s is None or isinstance(s, (Sharding, PartitionSpec))  # noqa: E731
    if is_leaf(tree_of_shardings):
        return [tree_of_shardings] * len(leaves)
    shardings, s_tree = _tree_flatten(tree_of_shardings, is_leaf=is_leaf)
    if s_tree != tree:
        raise _FuncadValueError(f"{what}: {tree_of_shardings!r} does not match the structure of "
                                f"the values; pass one sharding or a matching tree")
    return shardings


def _on_mesh(s, x, what: str):
    """`s` (a Sharding or PartitionSpec) as a NamedSharding: a PartitionSpec over the
    context mesh, else over the mesh of x's type."""
    if not isinstance(s, PartitionSpec):
        return s
    if _context_mesh() is not None or not get_abstract_mesh().empty:  # set_mesh's or use_abstract_mesh's
        return resolve_spec(s, what)
    typed = _aval_of(x)._sharding
    if typed is None:
        raise _FuncadValueError(f"{what} got the PartitionSpec {s} but no mesh is set: enter one "
                                f"with funcad.sharding.set_mesh(mesh), or pass NamedSharding(mesh, spec)")
    return NamedSharding(_concrete_mesh(typed.mesh), s)


def _relaid(x, s):
    """x laid out as the NamedSharding s, its type's sharding set from s's Explicit axes."""
    if _ctx.trace is None:
        return _device_put(x, s)
    return _sharding_constraint_p.bind(x, sharding=s)


def reshard(xs, out_shardings):
    """xs (a pytree) resharded as `out_shardings` (a Sharding or PartitionSpec, or a tree
    of them), as `jax.sharding.reshard`: on Explicit mesh axes the sharding in each
    array's type becomes the new one (the data moves as needed), eagerly and under jit.
    A PartitionSpec means one over the context mesh (or the mesh of the array's type).
    A spec naming an Auto or Manual axis is JAX's error: lay values out on Auto axes
    with `funcad.device_put` or `with_sharding_constraint`.

    >>> import funcad, numpy as np
    >>> from funcad.sharding import AxisType, PartitionSpec as P
    >>> mesh = funcad.make_mesh((1,), ("x",), (AxisType.Explicit,), devices=funcad.devices()[:1])
    >>> with set_mesh(mesh):
    ...     funcad.typeof(reshard(np.arange(2.0), P("x"))).str_short()
    'f64[2@x]'
    """
    leaves, tree = _tree_flatten(xs)
    out = []
    for x, s in zip(leaves, _per_leaf(out_shardings, leaves, tree, "reshard")):
        s = _on_mesh(s, x, "reshard")
        if isinstance(s, NamedSharding):
            types = dict(zip(s.mesh.axis_names, s.mesh.axis_types))
            for a in (a for p in s.spec for a in _axes(p)):
                if types[a] is not AxisType.Explicit:
                    raise _FuncadValueError(
                        f"PartitionSpec passed to reshard cannot contain axis names that are of "
                        f"type Auto or Manual. Got PartitionSpec: {s.spec} with axis name: {a} of "
                        f"type: AxisType.{types[a].name}. Lay values out on Auto axes with "
                        f"funcad.device_put or funcad.lax.with_sharding_constraint")
            if not s.mesh.explicit_axes:  # Auto axes only: the layout stays XLA's, as in JAX
                out.append(x if isinstance(x, _Array) else _asarray(x))
                continue
            # the spec with one entry per dimension, as JAX's reshard gives it
            s = NamedSharding(s.mesh, s.spec.update(partitions=tuple(s.spec) + (None,) * (
                _np.ndim(x) - len(s.spec))))
        elif not isinstance(s, Sharding):
            raise _FuncadValueError(f"reshard expects Shardings or PartitionSpecs, got {s!r}")
        out.append(_relaid(x, s))
    return _tree_unflatten(tree, out)


def _axes_mesh(axes, what: str) -> tuple:
    """The context mesh and the axes `axes` names (default: those of the type `what` turns)."""
    mesh = _context_mesh()
    if mesh is None:
        raise _FuncadValueError(f"{what} needs a mesh: enter one with funcad.sharding.set_mesh(mesh)")
    names = (axes,) if isinstance(axes, str) else tuple(axes) if axes is not None else None
    for a in names or ():
        if a not in mesh.axis_names:
            raise _FuncadValueError(f"{what}: {a!r} is not an axis of the context mesh {mesh}")
    return mesh, names


def _retyped(x, mesh):
    """x's layout named on `mesh` (the same devices and axes, other axis types): its type
    then has the axes that are Explicit on `mesh` only."""
    typed = _aval_of(x)._sharding
    spec = PartitionSpec(*typed.spec) if typed is not None else PartitionSpec()
    return _relaid(x, NamedSharding(mesh, spec))


def auto_axes(f=None, /, *, axes=None, out_sharding=None):
    """`f` run with the mesh `axes` (default: all Explicit axes of the context mesh) made
    Auto, as `jax.sharding.auto_axes`: inside, the arrays' types leave those axes to
    XLA's partitioner; the results are resharded to `out_sharding`, given here or as
    the keyword `out_sharding=` of each call.

    >>> import funcad, numpy as np
    >>> from funcad.sharding import AxisType, PartitionSpec as P
    >>> mesh = funcad.make_mesh((1,), ("x",), (AxisType.Explicit,), devices=funcad.devices()[:1])
    >>> with set_mesh(mesh):
    ...     y = auto_axes(lambda a: a * 2, out_sharding=P("x"))(np.ones(2))
    >>> funcad.typeof(y).str_short()
    'f64[2@x]'
    """
    if f is None:
        return lambda g: auto_axes(g, axes=axes, out_sharding=out_sharding)

    @_functools.wraps(f)
    def run(*args, out_sharding=out_sharding, **kwargs):
        mesh, names = _axes_mesh(axes, "auto_axes")
        names = names if names is not None else mesh.explicit_axes
        inner = mesh.update_axis_types({a: AxisType.Auto for a in names})
        leaves, tree = _tree_flatten((args, kwargs))
        with set_mesh(inner):
            a, k = _tree_unflatten(tree, [_retyped(x, inner) for x in leaves])
            out = f(*a, **k)
        if out_sharding is None:
            raise _FuncadValueError("auto_axes needs out_sharding=: the sharding the results' "
                                    "types get back on the Explicit axes")
        return reshard(out, out_sharding)
    return run


def explicit_axes(f=None, /, *, axes=None, in_sharding=None):
    """`f` run with the mesh `axes` (default: all Auto axes of the context mesh) made
    Explicit, as `jax.sharding.explicit_axes`: the arguments are typed with
    `in_sharding` (given here or as the keyword `in_sharding=` of each call) and the
    results' types leave those axes again.

    >>> import funcad, numpy as np
    >>> from funcad.sharding import AxisType, PartitionSpec as P
    >>> mesh = funcad.make_mesh((1,), ("x",), (AxisType.Auto,), devices=funcad.devices()[:1])
    >>> with set_mesh(mesh):
    ...     y = explicit_axes(lambda a: a * 2, in_sharding=P("x"))(np.ones(2))
    >>> funcad.typeof(y).str_short()
    'f64[2]'
    """
    if f is None:
        return lambda g: explicit_axes(g, axes=axes, in_sharding=in_sharding)

    @_functools.wraps(f)
    def run(*args, in_sharding=in_sharding, **kwargs):
        mesh, names = _axes_mesh(axes, "explicit_axes")
        names = names if names is not None else mesh.auto_axes
        inner = mesh.update_axis_types({a: AxisType.Explicit for a in names})
        if in_sharding is None:
            raise _FuncadValueError("explicit_axes needs in_sharding=: the sharding the arguments' "
                                    "types get on the Explicit axes")
        leaves, tree = _tree_flatten((args, kwargs))
        specs = _per_leaf(in_sharding, leaves, tree, "explicit_axes") if not isinstance(
            in_sharding, (Sharding, PartitionSpec)) else [in_sharding] * len(leaves)
        with set_mesh(inner):
            typed = [_relaid(x, NamedSharding(inner, s.spec if isinstance(s, NamedSharding) else s))
                     for x, s in zip(leaves, specs)]
            a, k = _tree_unflatten(tree, typed)
            out = f(*a, **k)
            o_leaves, o_tree = _tree_flatten(out)
        return _tree_unflatten(o_tree, [_retyped(y, mesh) for y in o_leaves])
    return run
