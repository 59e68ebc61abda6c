"""Shardings: how an array is laid out over devices (the core of `funcad.sharding`).

A `Mesh` names the axes of an n-d grid of devices; a `PartitionSpec` says,
per array dimension, which mesh axes split it (None: not split); the axes a
spec leaves out replicate the array. `NamedSharding(mesh, spec)` joins them;
`SingleDeviceSharding(device)` puts the whole array on one device. These are
plain descriptions: `funcad.device_put(x, sharding)` lays an array out,
`funcad.jit(f, in_shardings=..., out_shardings=...)` compiles an SPMD
program that XLA partitions, and `funcad.lax.with_sharding_constraint`
fixes a layout inside one.

>>> import funcad, numpy as np
>>> from funcad.core.sharding import Mesh, NamedSharding, PartitionSpec as P
>>> mesh = Mesh(np.array(funcad.devices()[:1]).reshape(1, 1), ("data", "model"))
>>> s = NamedSharding(mesh, P("data", None))
>>> s.shard_shape((4, 3))
(4, 3)
"""
from __future__ import annotations

import enum
import math
import threading
from typing import Sequence

import numpy as np

from .errors import FuncadTypeError, FuncadValueError, UnsupportedError
from .pytree import tree_flatten

__all__ = ["AbstractMesh", "AxisType", "Mesh", "NamedSharding", "PartitionSpec", "Sharding",
           "SingleDeviceSharding", "UnreducedKind", "context_mesh", "flat_shardings",
           "get_abstract_mesh", "get_mesh", "hlo_sharding", "resolve_spec", "set_mesh",
           "use_abstract_mesh"]


class UnreducedKind(enum.Enum):
    """How the pieces of an unreduced array combine into its value (JAX's).

    >>> from funcad.sharding import PartitionSpec as P
    >>> P("x", unreduced={"y"}, unreduced_kind=UnreducedKind.max).unreduced_kind
    <UnreducedKind.max: 2>
    """
    sum = enum.auto()
    max = enum.auto()
    min = enum.auto()


def _axis_set(name: str, value) -> frozenset:
    value = frozenset((value,) if isinstance(value, str) else value)
    if None in value:
        raise FuncadValueError(f"{name} cannot contain None. All elements in {name} should refer to "
                               "the mesh axes.")
    return value


class PartitionSpec(tuple):
    """Per array dimension: a mesh axis name, a tuple of names, or None (not split).
    `unreduced`: mesh axes over which the array is held as partial results (combined
    as `unreduced_kind` says, a sum by default) until a `reshard` reduces them;
    `reduced`: mesh axes over which it is replicated and its cotangent unreduced.

    >>> PartitionSpec("data", None), PartitionSpec("data")
    (P('data', None), P('data',))
    >>> PartitionSpec("data", unreduced={"model"})
    P('data', unreduced={'model'}, unreduced_kind=sum)
    """

    def __new__(cls, *partitions, unreduced=frozenset(), reduced=frozenset(), unreduced_kind=None):
        for p in partitions:
            names = p if isinstance(p, tuple) else (p,)
            if not all(n is None or isinstance(n, str) for n in names):
                raise FuncadTypeError(f"PartitionSpec entries are mesh axis names (str), tuples of "
                                      f"names, or None; got {p!r}")
        unreduced, reduced = _axis_set("unreduced", unreduced), _axis_set("reduced", reduced)
        if unreduced & reduced:
            raise FuncadValueError("`unreduced` and `reduced` argument to PartitionSpec cannot overlap. "
                                   f"Got unreduced: {unreduced} and reduced: {reduced}")
        if unreduced_kind is not None and not isinstance(unreduced_kind, UnreducedKind):
            raise FuncadTypeError("Expected unreduced_kind to be of type "
                                  f"`funcad.sharding.UnreducedKind` but got {type(unreduced_kind)}")
        if unreduced_kind is not None and not unreduced:
            raise FuncadValueError("`unreduced_kind` should be `None` when `unreduced` is an empty "
                                   f"set. Got unreduced_kind={unreduced_kind!r} and unreduced={unreduced}")
        used = [a for p in partitions for a in _axes(p)]
        for name, value in (("unreduced", unreduced), ("reduced", reduced)):
            if value & set(used):
                raise FuncadValueError(f"partitions cannot overlap with {name} axes passed to "
                                       f"PartitionSpec. Got partitions: {partitions} and {name} "
                                       f"axes: {value}")
        self = super().__new__(cls, partitions)
        self.unreduced, self.reduced = unreduced, reduced
        self.unreduced_kind = (unreduced_kind or UnreducedKind.sum) if unreduced else None
        return self

    def __repr__(self):  # JAX 0.12's form: P('x',), P('x', None), P('x', unreduced={'y'}, ...)
        extra = []
        if self.unreduced:
            extra.append(f"unreduced={set(self.unreduced)!r}")
        if self.reduced:
            extra.append(f"reduced={set(self.reduced)!r}")
        if self.unreduced_kind is not None:
            extra.append(f"unreduced_kind={self.unreduced_kind.name}")
        if not extra:
            return f"P{tuple.__repr__(self)}"
        return f"P({', '.join([*map(repr, self), *extra])})"

    def __eq__(self, other):
        if isinstance(other, PartitionSpec):
            return tuple.__eq__(self, other) and (self.unreduced, self.reduced, self.unreduced_kind) == (
                other.unreduced, other.reduced, other.unreduced_kind)
        return tuple.__eq__(self, other) and not self.unreduced and not self.reduced

    def __ne__(self, other):
        return not self == other

    __hash__ = tuple.__hash__

    def __reduce__(self):
        return (_partition_spec, (tuple(self), self.unreduced, self.reduced, self.unreduced_kind))

    def update(self, **kwargs) -> "PartitionSpec":
        """A copy with `partitions`, `unreduced`, `reduced` or `unreduced_kind` replaced (JAX's)."""
        fields = {"partitions": tuple(self), "unreduced": self.unreduced, "reduced": self.reduced,
                  "unreduced_kind": self.unreduced_kind}
        fields.update(kwargs)
        parts = fields.pop("partitions")
        if not fields["unreduced"]:
            fields["unreduced_kind"] = None
        return PartitionSpec(*parts, **fields)


def _partition_spec(parts, unreduced, reduced, unreduced_kind) -> PartitionSpec:
    return PartitionSpec(*parts, unreduced=unreduced, reduced=reduced, unreduced_kind=unreduced_kind)


def _axes(part) -> tuple:
    """The mesh axes splitting one dimension (a spec entry)."""
    if part is None:
        return ()
    return tuple(part) if isinstance(part, tuple) else (part,)


class AxisType(enum.Enum):
    """How a mesh axis shards values, as JAX's `jax.sharding.AxisType`.

    `Auto`: XLA's partitioner propagates shardings (from the inputs, outputs and
    `with_sharding_constraint`). `Explicit`: an array's sharding over the axis is
    part of its type (`funcad.typeof(x).sharding`), propagated by each operation
    at trace time (JAX's "sharding in types"). `Manual`: per-device code (inside
    `shard_map`), where values are the local pieces.
    """
    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self):
        return self.name


def _axis_types(axis_types, n: int, what: str, default=None) -> tuple:
    if axis_types is None:
        return ((default or AxisType.Auto),) * n
    types = (axis_types,) if isinstance(axis_types, AxisType) else tuple(axis_types)
    if len(types) == 1 and n != 1:
        types = types * n
    if len(types) != n or not all(isinstance(t, AxisType) for t in types):
        raise FuncadValueError(f"{what}: axis_types must be one AxisType per axis ({n}), got "
                               f"{axis_types!r}")
    return types


class _MeshAxes:
    """What a Mesh and an AbstractMesh share: names, sizes and the axes of each type."""

    @property
    def shape(self) -> dict:
        return dict(zip(self.axis_names, self.axis_sizes))

    @property
    def shape_tuple(self) -> tuple:
        return tuple(zip(self.axis_names, self.axis_sizes))

    @property
    def empty(self) -> bool:
        return not self.axis_names

    def _axes_of(self, kind) -> tuple:
        return tuple(n for n, t in zip(self.axis_names, self.axis_types) if t is kind)

    explicit_axes = property(lambda self: self._axes_of(AxisType.Explicit))
    auto_axes = property(lambda self: self._axes_of(AxisType.Auto))
    manual_axes = property(lambda self: self._axes_of(AxisType.Manual))

    @property
    def axis_types_dict(self) -> dict:
        """AxisType -> the names of the axes of that type (as JAX's `_axis_types_dict`)."""
        out: dict = {}
        for n, t in zip(self.axis_names, self.axis_types):
            out[t] = out.get(t, ()) + (n,)
        return out

    def update_axis_types(self, name_to_type: dict):
        """This mesh with the axes named in `name_to_type` of the given types."""
        for n in name_to_type:
            if n not in self.axis_names:
                raise FuncadValueError(f"update_axis_types: {n!r} is not an axis of {self}")
        types = tuple(name_to_type.get(n, t) for n, t in zip(self.axis_names, self.axis_types))
        return self._with_types(types)


class AbstractMesh(_MeshAxes):
    """A mesh's axis names, sizes and types without its devices, as JAX's `AbstractMesh`
    (the mesh in a type's sharding).

    >>> AbstractMesh((4, 2), ("data", "model")).shape
    {'data': 4, 'model': 2}
    """

    def __init__(self, axis_sizes: Sequence[int], axis_names: Sequence[str], axis_types=None, *,
                 device_kind: str | None = None, num_cores: int | None = None,
                 platform: str | None = None):
        # the devices' kind, as JAX's (shown, not compared): known for a Mesh's abstract mesh
        self.device_kind, self.num_cores, self.platform = device_kind, num_cores, platform
        self.axis_sizes = tuple(int(s) for s in axis_sizes)
        self.axis_names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        if len(self.axis_sizes) != len(self.axis_names):
            raise FuncadValueError(f"AbstractMesh got {len(self.axis_sizes)} axis sizes but "
                                   f"{len(self.axis_names)} names; give one name per axis")
        # JAX 0.12's default for an AbstractMesh is Explicit (a Mesh's is Auto)
        self.axis_types = _axis_types(axis_types, len(self.axis_names), "AbstractMesh",
                                      AxisType.Explicit)

    @property
    def size(self) -> int:
        return math.prod(self.axis_sizes)

    @property
    def abstract_mesh(self) -> "AbstractMesh":
        return self

    def _with_types(self, types) -> "AbstractMesh":
        return AbstractMesh(self.axis_sizes, self.axis_names, types, device_kind=self.device_kind,
                            num_cores=self.num_cores, platform=self.platform)

    def __eq__(self, other):
        return isinstance(other, AbstractMesh) and (self.axis_sizes, self.axis_names, self.axis_types) \
            == (other.axis_sizes, other.axis_names, other.axis_types)

    def __hash__(self):
        return hash((self.axis_sizes, self.axis_names, self.axis_types))

    def __repr__(self):
        if self.empty:
            return "AbstractMesh((), axis_types=())"
        axes = ", ".join(f"{n!r}: {s}" for n, s in self.shape.items())
        kind = "" if self.platform is None else (f", device_kind={self.device_kind}, num_cores="
                                                 f"{self.num_cores}, platform={self.platform}")
        return f"AbstractMesh({axes}, axis_types={self.axis_types!r}{kind})"


class Mesh(_MeshAxes):
    """An n-d array of devices with a name and an `AxisType` per axis (Auto unless
    `axis_types` says otherwise, as JAX's `Mesh`).

    >>> import funcad, numpy as np
    >>> Mesh(np.array(funcad.devices()[:1]), ("x",)).shape
    {'x': 1}
    """

    def __init__(self, devices, axis_names: Sequence[str], axis_types=None):
        devices = np.asarray(devices, dtype=object)
        axis_names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        self.axis_types = _axis_types(axis_types, len(axis_names), "Mesh")
        if devices.ndim != len(axis_names):
            raise FuncadValueError(f"Mesh got a {devices.ndim}-d device array but {len(axis_names)} "
                                   f"axis names {axis_names}; give one name per axis")
        if len(set(axis_names)) != len(axis_names):
            raise FuncadValueError(f"Mesh axis names must be distinct, got {axis_names}")
        if len({id(d) for d in devices.flat}) != devices.size:
            raise FuncadValueError("a Mesh lists each device at most once")
        self.devices, self.axis_names = devices, axis_names
        self._hash_key = (axis_names, devices.shape, tuple(d.id for d in devices.flat),
                          devices.flat[0].platform, self.axis_types)
        self._abstract = None
        _meshes[self.abstract_mesh] = self

    @property
    def size(self) -> int:
        return self.devices.size

    @property
    def device_ids(self) -> np.ndarray:
        return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

    @property
    def axis_sizes(self) -> tuple:
        return tuple(self.devices.shape)

    @property
    def abstract_mesh(self) -> AbstractMesh:
        if self._abstract is None:
            d = self.devices.flat[0] if self.devices.size else None
            self._abstract = AbstractMesh(
                self.axis_sizes, self.axis_names, self.axis_types,
                device_kind=getattr(d, "device_kind", None), platform=getattr(d, "platform", None),
                num_cores=getattr(d, "num_cores", None))
        return self._abstract

    def _with_types(self, types) -> "Mesh":
        return Mesh(self.devices, self.axis_names, types)

    @property
    def local_devices(self) -> list:
        """The mesh's devices attached to this process."""
        return [d for d in self.devices.flat if d.process_index == d.client.process_index()]

    @property
    def is_multi_process(self) -> bool:
        return len(self.local_devices) != self.size

    @property
    def local_mesh(self) -> "Mesh":
        """The sub-mesh of this process's devices (they must form a contiguous block)."""
        local = np.vectorize(lambda d: d.process_index == d.client.process_index(),
                             otypes=[bool])(self.devices)
        if not local.any():
            raise FuncadValueError(f"{self} has no device of this process, so it has no local mesh")
        block = []
        for axis in range(local.ndim):
            hit = np.flatnonzero(local.any(tuple(a for a in range(local.ndim) if a != axis)))
            block.append(slice(int(hit[0]), int(hit[-1]) + 1))
        if not local[tuple(block)].all():
            raise FuncadValueError(
                "When passing host local inputs to pjit, devices connected to a single host must "
                "form a contiguous subcube of the global device mesh (build the mesh from "
                "funcad.devices() in process order, e.g. with funcad.make_mesh)")
        return Mesh(self.devices[tuple(block)], self.axis_names, self.axis_types)

    def __eq__(self, other):
        return self is other or (isinstance(other, Mesh) and self._hash_key == other._hash_key)

    def __hash__(self):
        return hash(self._hash_key)

    def __repr__(self):
        if not self.axis_names:
            return "Mesh(axis_sizes=(), axis_names=())"
        return (f"Mesh(axis_sizes={self.axis_sizes!r}, axis_names={self.axis_names!r}, "
                f"axis_types={self.axis_types!r})")

    def __str__(self):  # print(mesh), as JAX's: Mesh('x': 4, 'y': 2, axis_types=(...))
        if not self.axis_names:
            return "Mesh()"
        sizes = ", ".join(f"{name!r}: {size}" for name, size in zip(self.axis_names, self.axis_sizes))
        return f"Mesh({sizes}, axis_types={self.axis_types!r})"


# The last concrete Mesh made for each abstract one: where a type's sharding (which
# names an AbstractMesh) is laid out on devices when no argument or context mesh says.
_meshes: dict = {}


def concrete_mesh(abstract: AbstractMesh, *candidates) -> Mesh:
    """The devices for `abstract`: the first of `candidates` (meshes), the context
    mesh, or the last Mesh made, whose abstract mesh it is."""
    for m in (*candidates, _context.mesh):
        if m is not None and m.abstract_mesh == abstract:
            return m
    m = _meshes.get(abstract)
    if m is None:  # a shard_map body's mesh (its mapped axes Manual): the devices of the same axes
        same = [m for m in (*candidates, _context.mesh, *reversed(list(_meshes.values())))
                if m is not None and (m.axis_names, m.axis_sizes) == (abstract.axis_names, abstract.axis_sizes)]
        if AxisType.Manual not in abstract.axis_types or not same:
            raise FuncadValueError(f"no Mesh with devices is known for {abstract}; enter one with "
                                   f"funcad.sharding.set_mesh(mesh)")
        m = same[0]
    return m


class Sharding:
    """How an array is laid out over devices (base class)."""

    @property
    def device_set(self) -> set:
        return set(self._device_assignment)

    @property
    def num_devices(self) -> int:
        return len(self._device_assignment)

    @property
    def memory_kind(self) -> str:
        """Where on the devices the array lives; funcad keeps arrays in device memory."""
        return "device"

    def shard_shape(self, global_shape: Sequence[int]) -> tuple:
        """The shape of each device's piece of an array of `global_shape`."""
        return tuple(int(s) // t for s, t in zip(global_shape, self._tiles(len(global_shape))))

    def devices_indices_map(self, global_shape: Sequence[int]) -> dict:
        """device -> the tuple of slices of the global array it holds."""
        shape = tuple(int(s) for s in global_shape)
        tiles = self._tiles(len(shape))
        for d, (s, t) in enumerate(zip(shape, tiles)):
            if s % t:
                raise FuncadValueError(
                    f"{self!r} splits dimension {d} of an array of shape {shape} into {t} pieces, "
                    f"but {s} is not divisible by {t}; pick a shape or a mesh that divides evenly")
        out = {}
        for dev, coords in self._tile_coords(len(shape)):
            out[dev] = tuple(slice(c * (s // t), (c + 1) * (s // t)) if t > 1 else slice(None)
                             for c, s, t in zip(coords, shape, tiles))
        return out

    addressable_devices_indices_map = devices_indices_map  # one process: all are addressable

    @property
    def addressable_devices(self) -> set:
        return self.device_set


class SingleDeviceSharding(Sharding):
    """The whole array on one device."""

    def __init__(self, device):
        self._device = device

    @property
    def _device_assignment(self) -> tuple:
        return (self._device,)

    @property
    def is_fully_replicated(self) -> bool:
        return True

    def _tiles(self, ndim):
        return (1,) * ndim

    def _tile_coords(self, ndim):
        yield self._device, (0,) * ndim

    def __eq__(self, other):
        return isinstance(other, SingleDeviceSharding) and other._device == self._device

    def __hash__(self):
        return hash(("single", self._device.id, self._device.platform))

    def __repr__(self):
        return f"SingleDeviceSharding(device={self._device!r})"


class NamedSharding(Sharding):
    """An array split over the named axes of a `Mesh` as a `PartitionSpec` says.

    >>> import funcad, numpy as np
    >>> mesh = Mesh(np.array(funcad.devices()[:1]), ("x",))
    >>> NamedSharding(mesh, PartitionSpec("x")).is_fully_replicated
    True
    """

    def __init__(self, mesh: Mesh | AbstractMesh, spec: PartitionSpec = PartitionSpec()):
        # an AbstractMesh's NamedSharding is a type's sharding: it names no devices
        if not isinstance(mesh, (Mesh, AbstractMesh)):
            raise FuncadTypeError(f"NamedSharding expects a funcad.sharding.Mesh or AbstractMesh, "
                                  f"got {mesh!r}")
        spec = spec if isinstance(spec, PartitionSpec) else PartitionSpec(*spec)
        used = [a for p in spec for a in _axes(p)]
        for a in used:
            if a not in mesh.axis_names:
                raise FuncadValueError(f"PartitionSpec {spec} names the axis {a!r}, which the mesh "
                                       f"{mesh} does not have; use one of {mesh.axis_names}")
        if len(set(used)) != len(used):
            raise FuncadValueError(f"PartitionSpec {spec} uses a mesh axis more than once")
        types = dict(zip(mesh.axis_names, mesh.axis_types))
        for name, axes in (("Unreduced", spec.unreduced), ("Reduced", spec.reduced)):
            for a in axes:
                if a not in types:
                    raise FuncadValueError(f"{name} axes {a} is not found in mesh.axis_names="
                                           f"{mesh.axis_names}. Got pspec={spec!r}")
                if types[a] is not AxisType.Explicit:
                    raise FuncadValueError(f"{name} axes can only refer to mesh axes that is of type "
                                           f"`Explicit`. Got {name.lower()} axes: {set(axes)} and mesh: "
                                           f"{mesh}")
        self.mesh, self.spec = mesh, spec

    @property
    def _device_assignment(self) -> tuple:
        if isinstance(self.mesh, AbstractMesh):
            raise FuncadValueError(f"{self!r} is on an AbstractMesh, which has no devices; use "
                                   f"NamedSharding(mesh, spec) with a funcad.sharding.Mesh")
        return tuple(self.mesh.devices.flat)

    @property
    def is_fully_replicated(self) -> bool:
        return all(self.mesh.shape[a] == 1 for p in self.spec for a in _axes(p))

    def _check_rank(self, ndim):
        if len(self.spec) > ndim:
            raise FuncadValueError(f"{self!r} has {len(self.spec)} entries, more than the rank "
                                   f"{ndim} of the array it is used for; give one entry per "
                                   f"dimension at most")

    def _tiles(self, ndim) -> tuple:
        self._check_rank(ndim)
        parts = list(self.spec) + [None] * (ndim - len(self.spec))
        return tuple(math.prod(self.mesh.shape[a] for a in _axes(p)) for p in parts)

    def _tile_coords(self, ndim):
        parts = list(self.spec) + [None] * (ndim - len(self.spec))
        names = self.mesh.axis_names
        for idx in np.ndindex(self.mesh.devices.shape):
            pos = dict(zip(names, idx))
            coords = []
            for p in parts:
                c = 0
                for a in _axes(p):  # the first axis of a tuple is the major one
                    c = c * self.mesh.shape[a] + pos[a]
                coords.append(c)
            yield self.mesh.devices[idx], tuple(coords)

    def _hlo(self, ndim: int, assignment: Sequence) -> str:
        """The GSPMD sharding string (`mhlo.sharding`) for a rank-`ndim` array in
        a program whose partitions are the devices `assignment`, in order."""
        tiles = self._tiles(ndim)
        if all(t == 1 for t in tiles):
            return "{replicated}"
        position = {id(d): i for i, d in enumerate(assignment)}
        ids = np.vectorize(lambda d: position[id(d)], otypes=[int])(self.mesh.devices)
        parts = list(self.spec) + [None] * (ndim - len(self.spec))
        order = [self.mesh.axis_names.index(a) for p in parts for a in _axes(p)]
        rest = [i for i in range(len(self.mesh.axis_names)) if i not in order]
        grid = ids.transpose(order + rest)
        replicas = math.prod(ids.shape[i] for i in rest)
        dims = list(tiles) + ([replicas] if replicas > 1 else [])
        devs = ",".join(map(str, grid.reshape(-1)))
        tail = " last_tile_dim_replicate" if replicas > 1 else ""
        return f"{{devices=[{','.join(map(str, dims))}]{devs}{tail}}}"

    def __eq__(self, other):
        return (isinstance(other, NamedSharding) and other.mesh == self.mesh
                and _trimmed(other.spec) == _trimmed(self.spec))

    def __hash__(self):
        return hash((self.mesh, _trimmed(self.spec)))

    def __repr__(self):
        kind = "" if isinstance(self.mesh, AbstractMesh) else f", memory_kind={self.memory_kind}"
        return f"NamedSharding(mesh={self.mesh!s}, spec={self.spec!r}{kind})"  # the mesh as print shows it, as JAX


def _trimmed(spec) -> tuple:
    """A spec without trailing Nones (P('x') and P('x', None) mean the same)."""
    parts = list(spec)
    while parts and parts[-1] is None:
        parts.pop()
    return tuple(parts)


def hlo_sharding(sharding: Sharding, ndim: int, assignment: Sequence) -> str:
    """The `mhlo.sharding` string of `sharding` for a rank-`ndim` value."""
    if isinstance(sharding, SingleDeviceSharding):
        if len(assignment) == 1:
            return "{replicated}"
        position = [i for i, d in enumerate(assignment) if d == sharding._device]
        return f"{{maximal device={position[0]}}}"
    return sharding._hlo(ndim, assignment)


# ------------------------------------------------------------ mesh context ----
# The mesh of `set_mesh` (per thread, like JAX's context): PartitionSpecs given
# where a Sharding is expected (jit's in/out_shardings, device_put,
# with_sharding_constraint) and shard_map without mesh= use it.

class _MeshContext(threading.local):
    def __init__(self):
        self.mesh = None
        self.abstract = None  # use_abstract_mesh's, over the concrete mesh's own


_context = _MeshContext()


class _Batching(threading.local):
    # vmap(spmd_axis_name=) of the batching rule running: the mesh axes a sharding
    # constraint splits the batch dimension over (set by transforms/vmap.py)
    spmd_axis_name = None


batching = _Batching()


def context_mesh() -> Mesh | None:
    """The mesh set by `set_mesh`, or None."""
    return _context.mesh


def _empty_mesh() -> Mesh:
    m = object.__new__(Mesh)
    m.devices, m.axis_names, m.axis_types, m._hash_key = np.empty((0,), object), (), (), ()
    m._abstract = None
    return m


def get_mesh() -> Mesh:
    """The mesh set by `set_mesh` (an empty mesh when none is set), as `jax.sharding.get_mesh`.

    >>> get_mesh().empty
    True
    """
    return _context.mesh if _context.mesh is not None else _empty_mesh()


def get_abstract_mesh() -> AbstractMesh:
    """The axis names and sizes of the mesh set by `set_mesh` (empty when none is set).

    >>> get_abstract_mesh().empty
    True
    """
    if _context.abstract is not None:
        return _context.abstract
    m = _context.mesh
    return AbstractMesh((), ()) if m is None else m.abstract_mesh


class use_abstract_mesh:
    """Set the abstract mesh (axis names, sizes and types, no devices) for a `with` block,
    as `jax.sharding.use_abstract_mesh`: `get_abstract_mesh` returns it, and the
    PartitionSpecs of `out_sharding=`, `reshard` and ShapeDtypeStruct name its axes
    while tracing (eval_shape, make_jaxpr, jit's trace). It cannot change the size of
    the abstract mesh already set.

    >>> import funcad, numpy as np
    >>> from funcad.sharding import AbstractMesh, AxisType, PartitionSpec as P, reshard
    >>> mesh = AbstractMesh((2,), ("x",), (AxisType.Explicit,))
    >>> with use_abstract_mesh(mesh):
    ...     funcad.eval_shape(lambda a: reshard(a, P("x")), np.ones(4)).sharding.spec
    P('x',)
    """
    __slots__ = ("mesh", "prev")

    def __init__(self, mesh: AbstractMesh):
        if not isinstance(mesh, AbstractMesh):
            raise FuncadValueError("Expected mesh of type `funcad.sharding.AbstractMesh`. Got type: "
                                   f"{type(mesh)}; a Mesh's is mesh.abstract_mesh")
        self.mesh = mesh

    def __enter__(self):
        prev = get_abstract_mesh()
        if not prev.empty and not self.mesh.empty and prev.size != self.mesh.size:
            raise FuncadValueError(f"use_abstract_mesh cannot change the size of the mesh. Got new "
                                   f"mesh: {self.mesh} with size={self.mesh.size} and prev mesh: "
                                   f"{prev} with size={prev.size}")
        self.prev, _context.abstract = _context.abstract, self.mesh
        return self.mesh

    def __exit__(self, *exc):
        _context.abstract = self.prev
        return False


class set_mesh:
    """Set the mesh that PartitionSpecs and shard_map without `mesh=` use, as `jax.set_mesh`:
    set at once, or for a `with` block (the previous mesh comes back at its end).

    >>> import funcad, numpy as np
    >>> from funcad.sharding import PartitionSpec as P
    >>> with set_mesh(funcad.make_mesh((1,), ("x",), devices=funcad.devices()[:1])):
    ...     funcad.device_put(np.ones(2), P("x")).sharding.spec
    P('x',)
    """

    def __init__(self, mesh: Mesh | None):
        if mesh is not None and not isinstance(mesh, Mesh):
            if isinstance(mesh, AbstractMesh):
                raise FuncadTypeError("set_mesh needs a concrete funcad.sharding.Mesh (with "
                                      "devices), got an AbstractMesh")
            raise FuncadTypeError(f"set_mesh expects a funcad.sharding.Mesh or None, got {mesh!r}")
        self.mesh, self.prev = mesh, _context.mesh
        _context.mesh = mesh

    def __enter__(self):
        return self.mesh

    def __exit__(self, *exc):
        _context.mesh = self.prev
        return False


def resolve_spec(s, what: str):
    """`s` with a PartitionSpec turned into a NamedSharding over the context mesh."""
    if not isinstance(s, PartitionSpec):
        return s
    if _context.abstract is not None and (_context.mesh is None or _context.abstract
                                          != _context.mesh.abstract_mesh):
        return NamedSharding(_context.abstract, s)  # use_abstract_mesh's (a type's sharding)
    if _context.mesh is None:
        raise FuncadValueError(f"{what} got the PartitionSpec {s}, but no mesh is set: enter one "
                               f"with funcad.set_mesh(mesh), or pass NamedSharding(mesh, spec)")
    return NamedSharding(_context.mesh, s)


# ------------------------------------------------------- pytrees of layouts ----

def _is_sharding_leaf(s) -> bool:
    return s is None or isinstance(s, (Sharding, PartitionSpec))


def flat_shardings(prefix, value, what: str) -> list:
    """One sharding (or None) per leaf of `value`, from a pytree prefix of it."""
    if _is_sharding_leaf(prefix):
        prefix = resolve_spec(prefix, what if what == "device_put" else f"jit: {what}")
        return [prefix] * len(tree_flatten(value)[0])
    p_leaves, p_tree = tree_flatten(prefix, is_leaf=_is_sharding_leaf)
    try:
        subtrees = p_tree.flatten_up_to(value) if hasattr(p_tree, "flatten_up_to") else None
    except Exception:
        subtrees = None
    if subtrees is None:
        subtrees = flatten_prefix(prefix, value, what)
    out = []
    for p, sub in zip(p_leaves, subtrees):
        out += flat_shardings(p, sub, what)
    return out


def flatten_prefix(prefix, value, what: str) -> list:
    """The subtrees of `value` under the leaves (shardings, specs or None) of the prefix tree `prefix`."""
    if isinstance(prefix, (tuple, list)) and isinstance(value, (tuple, list)) \
            and len(prefix) == len(value):
        return [s for p, v in zip(prefix, value) for s in
                ([v] if _is_sharding_leaf(p) else flatten_prefix(p, v, what))]
    if isinstance(prefix, dict) and isinstance(value, dict) and set(prefix) == set(value):
        return [s for k in sorted(prefix) for s in
                ([value[k]] if _is_sharding_leaf(prefix[k]) else flatten_prefix(prefix[k], value[k], what))]
    raise FuncadValueError(f"jit: {what} must be one Sharding or a tree matching the structure "
                           f"it applies to (a prefix of it), but {prefix!r} does not match")
