"""`EagerArray`: what funcad computes eagerly, an immutable NumPy array with JAX's methods.

With no transformation active, every primitive's NumPy result (and every array that
`funcad.numpy` creates) is wrapped as a read-only `EagerArray` view. It is an
`np.ndarray` subclass, so NumPy, SciPy and `np.asarray` take it as it is (zero-copy),
while its operators and methods are funcad.numpy's (installed by funcad/numpy/_methods.py),
so `x.at[i].set(v)`, `x[traced_i]` and `x + tracer` work as on a `jax.Array`.

Impl rules never see an `EagerArray`: `Primitive.bind` hands them plain views, so NumPy's
subclass machinery stays out of funcad's eager path. NumPy's own functions called on an
`EagerArray` likewise run on plain views and return plain NumPy values, as they do for a
`jax.Array`; NumPy's ufuncs (`np.sin(x)`) return EagerArrays, and a NumPy scalar's
operator (`np.float32(2) * x`, which calls a ufunc) is x's reflected operator, as in JAX.

>>> import funcad.numpy as fnp
>>> x = fnp.zeros(3).at[1].set(2.0)
>>> x
Array([0., 2., 0.], dtype=float64)
>>> y = x
>>> y += 1.0          # rebinds y, as in JAX; x is unchanged
>>> x.tolist(), y.tolist()
([0.0, 2.0, 0.0], [1.0, 3.0, 1.0])
"""
from __future__ import annotations

import numpy as np

from .errors import FuncadTypeError

__all__ = ["EagerArray", "WeakEagerArray", "eager_result", "plain", "plain_args", "plain_tree",
           "to_eager", "wrap", "wrap_many", "wrap_tree", "wrap_weak"]

_view = np.ndarray.view
_setflags = np.ndarray.setflags


class EagerArray(np.ndarray):
    """An immutable NumPy array produced by eager funcad code (JAX's `Array` methods)."""

    __slots__ = ()

    # -- immutability ------------------------------------------------------
    def __setitem__(self, idx, value):
        raise FuncadTypeError(
            "funcad arrays are immutable, as JAX's are, and do not support item assignment. "
            f"Instead of `x[{_short(idx)}] = y`, write `x = x.at[{_short(idx)}].set(y)` "
            "(also .add, .multiply, .divide, .power, .min, .max, .apply).")

    def _refuse_mutation(self, *args, **kwargs):
        raise FuncadTypeError(
            "funcad arrays are immutable, as JAX's are: in-place methods (fill, put, resize, "
            "partition, setfield) are not available. Build a "
            "new array instead, e.g. with `x.at[idx].set(y)` or funcad.numpy.full_like.")

    fill = put = resize = partition = setfield = _refuse_mutation

    def setflags(self, write=None, align=None, uic=None):
        if write:
            raise FuncadTypeError("funcad arrays are immutable and cannot be made writeable; "
                                  "take a copy with np.array(x)")
        _setflags(self, write, align, uic)

    # -- JAX's Array API -----------------------------------------------------
    def block_until_ready(self) -> "EagerArray":
        """Eager results are computed already; returns self (as JAX's does when ready)."""
        return self

    def is_ready(self) -> bool:
        return True

    @property
    def device(self):
        """The device holding the array: the host CPU (eager funcad computes with NumPy)."""
        return _cpu_device()

    def devices(self) -> set:
        return {_cpu_device()}

    # No `.sharding`: JAX reads that attribute from any argument and would take funcad's
    # sharding for its own, so funcad's eager arrays could not be passed to JAX code.

    @property
    def is_fully_replicated(self) -> bool:
        return True

    @property
    def weak_type(self) -> bool:
        return False

    # aval (the array's type, as `jax.Array.aval`) is installed by core/avals.py, which
    # builds on this module.

    def copy(self, order="C") -> "EagerArray":
        out = np.array(_view(self, np.ndarray), order=order)
        return wrap_weak(out) if self.weak_type else wrap(out)

    def __copy__(self) -> "EagerArray":
        return self.copy()

    def __deepcopy__(self, memo) -> "EagerArray":
        return self.copy()

    def __reduce__(self):
        return (_unpickle, (np.array(_view(self, np.ndarray)), self.weak_type))

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (wrap(row) for row in _view(self, np.ndarray))

    def __repr__(self):
        body = np.array2string(_view(self, np.ndarray), separator=", ", prefix="Array(")
        return f"Array({body}, dtype={self.dtype.name}{', weak_type=True' if self.weak_type else ''})"

    def __str__(self):
        return str(_view(self, np.ndarray))

    # -- NumPy's own functions run on plain arrays ------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if not _only_numpy(inputs):
            return NotImplemented  # a tracer or device array among them answers instead
        if len(inputs) == 2 and inputs[1] is self and isinstance(inputs[0], np.generic) \
                and method == "__call__" and not kwargs:
            reflected = _REFLECTED.get(ufunc)
            if reflected is not None:  # `np.float32(2) * x`: the operator's types are funcad's
                return getattr(self, reflected)(inputs[0])
        out = kwargs.get("out")
        if out is not None:
            if any(isinstance(o, EagerArray) for o in (out if isinstance(out, tuple) else (out,))):
                raise FuncadTypeError(f"numpy.{ufunc.__name__}(..., out=x): funcad arrays are immutable; "
                                      "use the returned value instead of out=")
        # Results are funcad arrays again, so `np.float64(2) * x` (NumPy's scalar calls the
        # ufunc) gives what `x * 2` gives.
        return wrap_tree(getattr(ufunc, method)(*[plain_tree(x) for x in inputs], **kwargs))

    def __array_function__(self, func, types, args, kwargs):
        for t in types:
            if not issubclass(t, np.ndarray):
                return NotImplemented
        return func._implementation(*plain_tree(args), **plain_tree(kwargs))


# A NumPy scalar left of an operator (`np.float32(2) * x`, `np.float64(1) < x`) calls the
# ufunc rather than x's reflected method. JAX's arrays make NumPy's scalars defer
# (`__array_priority__`), so the operator follows JAX's promotion (a weak x gives way,
# x64-off canonicalises the scalar); an ndarray subclass cannot defer, so its ufunc
# hook sends these calls to the reflected operator.
_REFLECTED = {
    np.add: "__radd__", np.subtract: "__rsub__", np.multiply: "__rmul__", np.true_divide: "__rtruediv__",
    np.floor_divide: "__rfloordiv__", np.remainder: "__rmod__", np.divmod: "__rdivmod__",
    np.power: "__rpow__", np.matmul: "__rmatmul__", np.bitwise_and: "__rand__", np.bitwise_or: "__ror__",
    np.bitwise_xor: "__rxor__", np.left_shift: "__rlshift__", np.right_shift: "__rrshift__",
    np.equal: "__eq__", np.not_equal: "__ne__", np.less: "__gt__", np.less_equal: "__ge__",
    np.greater: "__lt__", np.greater_equal: "__le__",
}


def _only_numpy(xs) -> bool:
    for x in xs:
        if not isinstance(x, (np.ndarray, np.generic, int, float, complex, bool)) \
                and hasattr(x, "__array_ufunc__"):
            return False
    return True


class WeakEagerArray(EagerArray):
    """A weakly typed EagerArray (JAX's `weak_type=True`): made from a Python scalar
    (`asarray(0.5)`, `full(3, 0.5)`) or computed from weak values only. Its dtype gives
    way to the other operand's in promotion, as a Python scalar's does, so a bfloat16
    array times `asarray(0.5)` stays bfloat16.

    >>> import funcad.numpy as fnp
    >>> fnp.asarray(0.5)
    Array(0.5, dtype=float64, weak_type=True)
    >>> (fnp.ones(2, fnp.float32) * fnp.asarray(0.5)).dtype
    dtype('float32')
    """

    __slots__ = ()

    @property
    def weak_type(self) -> bool:
        return True


def _short(idx) -> str:
    s = repr(idx)
    return s if len(s) <= 20 else "idx"


def _unpickle(value: np.ndarray, weak: bool = False) -> EagerArray:
    return wrap_weak(value) if weak else wrap(value)


def _cpu_device():
    return hooks.cpu_device()


class hooks:
    """Installed by funcad/lowering/array.py (core imports nothing above it)."""

    cpu_device = None  # () -> the host CPU device object


# The dtypes of the eager fast lane (funcad/arrays/ufuncs.py): the real floating dtypes that
# the x64 mode keeps, and none while debug_nans/debug_infs check each op. One set, changed in
# place by `set_lane`, so that the lane's one membership test stands for both settings.
lane_dtypes = set(map(np.dtype, (np.float16, np.float32, np.float64)))  # x64 on, no checks


# The lane's dtypes for transcendental functions (exp, log, tanh ...): `lane_dtypes`'s,
# and none while eager_backend="xla" runs them through XLA (transforms/eager_xla.py).
transcendental_lane_dtypes = set(lane_dtypes)
_lane_state = [True, False, True]  # x64, checks, NumPy runs the transcendental functions


def set_lane(x64: bool, checks: bool) -> None:
    """Refresh `lane_dtypes` for the x64 mode and the debug_nans/debug_infs checks."""
    _lane_state[:2] = x64, checks
    lane_dtypes.clear()
    if not checks:
        lane_dtypes.update(map(np.dtype, (np.float16, np.float32, np.float64) if x64
                               else (np.float16, np.float32)))
    transcendental_lane_dtypes.clear()
    if _lane_state[2]:
        transcendental_lane_dtypes.update(lane_dtypes)


def set_transcendental_lane(on: bool) -> None:
    """Whether the lane computes transcendental functions with NumPy (eager_backend)."""
    _lane_state[2] = on
    set_lane(*_lane_state[:2])


def wrap(x, _ndarray=np.ndarray, _generic=np.generic, _asarray=np.asarray):
    """`x` as a read-only EagerArray when it is a NumPy array or scalar; else `x` unchanged."""
    if type(x) is _ndarray:
        v = _view(x, EagerArray)
    elif isinstance(x, _generic):
        v = _view(_asarray(x), EagerArray)
    else:
        return x
    _setflags(v, False)
    return v


def wrap_weak(x) -> WeakEagerArray:
    """`x` (a NumPy array or scalar, or an EagerArray) as a read-only WeakEagerArray."""
    v = _view(x if type(x) is np.ndarray else np.asarray(x), WeakEagerArray)
    _setflags(v, False)
    return v


def to_eager(x) -> EagerArray:
    """An array of another kind (a device array) as an EagerArray, weak where it is."""
    return wrap_weak(np.asarray(x)) if getattr(x, "weak_type", False) is True else wrap(np.asarray(x))


def wrap_many(xs):
    """`wrap` applied to each result of a multiple-results primitive (a list or tuple)."""
    return [wrap(x) for x in xs] if type(xs) is list else type(xs)(wrap(x) for x in xs) \
        if type(xs) is tuple else xs


def plain(x):
    """A plain `np.ndarray` view of an EagerArray; anything else unchanged."""
    return _view(x, np.ndarray) if type(x) is EagerArray or type(x) is WeakEagerArray else x


def plain_args(args: tuple) -> list:
    return [_view(a, np.ndarray) if type(a) is EagerArray or type(a) is WeakEagerArray else a
            for a in args]


def plain_tree(x):
    """`plain` through lists, tuples and dicts (the arguments NumPy functions take)."""
    t = type(x)
    if t is EagerArray or t is WeakEagerArray:
        return _view(x, np.ndarray)
    if t is list or t is tuple:
        return t(plain_tree(e) for e in x)
    if t is dict:
        return {k: plain_tree(v) for k, v in x.items()}
    return x


def wrap_tree(x):
    """`wrap` through tuples and lists (functions returning several arrays)."""
    t = type(x)
    if t is tuple or t is list:
        return t(wrap_tree(e) for e in x)
    return wrap(x)


def eager_result(fn):
    """`fn` with its NumPy results (also inside a tuple or list) returned as EagerArrays:
    for functions that build arrays with NumPy directly instead of through primitives."""
    def f(*args, **kwargs):
        return wrap_tree(fn(*args, **kwargs))
    f.__name__, f.__qualname__, f.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
    f.__module__, f.__wrapped__ = fn.__module__, fn
    return f
