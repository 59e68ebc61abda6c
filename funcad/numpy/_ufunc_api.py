"""`funcad.numpy.ufunc` and `frompyfunc`: NumPy's ufunc interface (`reduce`, `accumulate`,
`at`, `outer`, `reduceat`, `identity`, `nin`, `nout`, `nargs`), as JAX's `numpy.ufunc`.

A ufunc's methods without a fast path are written with `fori_loop`/`scan` over the
elementwise call, JAX's algorithms, so their numbers (and derivatives) are JAX's. The
built-in binary ufuncs (`add`, `multiply`, `maximum`, `logical_and`, ...) take JAX's fast
paths (`add.reduce` is `sum`, `add.accumulate` is `cumsum`, `add.at` is `.at[].add`).

The built-in ufuncs stay plain functions carrying the interface as attributes, so a call
`fnp.add(x, y)` costs exactly what it did (an instance's `__call__` would add a Python call
to every eager op); `isinstance(fnp.add, fnp.ufunc)` holds as in JAX.

>>> import funcad.numpy as fnp
>>> fnp.add.reduce(fnp.arange(5.0)).item(), fnp.multiply.accumulate(fnp.arange(1, 5)).tolist()
(10.0, [1, 2, 6, 24])
>>> isinstance(fnp.maximum, fnp.ufunc), fnp.add.identity, fnp.add.nin
(True, 0, 2)
"""
from __future__ import annotations

import operator
import types
from typing import Any, Callable

import numpy as np

from ..core.avals import aval_of
from ..core.errors import FuncadTypeError, FuncadValueError
from ..primitives._base import canonical_axis
from ..arrays.dtypes import asarray_or_tracer, cast
from ..arrays.indexing import _IndexUpdateHelper as _at, getitem, take
from ._vectorize import vectorize
from ..transforms.tracing import eval_shape
from ..transforms.control_flow_api import fori_loop, scan
from ..arrays.shape import broadcast_to, concatenate, expand_dims, moveaxis, ravel, reshape
from ..arrays.ufuncs import where as _where
from ..arrays.creation import full, zeros
from ..transforms.vmap import vmap

__all__ = ["frompyfunc", "ufunc"]


class _UfuncType(type):
    # The built-in ufuncs are functions that carry a ufunc (see the module docstring).
    def __instancecheck__(cls, obj) -> bool:
        if type.__instancecheck__(cls, obj):
            return True
        return type(obj) is types.FunctionType and isinstance(obj.__dict__.get("_ufunc"), cls)


def _no_out(out, what):
    if out is not None:
        raise FuncadValueError(f"{what}: the out argument is not supported (funcad arrays are "
                               "immutable, as JAX's are); use the returned array")


class ufunc(metaclass=_UfuncType):
    """A universal function: an elementwise function of `nin` arrays with NumPy's ufunc
    methods, as JAX's `numpy.ufunc`.

    `func` is a funcad-traceable function of scalars (it is vectorized) unless `call=`
    gives a broadcasting implementation; `reduce=`, `accumulate=`, `at=` and `reduceat=`
    give fast paths for the methods (otherwise loops over the elementwise call).

    >>> import funcad.numpy as fnp
    >>> hyp = fnp.ufunc(lambda x, y: fnp.sqrt(x * x + y * y), 2, 1, name="hyp")
    >>> hyp.outer(fnp.array([3.0]), fnp.array([4.0, 0.0])).tolist()
    [[5.0, 3.0]]
    """

    def __init__(self, func: Callable[..., Any], /, nin: int, nout: int, *, name: str | None = None,
                 nargs: int | None = None, identity: Any = None, call: Callable | None = None,
                 reduce: Callable | None = None, accumulate: Callable | None = None,
                 at: Callable | None = None, reduceat: Callable | None = None):
        if not callable(func):
            raise FuncadTypeError(f"ufunc: expected a callable, got {type(func).__name__}")
        self.__doc__ = func.__doc__
        self.__name__ = name or getattr(func, "__name__", "ufunc")
        self._func = func
        self._nin, self._nout = operator.index(nin), operator.index(nout)
        self._nargs = operator.index(nargs or nin)
        self._identity = identity
        self._call, self._reduce, self._accumulate = call, reduce, accumulate
        self._at, self._reduceat = at, reduceat
        self._elementwise = call is not None  # a broadcasting call: outer needs no vmap

    nin = property(lambda self: self._nin)
    nout = property(lambda self: self._nout)
    nargs = property(lambda self: self._nargs)
    identity = property(lambda self: self._identity)

    def _key(self):
        return (self._func, self.__name__, _hashable(self._identity), self._nin, self._nout, self._nargs)

    def __hash__(self) -> int:
        return hash(self._key())

    def __eq__(self, other) -> bool:
        other = _as_ufunc(other)
        return isinstance(other, ufunc) and self._key() == other._key()

    def __repr__(self) -> str:
        return f"<funcad.numpy.ufunc '{self.__name__}'>"

    def __call__(self, *args, out=None, where=None):
        _no_out(out, self.__name__)
        if where is not None:
            raise FuncadValueError(f"{self.__name__}: the where argument of a ufunc call is not "
                                   "supported (as in JAX); use funcad.numpy.where on the result")
        if len(args) != self._nin:
            raise FuncadTypeError(f"{self.__name__} takes {self._nin} arguments, got {len(args)}")
        if self._call is not None:
            return self._call(*args)
        return vectorize(self._func)(*args)

    def _binary_only(self, method):
        if self._nin != 2:
            raise FuncadValueError(f"{self.__name__}.{method}: only supported for binary ufuncs "
                                   f"(this one takes {self._nin} arguments)")
        if self._nout != 1:
            raise FuncadValueError(f"{self.__name__}.{method}: only supported for ufuncs with a "
                                   f"single output (this one has {self._nout})")

    def _result_dtype(self, *arrays):
        ones = [np.ones((), aval_of(a).dtype) for a in arrays]
        return np.dtype(eval_shape(self._func, *ones).dtype)

    # -- reduce --------------------------------------------------------------------------
    def reduce(self, a, axis: int | tuple | None = 0, dtype=None, out=None, keepdims: bool = False,
               initial=None, where=None):
        """Reduce `a` along `axis` by applying the ufunc repeatedly (NumPy's `ufunc.reduce`).

        >>> import funcad.numpy as fnp
        >>> fnp.maximum.reduce(fnp.array([[1.0, 5.0], [4.0, 2.0]]), axis=1).tolist()
        [5.0, 4.0]
        """
        self._binary_only("reduce")
        _no_out(out, f"{self.__name__}.reduce")
        a = asarray_or_tracer(a)
        if where is not None:
            where = asarray_or_tracer(where)
            if self._identity is None and initial is None:
                raise FuncadValueError(f"reduction operation {self.__name__!r} does not have an identity, "
                                       "so to use a where mask one has to specify 'initial'")
            if aval_of(where).dtype != np.bool_:
                raise FuncadValueError(f"where argument must have dtype=bool; got dtype={aval_of(where).dtype}")
        fast = self._reduce or self._reduce_via_loop
        return fast(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)

    def _reduce_via_loop(self, arr, axis=0, dtype=None, keepdims=False, initial=None, where=None):
        if initial is None:
            initial = self._identity
        dtype = np.dtype(dtype) if dtype is not None else self._result_dtype(arr, arr)
        nd = aval_of(arr).ndim
        if where is not None:
            where = broadcast_to(where, aval_of(arr).shape)
        if isinstance(axis, tuple):
            raise FuncadValueError(f"{self.__name__}.reduce: a tuple of axes is not supported for a "
                                   "ufunc without a reduce fast path (as in JAX); reduce one axis at a time")
        if axis is None:
            final_shape = (1,) * nd if keepdims else ()
            arr = ravel(arr)
            where = None if where is None else ravel(where)
            axis = 0
        else:
            axis = canonical_axis(axis, nd, f"{self.__name__}.reduce", arr)
            shape = aval_of(arr).shape
            final_shape = shape[:axis] + ((1,) if keepdims else ()) + shape[axis + 1:]
        if axis != 0:
            arr = moveaxis(arr, axis, 0)
            where = None if where is None else moveaxis(where, axis, 0)
        n = aval_of(arr).shape[0]
        if n == 0:
            if initial is None:
                raise FuncadValueError(f"zero-size array to reduction operation {self.__name__} "
                                       "which has no identity")
            return full(final_shape, initial, dtype)


        def body(i, val):
            new = self(val, cast(getitem(arr, i), dtype))
            return new if where is None else _where(getitem(where, i), new, val)
        if initial is None:
            start, init = 1, arr[0]
        else:
            start, init = 0, initial
        init = broadcast_to(cast(asarray_or_tracer(init), dtype), aval_of(arr).shape[1:])
        result = fori_loop(start, n, body, init)
        return reshape(result, final_shape) if keepdims else result

    # -- accumulate ----------------------------------------------------------------------
    def accumulate(self, a, axis: int = 0, dtype=None, out=None):
        """The running reduction along `axis` (NumPy's `ufunc.accumulate`).

        >>> import funcad.numpy as fnp
        >>> fnp.maximum.accumulate(fnp.array([1.0, 3.0, 2.0, 5.0])).tolist()
        [1.0, 3.0, 3.0, 5.0]
        """
        self._binary_only("accumulate")
        _no_out(out, f"{self.__name__}.accumulate")
        a = asarray_or_tracer(a)
        if axis is None or isinstance(axis, tuple):
            raise FuncadValueError("accumulate does not allow multiple axes; give one integer axis")
        fast = self._accumulate or self._accumulate_via_scan
        return fast(a, axis=axis, dtype=dtype)

    def _accumulate_via_scan(self, arr, axis=0, dtype=None):
        dtype = np.dtype(dtype) if dtype is not None else self._result_dtype(arr, arr)
        axis = canonical_axis(axis, aval_of(arr).ndim, f"{self.__name__}.accumulate", arr)
        if aval_of(arr).size == 0:
            return zeros(aval_of(arr).shape, dtype)
        arr = moveaxis(arr, axis, 0)

        def step(carry, x):
            y = self(carry, cast(x, dtype))
            return y, y
        first = cast(arr[0], dtype)
        _, rest = scan(step, first, arr[1:])
        return moveaxis(concatenate([expand_dims(first, 0), rest], 0), 0, axis)

    # -- at --------------------------------------------------------------------------------
    def at(self, a, indices, b=None, /, *, inplace: bool = True):
        """`a` with the ufunc applied at `indices` (with `b`), repeated indices applied once
        each, NumPy's `ufunc.at`. funcad arrays are immutable, so `inplace=False` is required.

        >>> import funcad.numpy as fnp
        >>> fnp.add.at(fnp.zeros(3), [0, 0, 2], 1.0, inplace=False).tolist()
        [2.0, 0.0, 1.0]
        """
        if inplace:
            raise FuncadValueError(
                f"{self.__name__}.at: funcad arrays are immutable, as JAX's are, so the update "
                f"cannot happen in place; pass inplace=False and use the returned array")
        if b is None and self._nin != 1 or b is not None and self._nin != 2:
            raise FuncadTypeError(f"{self.__name__}.at: a ufunc of {self._nin} arguments takes "
                                  f"{'a value b' if self._nin == 2 else 'no value b'}")
        fast = self._at or self._at_via_scan
        return fast(a, indices) if b is None else fast(a, indices, b)

    def _at_via_scan(self, a, indices, *args):
        a = asarray_or_tracer(a)
        args = tuple(asarray_or_tracer(v) for v in args)
        dtype = self._result_dtype(a, *args)
        a = cast(a, dtype)
        args = tuple(cast(v, dtype) for v in args)
        idx = indices if isinstance(indices, tuple) else (indices,)
        if not idx:
            return a

        def static(i):
            return isinstance(i, slice) or i is None or i is Ellipsis
        idx = tuple(i if static(i) else asarray_or_tracer(i) for i in idx)
        shapes = [aval_of(i).shape for i in idx if not static(i)]
        shape = np.broadcast_shapes(*shapes) if shapes else ()
        if not shape:  # one update: the indices pick a single block
            return _at(a)[idx].set(self(_at(a)[idx].get(), *args))
        k = int(np.prod(shape))
        if args:
            rest = aval_of(args[0]).shape[len(shape):]
            args = (reshape(broadcast_to(args[0], shape + rest), (k,) + rest),)
        flat = tuple(i if static(i) else ravel(broadcast_to(i, shape)) for i in idx)

        def step(carry, _):
            i, x = carry
            here = tuple(j if static(j) else getitem(j, i) for j in flat)
            x = _at(x)[here].set(self(_at(x)[here].get(), *(getitem(v, i) for v in args)))
            return (i + 1, x), None
        (_, out), _ = scan(step, (np.int64(0), a), None, length=k)
        return out

    # -- reduceat --------------------------------------------------------------------------
    def reduceat(self, a, indices, axis: int = 0, dtype=None, out=None):
        """Reductions over the slices `a[indices[i]:indices[i+1]]` along `axis` (NumPy's
        `ufunc.reduceat`; where `indices[i] >= indices[i+1]` the entry is `a[indices[i]]`).

        >>> import funcad.numpy as fnp
        >>> fnp.add.reduceat(fnp.arange(8.0), fnp.array([0, 4, 1, 5])).tolist()
        [6.0, 4.0, 10.0, 18.0]
        """
        self._binary_only("reduceat")
        _no_out(out, f"{self.__name__}.reduceat")
        fast = self._reduceat or self._reduceat_via_loop
        return fast(a, indices, axis=axis, dtype=dtype)

    def _reduceat_via_loop(self, a, indices, axis=0, dtype=None):
        a = asarray_or_tracer(a)
        idx = asarray_or_tracer(indices)
        if aval_of(a).ndim == 0:
            raise FuncadValueError(f"reduceat: a must have 1 or more dimension, got a.shape={aval_of(a).shape}")
        if aval_of(idx).ndim != 1:
            raise FuncadValueError(f"reduceat: indices must be one-dimensional, got indices.shape="
                                   f"{aval_of(idx).shape}")
        if dtype is not None:
            a = cast(a, np.dtype(dtype))
        if axis is None or isinstance(axis, (tuple, list)):
            raise FuncadValueError("reduceat requires a single integer axis")
        nd = aval_of(a).ndim
        axis = canonical_axis(axis, nd, "reduceat", a)
        n = aval_of(a).shape[axis]
        out = take(a, idx, axis=axis)
        ends = concatenate([cast(idx, np.int64), np.array([n], np.int64)])
        bshape = [1] * nd
        bshape[axis] = aval_of(idx).shape[0]
        start = reshape(ends[:-1], bshape)
        stop = reshape(ends[1:], bshape)

        def body(i, acc):
            row = take(a, reshape(i, (1,)), axis=axis)
            return _where((i > start) & (i < stop), self(acc, row), acc)
        return fori_loop(0, n, body, out)

    # -- outer ------------------------------------------------------------------------------
    def outer(self, A, B, /):
        """The ufunc on every pair (A[i...], B[j...]): shape A.shape + B.shape.

        >>> import funcad.numpy as fnp
        >>> fnp.multiply.outer(fnp.array([1, 2]), fnp.array([1, 10, 100])).tolist()
        [[1, 10, 100], [2, 20, 200]]
        """
        self._binary_only("outer")
        A, B = asarray_or_tracer(A), asarray_or_tracer(B)
        sa, sb = aval_of(A).shape, aval_of(B).shape
        if self._elementwise:  # broadcasting does it in one call
            return self(reshape(A, sa + (1,) * len(sb)), B)
        res = vmap(vmap(self, (None, 0)), (0, None))(reshape(A, (-1,)), reshape(B, (-1,)))
        return reshape(res, sa + sb)


def _hashable(v):
    try:
        hash(v)
        return v
    except TypeError:
        return id(v)


def _as_ufunc(obj):
    return obj.__dict__.get("_ufunc", obj) if type(obj) is types.FunctionType else obj


def frompyfunc(func: Callable[..., Any], /, nin: int, nout: int, *, identity: Any = None) -> ufunc:
    """A `ufunc` from a funcad-traceable scalar function, as JAX's `numpy.frompyfunc`.

    >>> import funcad.numpy as fnp
    >>> diff = fnp.frompyfunc(lambda x, y: x - y, 2, 1)
    >>> diff.accumulate(fnp.array([10.0, 1.0, 2.0])).tolist()
    [10.0, 9.0, 7.0]
    """
    return ufunc(func, nin, nout, identity=identity)


def make_builtin(fn: Callable, nin: int, identity: Any = None, **fast) -> Callable:
    """Give the function `fn` (a broadcasting elementwise function) the ufunc interface,
    keeping `fn` itself as the callable (no per-call cost)."""
    u = ufunc(fn, nin, 1, identity=identity, call=fn, **fast)
    fn._ufunc = u
    fn.nin, fn.nout, fn.nargs, fn.identity = u.nin, u.nout, u.nargs, u.identity
    fn.reduce, fn.accumulate, fn.at, fn.reduceat, fn.outer = (u.reduce, u.accumulate, u.at,
                                                                 u.reduceat, u.outer)
    return fn
