"""Wrapped functions and the transformations of them (JAX's `extend.linear_util`).

A `WrappedFun` is a function with a stack of transformations applied on each
call; a transformation with an auxiliary output reports it through a thunk.

>>> from funcad.extend import linear_util as lu
>>> @lu.transformation2
... def scale(f, k, *args): return [k * y for y in f(*args)]
>>> g = scale(lu.wrap_init(lambda x: [x + 1], debug_info=None), 10)
>>> g.call_wrapped(2)
[30]
"""
from __future__ import annotations

import warnings
from functools import partial
from typing import Any, Callable, NamedTuple


def _curried(f: Callable) -> Callable:
    """`f(gen, fun, *args)` usable as the decorator `@f` on `gen` (then called with
    `(fun, *args)`), or called with everything and then once more with no arguments."""
    return partial(partial, f)


class StoreException(Exception):
    """Reading an auxiliary output before the wrapped function ran, or storing twice."""


class _Store:
    __slots__ = ("_val",)
    _EMPTY = object()

    def __init__(self):
        self._val = self._EMPTY

    def store(self, val) -> None:
        if self._val is not self._EMPTY:
            raise StoreException("the auxiliary output was stored twice; call the wrapped function "
                                 "once per wrapping")
        self._val = val

    @property
    def val(self):
        if self._val is self._EMPTY:
            raise StoreException("the auxiliary output is not known yet: call the wrapped function "
                                 "(call_wrapped) before reading it")
        return self._val


class _Thunk:
    """The auxiliary output of a transformation, readable after the call."""

    __slots__ = ("_store",)

    def __init__(self, store: _Store):
        self._store = store

    def __call__(self):
        return self._store.val


class DebugInfo(NamedTuple):
    """What a wrapped function is for and where it came from, for error messages."""
    traced_for: str
    func_src_info: str | None
    arg_names: tuple | None
    result_paths: tuple | Callable | None

    @property
    def func_name(self) -> str:
        return (self.func_src_info or "<unknown>").split(" ")[0]


class WrappedFun:
    """`f` with `params` (keyword arguments fixed at wrapping) and transformations."""

    __slots__ = ("f", "params", "debug_info", "_call")

    def __init__(self, f: Callable, params: tuple, debug_info, call: Callable):
        self.f, self.params, self.debug_info, self._call = f, params, debug_info, call

    @property
    def __name__(self) -> str:
        return getattr(self.f, "__name__", type(self.f).__name__)

    def call_wrapped(self, *args, **kwargs):
        """Apply the transformations and the function to `args`."""
        return self._call(*args, **kwargs)

    def wrap(self, gen: Callable, gen_static_args: tuple = (), out_store=None) -> "WrappedFun":
        """`self` transformed by `gen(f, *gen_static_args, *args)` (with `out_store`
        after `f` when given)."""
        inner, pre = self._call, (() if out_store is None else (out_store,))
        return WrappedFun(self.f, self.params, self.debug_info,
                          lambda *a, **k: gen(inner, *pre, *gen_static_args, *a, **k))

    def __repr__(self):
        return f"Wrapped function: {self.__name__}"


def wrap_init(f: Callable, params=None, *, debug_info: DebugInfo | None) -> WrappedFun:
    """`f` as a WrappedFun; `params` (a dict) are passed to it as keyword arguments.
    `debug_info` (from api_util.debug_info) names the function in errors; None is
    deprecated, as in JAX."""
    if debug_info is None:
        warnings.warn("linear_util.wrap_init is missing a DebugInfo object; build one with "
                      "api_util.debug_info(...) and pass it as debug_info=", DeprecationWarning,
                      stacklevel=2)
    fixed = tuple(sorted((params or {}).items()))
    return WrappedFun(f, fixed, debug_info, lambda *a, **k: f(*a, **dict(fixed), **k))


@_curried
def transformation2(gen: Callable, fun: WrappedFun, *gen_static_args) -> WrappedFun:
    """`fun` transformed by `gen(f, *gen_static_args, *args, **kwargs)`, where `f` is
    the function being transformed."""
    return fun.wrap(gen, gen_static_args)


@_curried
def transformation_with_aux2(gen: Callable, fun: WrappedFun, *gen_static_args,
                             use_eq_store: bool = False) -> tuple[WrappedFun, Callable[[], Any]]:
    """As transformation2, for `gen(f, store, *gen_static_args, *args)` that reports an
    auxiliary output with `store.store(aux)`; returns the function and a thunk of it."""
    store = _Store()
    return fun.wrap(gen, gen_static_args, store), _Thunk(store)


def _run_generator(gen, f, *args, **kwargs):
    g = gen(*args, **kwargs)
    args_, kwargs_ = next(g)
    return g, g.send(f(*args_, **kwargs_))


@_curried
def transformation(gen: Callable, fun: WrappedFun, *gen_static_args) -> WrappedFun:
    """The generator form: `gen(*gen_static_args, *args)` yields `(args, kwargs)` for
    the function being transformed, receives its result, and yields the answer."""
    return fun.wrap(lambda f, *a, **k: _run_generator(gen, f, *a, **k)[1], gen_static_args)


@_curried
def transformation_with_aux(gen: Callable, fun: WrappedFun, *gen_static_args) -> tuple[WrappedFun, Callable]:
    """The generator form with an auxiliary output: the last yield is `(answer, aux)`."""
    def gen2(f, store, *a, **k):
        ans, aux = _run_generator(gen, f, *a, **k)[1]
        store.store(aux)
        return ans
    store = _Store()
    return fun.wrap(gen2, gen_static_args, store), _Thunk(store)


def merge_linear_aux(aux1: Callable, aux2: Callable):
    """The value of whichever of two thunks was filled (exactly one must be)."""
    try:
        out1 = aux1()
    except StoreException:
        return False, aux2()
    try:
        aux2()
    except StoreException:
        return True, out1
    raise StoreException("both auxiliary outputs were stored; exactly one branch may run")


def cache(call: Callable, *, explain: Callable | None = None) -> Callable:
    """`call(fun, *args)` memoised on the wrapped function's identity and `args`."""
    memo: dict = {}

    def cached(fun: WrappedFun, *args):
        key = (fun.f, fun.params, args)
        try:
            return memo[key]
        except KeyError:
            memo[key] = out = call(fun, *args)
            return out
        except TypeError:  # unhashable arguments: nothing to share
            return call(fun, *args)
    cached.cache_clear = memo.clear
    return cached
