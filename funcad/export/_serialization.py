"""`Exported` <-> bytes in jax.export's flatbuffers format (its schema
`jax/_src/export/serialization.fbs`, serialization version 12), so bytes cross between
funcad and JAX in both directions.

The format is a table per object; each field sits in a numbered slot. Slots written
here: those JAX 0.12 reads, plus the older copies (flat avals, per-argument sharding
tables, the 16-bit device count) that older JAX releases read instead.
"""
from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np

from ..core import pytree as _pt
from ..core.avals import ShapedArray, float0
from ..core.errors import FuncadError
from ..core.sharding import AbstractMesh, AxisType, NamedSharding, PartitionSpec
from ..core.version import __version__
from . import _registry
from ._exported import DisabledSafetyCheck, Exported

try:
    import flatbuffers
    from flatbuffers import number_types as _nt
    from flatbuffers.table import Table
except ImportError as e:  # a dependency of funcad; missing only in odd installs
    raise ImportError("funcad.export needs the 'flatbuffers' package to serialize: "
                      "pip install flatbuffers") from e

__all__ = ["serialize", "deserialize"]

SERIALIZATION_VERSION = 12

# enum values of the schema
_LEAF, _NONE, _TUPLE, _LIST, _DICT, _CUSTOM = range(6)
_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64", "complex64", "complex128", "bfloat16", "int4", "uint4",
           "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
           "float0", "float8_e4m3", "float8_e3m4", "float8_e8m0fnu", "float4_e2m1fn"]
_MEMORY_DEVICE = 1
_CHECK_PLATFORM, _CHECK_CUSTOM_CALL = 0, 1

# slots of the Exported table
(_VERSION, _FUN_NAME, _IN_TREE, _IN_AVALS, _OUT_TREE, _OUT_AVALS, _NR_DEVICES_SHORT, _IN_SHARDINGS,
 _OUT_SHARDINGS, _PLATFORMS, _ORDERED, _UNORDERED, _DISABLED, _MODULE, _CC_VERSION, _KEPT,
 _GLOBAL_CONSTANTS, _VJP, _NR_DEVICES, _UNIQUE_AVALS, _UNIQUE_MESHES, _UNIQUE_SHARDINGS,
 _IN_AVAL_IDXS, _OUT_AVAL_IDXS, _IN_SHARDING_IDXS, _OUT_SHARDING_IDXS, _JAX_VERSION) = range(27)


def _dtype_code(dtype) -> int:
    name = "float0" if dtype == float0 else np.dtype(dtype).name
    if name not in _DTYPES:
        raise ValueError(f"cannot serialize arrays of dtype {name}")
    return _DTYPES.index(name)


def _dtype_of(code: int):
    if not 0 <= code < len(_DTYPES):
        raise ValueError(f"cannot deserialize an array of unknown dtype code {code} (PRNG key "
                         "arrays are JAX-only)")
    name = _DTYPES[code]
    if name == "float0":
        return float0
    return np.dtype(getattr(ml_dtypes, name, name))


# ------------------------------------------------------------------ writing ----

def _vector(b, offsets) -> int:
    b.StartVector(4, len(offsets), 4)
    for off in reversed(offsets):
        b.PrependUOffsetTRelative(off)
    return b.EndVector()


def _strings(b, items) -> int:
    return _vector(b, [b.CreateString(s) for s in items])


def _table(b, nslots: int, fields) -> int:
    """fields: (slot, kind, value) with kind an `add` method name of the builder."""
    b.StartObject(nslots)
    for slot, kind, value in fields:
        getattr(b, kind)(slot, value, None if kind != "PrependUOffsetTRelativeSlot" else 0)
    return b.EndObject()


def _write_tree(b, td) -> int:
    children = [_write_tree(b, c) for c in td.children()]
    kids = _vector(b, children) if children else None
    names = name = aux = None
    if td.kind is None:
        kind = _LEAF
    elif td.kind is type(None):
        kind = _NONE
    elif td.kind is tuple:
        kind = _TUPLE
    elif td.kind is list:
        kind = _LIST
    elif td.kind is dict:
        kind = _DICT
        for k in td.aux:
            if not isinstance(k, str):
                raise TypeError("Serialization is supported only for dictionaries with string keys."
                                f" Found key {k} of type {type(k)}.")
        names = _strings(b, td.aux)
    elif td.kind in _registry.serialization_registry:
        kind = _CUSTOM
        ser_name, ser_aux = _registry.serialization_registry[td.kind]
        data = ser_aux(td.aux)
        if not isinstance(data, (bytes, bytearray)):
            raise ValueError("The custom serialization function for `node_type` must return a "
                             f"`bytes` object. It returned a {type(data)}.")
        name, aux = b.CreateString(ser_name), b.CreateByteVector(bytes(data))
    else:
        raise ValueError(f"Cannot serialize PyTreeDef containing an unregistered type `{td.kind}`. "
                         "Use `export.register_pytree_node_serialization` or "
                         "`export.register_namedtuple_serialization`.")
    b.StartObject(5)
    b.PrependInt8Slot(0, kind, 0)
    for slot, off in ((1, kids), (2, names), (3, name), (4, aux)):
        if off is not None:
            b.PrependUOffsetTRelativeSlot(slot, off, 0)
    return b.EndObject()


def _write_aval(b, aval) -> int:
    shape = _strings(b, [str(d) for d in aval.shape])
    b.StartObject(4)
    b.PrependInt8Slot(0, 0, 0)  # shapedArray
    b.PrependUOffsetTRelativeSlot(1, shape, 0)
    b.PrependInt8Slot(2, _dtype_code(aval.dtype), 0)
    b.PrependInt8Slot(3, _MEMORY_DEVICE, 0)
    return b.EndObject()


_AXIS_TYPES = {AxisType.Auto: 1, AxisType.Explicit: 2, AxisType.Manual: 3}


def _write_mesh(b, mesh: AbstractMesh) -> int:
    sizes = _uints(b, mesh.axis_sizes, np.uint32)
    names = _strings(b, mesh.axis_names)
    types = _uints(b, [_AXIS_TYPES[t] for t in mesh.axis_types], np.uint8)
    device = None
    if mesh.platform is not None:  # the abstract device: its kind, cores and platform
        kind, platform = b.CreateString(mesh.device_kind or mesh.platform), b.CreateString(mesh.platform)
        b.StartObject(3)
        b.PrependUOffsetTRelativeSlot(0, kind, 0)
        if mesh.num_cores is not None:
            b.PrependUint32Slot(1, mesh.num_cores, 0)
        b.PrependUOffsetTRelativeSlot(2, platform, 0)
        device = b.EndObject()
    b.StartObject(4)
    for slot, off in ((0, sizes), (1, names), (2, types), (3, device)):
        if off is not None:
            b.PrependUOffsetTRelativeSlot(slot, off, 0)
    return b.EndObject()


def _write_spec(b, spec) -> int:
    parts = []
    for p in spec:
        axes = _strings(b, () if p is None else (p,) if isinstance(p, str) else tuple(p))
        b.StartObject(1)
        b.PrependUOffsetTRelativeSlot(0, axes, 0)
        parts.append(b.EndObject())
    partitions = _vector(b, parts)
    reduced = _strings(b, sorted(getattr(spec, "reduced", ())))
    unreduced = _strings(b, sorted(getattr(spec, "unreduced", ())))
    b.StartObject(3)
    for slot, off in ((0, partitions), (1, reduced), (2, unreduced)):
        b.PrependUOffsetTRelativeSlot(slot, off, 0)
    return b.EndObject()


def _write_named_sharding(b, s: NamedSharding, mesh_index: int) -> int:
    # the mesh in full too, which JAX releases before April 2026 read
    mesh, spec = _write_mesh(b, s.mesh), _write_spec(b, s.spec)
    memory = b.CreateString(s.memory_kind)
    b.StartObject(4)
    b.PrependUOffsetTRelativeSlot(0, mesh, 0)
    b.PrependUOffsetTRelativeSlot(1, spec, 0)
    b.PrependUOffsetTRelativeSlot(2, memory, 0)
    b.PrependUint32Slot(3, mesh_index, 0)
    return b.EndObject()


def _write_sharding(b, named: int | None) -> int:
    """The per-argument table older JAX releases read: a NamedSharding or unspecified."""
    b.StartObject(3)
    if named is not None:
        b.PrependUOffsetTRelativeSlot(2, named, 0)
    return b.EndObject()


def _write_check(b, check) -> int:
    target = check.is_custom_call()
    name = b.CreateString(target) if target is not None else None
    b.StartObject(2)
    b.PrependInt8Slot(0, _CHECK_PLATFORM if name is None else _CHECK_CUSTOM_CALL, 0)
    if name is not None:
        b.PrependUOffsetTRelativeSlot(1, name, 0)
    return b.EndObject()


def _uints(b, values, dtype) -> int:
    return b.CreateNumpyVector(np.asarray(values, dtype))


def _write_exported(b, exp, vjp_order: int) -> int:
    avals = list(exp.in_avals) + list(exp.out_avals)
    unique = list(dict.fromkeys(avals))
    index = {a: i for i, a in enumerate(unique)}
    fun_name = b.CreateString(exp.fun_name)
    in_tree, out_tree = _write_tree(b, exp.in_tree), _write_tree(b, exp.out_tree)
    in_avals = _vector(b, [_write_aval(b, a) for a in exp.in_avals])
    out_avals = _vector(b, [_write_aval(b, a) for a in exp.out_avals])
    shardings = list(dict.fromkeys(s for s in exp._in_named_shardings + exp._out_named_shardings
                                   if s is not None))
    meshes = list(dict.fromkeys(s.mesh for s in shardings))
    sh_index = {s: i + 1 for i, s in enumerate(shardings)}  # 0: unspecified
    in_sh = _vector(b, [_write_sharding(b, None if s is None else _write_named_sharding(
        b, s, meshes.index(s.mesh))) for s in exp._in_named_shardings])
    out_sh = _vector(b, [_write_sharding(b, None if s is None else _write_named_sharding(
        b, s, meshes.index(s.mesh))) for s in exp._out_named_shardings])
    platforms = _strings(b, exp.platforms)
    no_effects = _vector(b, [])
    checks = _vector(b, [_write_check(b, c) for c in exp.disabled_safety_checks])
    module = b.CreateByteVector(bytes(exp.mlir_module_serialized))
    kept = _uints(b, exp.module_kept_var_idx, np.uint16)
    vjp = None
    if vjp_order > 0:
        if not exp.has_vjp():
            raise ValueError("serialization of an Exported that does not have vjps of high-enough order")
        vjp = _write_exported(b, exp.vjp(), vjp_order - 1)
    unique_avals = _vector(b, [_write_aval(b, a) for a in unique])
    unique_meshes = _vector(b, [_write_mesh(b, m) for m in meshes])
    unique_shardings = _vector(b, [_write_named_sharding(b, s, meshes.index(s.mesh)) for s in shardings])
    in_idx = _uints(b, [index[a] for a in exp.in_avals], np.uint32)
    out_idx = _uints(b, [index[a] for a in exp.out_avals], np.uint32)
    in_sh_idx = _uints(b, [sh_index.get(s, 0) for s in exp._in_named_shardings], np.uint32)
    out_sh_idx = _uints(b, [sh_index.get(s, 0) for s in exp._out_named_shardings], np.uint32)
    version = b.CreateString(f"funcad {__version__}")
    b.StartObject(27)
    b.PrependUint16Slot(_VERSION, SERIALIZATION_VERSION, 0)
    b.PrependInt16Slot(_NR_DEVICES_SHORT, exp.nr_devices, 0)
    b.PrependUint32Slot(_NR_DEVICES, exp.nr_devices, 0)
    b.PrependUint16Slot(_CC_VERSION, exp.calling_convention_version, 0)
    b.PrependBoolSlot(_GLOBAL_CONSTANTS, exp.uses_global_constants, False)
    for slot, off in ((_FUN_NAME, fun_name), (_IN_TREE, in_tree), (_IN_AVALS, in_avals),
                      (_OUT_TREE, out_tree), (_OUT_AVALS, out_avals), (_IN_SHARDINGS, in_sh),
                      (_OUT_SHARDINGS, out_sh), (_PLATFORMS, platforms), (_ORDERED, no_effects),
                      (_UNORDERED, no_effects), (_DISABLED, checks), (_MODULE, module), (_KEPT, kept),
                      (_VJP, vjp), (_UNIQUE_AVALS, unique_avals), (_UNIQUE_MESHES, unique_meshes),
                      (_UNIQUE_SHARDINGS, unique_shardings), (_IN_AVAL_IDXS, in_idx),
                      (_OUT_AVAL_IDXS, out_idx), (_IN_SHARDING_IDXS, in_sh_idx),
                      (_OUT_SHARDING_IDXS, out_sh_idx), (_JAX_VERSION, version)):
        if off is not None:
            b.PrependUOffsetTRelativeSlot(slot, off, 0)
    return b.EndObject()


def serialize(exp, vjp_order: int = 0) -> bytearray:
    """`exp` as jax.export's bytes, with `vjp_order` orders of its VJP."""
    b = flatbuffers.Builder(65536)
    b.Finish(_write_exported(b, exp, vjp_order))
    return b.Output()


# ------------------------------------------------------------------ reading ----

class _T:
    """A flatbuffers table, read by slot."""

    def __init__(self, buf, pos):
        self.t = Table(buf, pos)

    def _off(self, slot):
        return self.t.Offset(4 + 2 * slot)

    def scalar(self, slot, flags, default=0):
        o = self._off(slot)
        return self.t.Get(flags, o + self.t.Pos) if o else default

    def string(self, slot):
        o = self._off(slot)
        return self.t.String(o + self.t.Pos).decode("utf-8") if o else None

    def table(self, slot):
        o = self._off(slot)
        return _T(self.t.Bytes, self.t.Indirect(o + self.t.Pos)) if o else None

    def length(self, slot):
        o = self._off(slot)
        return self.t.VectorLen(o) if o else 0

    def tables(self, slot):
        o = self._off(slot)
        if not o:
            return []
        start = self.t.Vector(o)
        return [_T(self.t.Bytes, self.t.Indirect(start + 4 * j)) for j in range(self.t.VectorLen(o))]

    def strings(self, slot):
        o = self._off(slot)
        if not o:
            return []
        start = self.t.Vector(o)
        return [self.t.String(start + 4 * j).decode("utf-8") for j in range(self.t.VectorLen(o))]

    def numbers(self, slot, flags):
        o = self._off(slot)
        return self.t.GetVectorAsNumpy(flags, o) if o else np.zeros(0, np.int64)


def _read_aval(t: _T) -> ShapedArray:
    if t.scalar(0, _nt.Int8Flags) != 0:
        raise ValueError("cannot deserialize an abstract token value")
    shape = []
    for d in t.strings(1):
        try:
            shape.append(int(d))
        except ValueError:
            raise FuncadError(f"the exported function has the symbolic dimension {d!r}: shape "
                              "polymorphism is not supported by funcad.export; export it with "
                              "concrete shapes") from None
    return ShapedArray(tuple(shape), _dtype_of(t.scalar(2, _nt.Int8Flags)))


def _read_tree(t: _T):
    """A pytree of this structure with 0.0 leaves (made into a treedef by the caller)."""
    kind = t.scalar(0, _nt.Int8Flags)
    children = [_read_tree(c) for c in t.tables(1)]
    if kind == _LEAF:
        return 0.0
    if kind == _NONE:
        return None
    if kind == _TUPLE:
        return tuple(children)
    if kind == _LIST:
        return list(children)
    if kind == _DICT:
        return dict(zip(t.strings(2), children))
    if kind == _CUSTOM:
        name = t.string(3)
        if name not in _registry.deserialization_registry:
            raise ValueError(f"Cannot deserialize a PyTreeDef containing an unregistered type `{name}`. "
                             "Use `export.register_pytree_node_serialization` or "
                             "`export.register_namedtuple_serialization`.")
        _, de_aux, from_children = _registry.deserialization_registry[name]
        return from_children(de_aux(t.numbers(4, _nt.Uint8Flags).tobytes()), children)
    raise ValueError(f"Cannot deserialize PyTreeDef with unknown kind: {kind}")


def _structure(tree):
    return _pt.tree_structure(tree, is_leaf=lambda x: isinstance(x, float) and x == 0.0)


def _read_check(t: _T):
    kind = t.scalar(0, _nt.Int8Flags)
    if kind == _CHECK_CUSTOM_CALL:
        return DisabledSafetyCheck.custom_call(t.string(1))
    if kind == _CHECK_PLATFORM:
        return DisabledSafetyCheck.platform()
    raise ValueError(f"Cannot deserialize DisabledSafetyCheck with unknown kind: {kind}")


_AXIS_TYPE_OF = {v: k for k, v in _AXIS_TYPES.items()}


def _read_mesh(t: _T) -> AbstractMesh:
    types = tuple(_AXIS_TYPE_OF[int(c)] for c in t.numbers(2, _nt.Uint8Flags))
    device = t.table(3)
    kind = dict(device_kind=device.string(0), num_cores=device.scalar(1, _nt.Uint32Flags, None),
                platform=device.string(2)) if device is not None else {}
    return AbstractMesh(tuple(int(n) for n in t.numbers(0, _nt.Uint32Flags)), tuple(t.strings(1)),
                        types, **kind)


def _read_spec(t: _T) -> PartitionSpec:
    parts = []
    for p in t.tables(0):
        axes = tuple(p.strings(0))
        parts.append(None if not axes else axes[0] if len(axes) == 1 else axes)
    return PartitionSpec(*parts, reduced=frozenset(t.strings(1)), unreduced=frozenset(t.strings(2)))


def _read_named_sharding(t: _T, meshes: list) -> NamedSharding:
    mesh = meshes[t.scalar(3, _nt.Uint32Flags)] if meshes else _read_mesh(t.table(0))
    memory = t.string(2)
    if memory not in (None, "device"):
        raise FuncadError(f"the exported function places a value in memory {memory!r}; funcad "
                          "calls functions whose values live in device memory")
    return NamedSharding(mesh, _read_spec(t.table(1)))


def _read_shardings(t: _T, n_in: int, n_out: int) -> tuple[tuple, tuple]:
    """The inputs' and outputs' NamedShardings (None: unspecified)."""
    meshes = [_read_mesh(m) for m in t.tables(_UNIQUE_MESHES)]
    unique = [_read_named_sharding(s, meshes) for s in t.tables(_UNIQUE_SHARDINGS)]
    if t.length(_IN_SHARDING_IDXS) or t.length(_OUT_SHARDING_IDXS) or unique:
        return tuple(tuple(None if i == 0 else unique[i - 1] for i in t.numbers(slot, _nt.Uint32Flags))
                     for slot in (_IN_SHARDING_IDXS, _OUT_SHARDING_IDXS))
    per_arg = []
    for slot, n in ((_IN_SHARDINGS, n_in), (_OUT_SHARDINGS, n_out)):
        tables = t.tables(slot)
        if tables and any(s.table(2) is None and s._off(1) for s in tables):
            raise FuncadError("the exported function records its shardings as HloSharding protos, "
                              "which JAX wrote before 2026; funcad reads NamedShardings: export it "
                              "again with a newer JAX")
        per_arg.append(tuple(None if s.table(2) is None else _read_named_sharding(s.table(2), [])
                             for s in tables) or (None,) * n)
    return per_arg[0], per_arg[1]


def _read_exported(t: _T):
    unique = [_read_aval(a) for a in t.tables(_UNIQUE_AVALS)]
    if t.length(_IN_AVAL_IDXS) or t.length(_OUT_AVAL_IDXS) or unique:
        in_avals = tuple(unique[i] for i in t.numbers(_IN_AVAL_IDXS, _nt.Uint32Flags))
        out_avals = tuple(unique[i] for i in t.numbers(_OUT_AVAL_IDXS, _nt.Uint32Flags))
    else:  # written by JAX before April 2026
        in_avals = tuple(_read_aval(a) for a in t.tables(_IN_AVALS))
        out_avals = tuple(_read_aval(a) for a in t.tables(_OUT_AVALS))
    nr_devices = t.scalar(_NR_DEVICES, _nt.Uint32Flags) or t.scalar(_NR_DEVICES_SHORT, _nt.Int16Flags)
    effects = tuple(e.string(0) for e in itertools.chain(t.tables(_ORDERED), t.tables(_UNORDERED)))
    if effects:
        raise FuncadError(f"the exported function has effects {effects}; funcad calls only "
                          "functions without effects")
    vjp = t.table(_VJP)
    in_shardings, out_shardings = _read_shardings(t, len(in_avals), len(out_avals))
    return Exported(
        fun_name=t.string(_FUN_NAME),
        in_tree=_structure(_read_tree(t.table(_IN_TREE))),
        in_avals=in_avals,
        out_tree=_structure(_read_tree(t.table(_OUT_TREE))),
        out_avals=out_avals,
        _in_named_shardings=in_shardings, _out_named_shardings=out_shardings,
        in_shardings_hlo=(None,) * len(in_avals),
        out_shardings_hlo=(None,) * len(out_avals),
        nr_devices=nr_devices,
        platforms=tuple(t.strings(_PLATFORMS)),
        ordered_effects=(), unordered_effects=(),
        disabled_safety_checks=tuple(_read_check(c) for c in t.tables(_DISABLED)),
        mlir_module_serialized=t.numbers(_MODULE, _nt.Uint8Flags).tobytes(),
        calling_convention_version=t.scalar(_CC_VERSION, _nt.Uint16Flags),
        module_kept_var_idx=tuple(int(i) for i in t.numbers(_KEPT, _nt.Uint16Flags)),
        uses_global_constants=bool(t.scalar(_GLOBAL_CONSTANTS, _nt.BoolFlags, False)),
        _get_vjp=None if vjp is None else (lambda _: _read_exported(vjp)))


def deserialize(blob: bytes | bytearray) -> Exported:
    """The `Exported` in bytes written by `Exported.serialize` (funcad's or JAX's).

    The bytes must be trusted: running the function runs whatever custom calls it names.
    """
    buf = bytearray(blob)
    root = flatbuffers.encode.Get(flatbuffers.packer.uoffset, buf, 0)
    return _read_exported(_T(buf, root))


def _serialize_method(self, vjp_order: int = 0) -> bytearray:
    """jax.export's bytes for this function and `vjp_order` orders of its VJP."""
    return serialize(self, vjp_order=vjp_order)


Exported.serialize = _serialize_method
