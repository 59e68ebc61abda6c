"""Abstract values: the shape, dtype and weak-type of an array, and NEP 50 promotion."""
from __future__ import annotations

import numpy as np

from . import narrow as _narrow, options as _options
from .eager import EagerArray, WeakEagerArray
from .errors import FuncadTypeError, TypePromotionError
from .sharding import AbstractMesh, NamedSharding, PartitionSpec

# JAX's tangent type for integer and boolean primals: a dtype with no data.
float0 = np.dtype([("float0", np.void, 0)])

_SHORT = {
    "float16": "f16", "float32": "f32", "float64": "f64", "bfloat16": "bf16",
    "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "bool": "bool", "complex64": "c64", "complex128": "c128",
}


def short_dtype(dtype) -> str:
    dtype = np.dtype(dtype)
    if dtype == float0:
        return "float0"
    s = _SHORT.get(dtype.name)
    if s is None:  # JAX's abbreviation: f8_e4m3fn, i4, u2
        s = dtype.name.replace("float", "f").replace("uint", "u").replace("int", "i")
    return s


class AbstractValue:
    """The base of abstract values (the types tracers carry)."""

    __slots__ = ()
    _sharding = None  # a ShapedArray's sharding in its type (see ShapedArray.sharding)


class ShapedArray(AbstractValue):
    """The type of an array value: shape, dtype, whether the dtype is weak (NEP 50),
    and its sharding over Explicit mesh axes (JAX's sharding in types): a
    `NamedSharding` on an `AbstractMesh` whose spec has one entry per dimension,
    or None (no Explicit axis splits or replicates it).

    >>> ShapedArray((3, 4), np.float32).str_short()
    'f32[3,4]'
    """

    __slots__ = ("shape", "dtype", "weak_type", "_sharding")

    def __init__(self, shape, dtype, weak_type: bool = False, sharding=None):
        self.shape = shape if type(shape) is tuple else tuple(shape)
        self.dtype = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)  # np.dtype(d) costs 0.2 µs
        self.weak_type = weak_type
        self._sharding = sharding

    @property
    def sharding(self):
        """The sharding in this type, as `jax.typeof(x).sharding`: a NamedSharding over
        the abstract mesh (the empty mesh and an all-None spec when there is none)."""
        if self._sharding is not None:
            return self._sharding
        return NamedSharding(AbstractMesh((), ()), PartitionSpec(*[None] * len(self.shape)))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def update(self, shape=None, dtype=None, weak_type=None, sharding=False) -> "ShapedArray":
        """A copy with the given fields replaced; a new shape drops the sharding (its
        spec is per dimension) unless `sharding` gives one (None: none)."""
        if sharding is False:
            sharding = self._sharding if shape is None else None
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type, sharding)

    def to_tangent_aval(self) -> "ShapedArray":
        """The type of this type's tangents: float0 for integer and boolean arrays (JAX's)."""
        return ShapedArray(self.shape, tangent_dtype(self.dtype), self.weak_type)

    def str_short(self) -> str:
        dims, extra = map(str, self.shape), ""
        if self._sharding is not None:  # JAX's f32[8@X,4@(Y,Z)], with {U:Y} for unreduced axes
            dims = [d + _at(p) for d, p in zip(dims, self._sharding.spec)]
            extra = _unreduced_str(self._sharding)
        return f"{short_dtype(self.dtype)}[{','.join(dims)}]{extra}"

    def __str__(self):  # JAX's: float32[8@X,4]
        return self.str_short().replace(short_dtype(self.dtype), self.dtype.name, 1)

    def __eq__(self, other):
        return (isinstance(other, ShapedArray) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type
                and self._sharding == other._sharding)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type, self._sharding))

    def __repr__(self):
        return f"ShapedArray({self}{', weak_type=True' if self.weak_type else ''})"  # JAX's


def _eager_aval(self) -> ShapedArray:
    """The array's type, a ShapedArray (as `jax.Array.aval`)."""
    return ShapedArray(self.shape, self.dtype, self.weak_type)


EagerArray.aval = property(_eager_aval)


def _unreduced_str(sharding) -> str:
    spec = sharding.spec
    unreduced = getattr(spec, "unreduced", ())
    if not unreduced:
        return ""
    axes = [a for a in sharding.mesh.axis_names if a in unreduced]
    kind = spec.unreduced_kind
    prefix = "U" if kind is None or kind.name == "sum" else f"U_{kind.name}"
    return f"{{{prefix}:{axes[0] if len(axes) == 1 else '(' + ','.join(axes) + ')'}}}"


def _at(part) -> str:
    if part is None:
        return ""
    if isinstance(part, tuple):
        return "@" + (part[0] if len(part) == 1 else f"({','.join(part)})")
    return f"@{part}"


_PY_SCALARS = {bool: np.dtype(bool), int: np.dtype(np.int64),
               float: np.dtype(np.float64), complex: np.dtype(np.complex128)}


def is_python_scalar(x) -> bool:
    return type(x) in _PY_SCALARS


class AbstractRef(AbstractValue):
    """The type of a Ref: its value's ShapedArray (printed `Ref{f32[3]}`, as JAX)."""

    __slots__ = ("inner_aval", "memory_space")

    def __init__(self, inner_aval: ShapedArray, memory_space=None):
        self.inner_aval, self.memory_space = inner_aval, memory_space

    shape = property(lambda self: self.inner_aval.shape)
    dtype = property(lambda self: self.inner_aval.dtype)
    ndim = property(lambda self: self.inner_aval.ndim)
    size = property(lambda self: self.inner_aval.size)

    def str_short(self) -> str:
        return repr(self)

    def __repr__(self):
        return f"Ref{{{self.dtype.name}{list(self.shape)}}}".replace(" ", "")

    def __eq__(self, other):
        return isinstance(other, AbstractRef) and (self.shape, self.dtype) == (other.shape, other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))


def aval_of(x) -> ShapedArray:
    """The abstract value of a concrete value or tracer."""
    t = type(x)
    if (t is np.ndarray or t is EagerArray) and x.dtype.kind not in "OSUV":  # the eager fast path
        return ShapedArray(x.shape, x.dtype)
    if t is WeakEagerArray:  # as hot under derivatives of Python scalars: always weak
        return ShapedArray(x.shape, x.dtype, True)
    if t in _PY_SCALARS:
        # Python bools are not weak in NumPy 2 or JAX; other scalars are.
        return ShapedArray((), _PY_SCALARS[t], t is not bool)
    aval = getattr(x, "aval", None)
    if aval is not None:
        if type(aval) is AbstractRef:
            raise FuncadTypeError(
                f"a Ref of type {aval.str_short()} can't be passed where an array is expected. Did you "
                "forget to read its value with `ref[...]`? (Refs may be passed to jit, vmap and "
                "grad's non-differentiated arguments; read them before other transformations.)")
        return aval
    if isinstance(x, (np.ndarray, np.generic)):
        if x.dtype.kind in "OSUV" and x.dtype != float0 and x.dtype not in _narrow.KINDS:
            raise FuncadTypeError(f"arrays of dtype {x.dtype} are not supported; "
                                  "funcad works with numeric and boolean arrays")
        return ShapedArray(x.shape, x.dtype)
    for base, dt in _PY_SCALARS.items():  # subclasses such as IntEnum
        if isinstance(x, base):
            return ShapedArray((), dt, base is not bool)
    raise FuncadTypeError(
        f"funcad got an argument of type {type(x).__name__}, which is not an array: {x!r:.60}. "
        "Pass NumPy arrays or Python scalars, or mark the argument static "
        "(static_argnums) if it is not data.")


def _promotion_stand_in(aval: ShapedArray):
    # NumPy 2 treats Python scalars as weak, exactly NEP 50: let it decide.
    if aval.weak_type:
        return {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}[_narrow.kind(aval.dtype)]
    return aval.dtype


# 64-bit dtype -> its 32-bit stand-in while x64 is off (funcad/core/x64.py fills it).
_PROMOTED: dict = {}


def result_type(*avals: ShapedArray):
    """NEP 50 result dtype of avals and whether it is weak: (dtype, weak)."""
    if _options.numpy_dtype_promotion == "strict":
        check_strict(avals)
    weak = all(a.weak_type for a in avals)
    if any(a.dtype in _narrow.KINDS for a in avals):  # JAX's lattice; NumPy has no rule
        d, weak = _narrow.promote_narrow([(a.dtype, a.weak_type) for a in avals])
    elif weak:
        # All weak: the widest kind wins at the default precision.
        d = np.result_type(*[a.dtype for a in avals])
    else:
        d = np.result_type(*[_promotion_stand_in(a) for a in avals])
        weak = _weak_join(avals)
    return _PROMOTED.get(d, d), weak


_KIND_RANK = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}


def _weak_join(avals) -> bool:
    """JAX's lattice: strong and weak operands give a weak result where a weak operand
    lifts strong integers or bools to its kind (`int32 + 1.5` is a weak float); a float
    lifted to complex is strong (`float32 + 1j` is complex64)."""
    strong = max(_KIND_RANK[a.dtype.kind] for a in avals if not a.weak_type)
    return strong <= 1 and any(_KIND_RANK[a.dtype.kind] > strong for a in avals if a.weak_type)


# Under numpy_dtype_promotion='strict' a weakly typed value (a Python scalar) of kind
# key joins strong values of these kinds only; strong values join only their own dtype
# (JAX's strict lattice).
_STRICT_WEAK_JOINS = {"i": "iufc", "u": "iufc", "f": "fc", "c": "c", "b": "b"}
_WEAK_NAMES = {"b": "<class 'bool'>", "i": "<class 'int'>", "u": "<class 'int'>",
               "f": "<class 'float'>", "c": "<class 'complex'>"}


def check_strict(avals) -> None:
    """Raise JAX's TypePromotionError unless `avals` promote under the strict rules:
    one strong dtype at most, and weak values only of kinds that join it."""
    check_strict_dtypes([(a.dtype, a.weak_type) for a in avals])


def check_strict_dtypes(dtypes_and_weak) -> None:
    """check_strict on (dtype, weak) pairs (dtypes as given, not canonicalised)."""
    strong = []
    for d, weak in dtypes_and_weak:
        if not weak and d not in strong:
            strong.append(d)
    if len(strong) == 1:
        kind = _narrow.kind(strong[0])
        if all(kind in _STRICT_WEAK_JOINS[_narrow.kind(d)] for d, weak in dtypes_and_weak if weak):
            return
    elif not strong:
        return  # weak values only: int < float < complex, as in the standard rules
    names = []
    for d, weak in dtypes_and_weak:
        name = _WEAK_NAMES[_narrow.kind(d)] if weak else str(np.dtype(d))
        if name not in names:
            names.append(name)
    raise TypePromotionError(
        f"Input dtypes {tuple(names)} have no available implicit dtype promotion path when "
        "jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the desired output "
        "type, or set jax_numpy_dtype_promotion=standard.")


def tangent_dtype(dtype) -> np.dtype:
    if not isinstance(dtype, np.dtype):
        dtype = np.dtype(dtype)
    return dtype if _narrow.kind(dtype) in "fc" else float0


def tangent_aval(a: ShapedArray) -> ShapedArray:
    """The type of a tangent (or cotangent) of a value of type `a`: its tangent dtype, and
    its sharding (a cotangent is split as its primal is, as in JAX)."""
    return ShapedArray(a.shape, tangent_dtype(a.dtype), False, a._sharding)


def is_float(dtype) -> bool:
    return _narrow.kind(dtype) in "fc"


def max_dim(d1: int, d2: int) -> int:
    """The larger of two dimension sizes (funcad's dimensions are all concrete)."""
    return max(int(d1), int(d2))


def min_dim(d1: int, d2: int) -> int:
    """The smaller of two dimension sizes."""
    return min(int(d1), int(d2))
