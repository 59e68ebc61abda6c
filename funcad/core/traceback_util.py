"""Tracebacks that end in the user's code.

An error raised deep inside a transformation passes through dozens of
funcad frames (traces, rules, the evaluator) that say nothing to the user.
`api_boundary` wraps the public entry points (grad, jit, vmap, ...) and the
functions they return: when an exception leaves the outermost one, funcad's
own frames are removed from its traceback, so it reads as "your call ->
your function's line -> the error". A note on the exception says so.

The full traceback stays reachable: set `FUNCAD_TRACEBACK_FILTERING=off`
in the environment or `funcad.config.update("traceback_filtering", "off")`,
or read `exc.__funcad_unfiltered_traceback__`.

>>> import funcad, funcad.numpy as fnp
>>> try:
...     funcad.grad(lambda x: x * fnp.ones(3))(1.0)
... except funcad.FuncadTypeError as e:
...     print(any(n.startswith("funcad removed") for n in e.__notes__))
True
"""
from __future__ import annotations

import functools
import linecache
import os
import sys
import types
from typing import Callable

from . import leaks, options

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_internal_cache: dict[str, bool] = {}


_exclusions: list[str] = [_PKG_DIR]  # funcad's and the libraries' that registered (register_exclusion)


def is_internal(filename: str) -> bool:
    """Whether a code object's file is part of the funcad package (or of a library
    that registered its path with register_exclusion)."""
    hit = _internal_cache.get(filename)
    if hit is None:
        path = os.path.abspath(filename)
        hit = _internal_cache[filename] = any(path.startswith(p) for p in _exclusions)
    return hit


def register_exclusion(path: str) -> None:
    """Treat code under `path` as a library's own: tracebacks and error locations
    skip it, as they skip funcad's."""
    _exclusions.append(os.path.abspath(path))
    _internal_cache.clear()


def user_frame(frame: types.FrameType | None = None) -> types.FrameType | None:
    """The innermost frame outside funcad, starting from `frame` (default: the caller)."""
    f = sys._getframe(1) if frame is None else frame
    while f is not None and is_internal(f.f_code.co_filename):
        f = f.f_back
    return f


def describe_frame(frame: types.FrameType | None) -> str:
    """'file.py:12 (fun): `y = fnp.log(x)`' for a frame, '' for None."""
    if frame is None:
        return ""
    code = frame.f_code
    line = linecache.getline(code.co_filename, frame.f_lineno).strip()
    return f"{code.co_filename}:{frame.f_lineno} ({code.co_name})" + (f": `{line}`" if line else "")


def user_source() -> str:
    """Where the user's code called into funcad (see describe_frame), or ''."""
    return describe_frame(user_frame(sys._getframe(1)))


# funcad.config's traceback_filtering ("on" or "off"); config sets it.
filtering = "on"


def _set_filtering(v: str) -> None:
    global filtering
    filtering = v


options.bind("traceback_filtering", on_set=_set_filtering, get=lambda: filtering)


def filtering_enabled() -> bool:
    return filtering == "on"


def _filter_tb(tb: types.TracebackType | None) -> tuple[types.TracebackType | None, int]:
    """A copy of the traceback chain without funcad's frames, and how many were dropped."""
    kept, dropped = [], 0
    while tb is not None:
        if is_internal(tb.tb_frame.f_code.co_filename):
            dropped += 1
        else:
            kept.append(tb)
        tb = tb.tb_next
    out = None
    for t in reversed(kept):
        out = types.TracebackType(out, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return out, dropped


_NOTE = ("funcad removed {n} of its internal frames from this traceback; to see them set "
         "FUNCAD_TRACEBACK_FILTERING=off or funcad.config.update('traceback_filtering', 'off'), "
         "or read exc.__funcad_unfiltered_traceback__.")


def _inside_boundary(frame: types.FrameType | None) -> bool:
    while frame is not None:
        if frame.f_code is _BOUNDARY_CODE:
            return True
        frame = frame.f_back
    return False


def api_boundary(fun: Callable) -> Callable:
    """Wrap a public entry point so that errors leaving it hide funcad's frames.

    Only the outermost boundary on the stack filters (inner ones re-raise as
    is), and only when an exception is raised: calls that succeed pay one
    extra Python call.

    >>> @api_boundary
    ... def f(x):
    ...     return 1 / x
    >>> f(2)
    0.5
    """
    @functools.wraps(fun)
    def funcad_api_boundary(*args, **kwargs):
        __tracebackhide__ = True  # noqa: F841  (pytest and IPython hide this frame)
        try:
            out = fun(*args, **kwargs)
            if options.check_tracer_leaks and not _inside_boundary(sys._getframe(1)):
                leaks.check()  # the outermost call is done: what still holds a tracer leaked it
            return out
        except Exception as e:
            if (getattr(e, "__funcad_unfiltered_traceback__", None) is not None
                    or _inside_boundary(sys._getframe(1)) or not filtering_enabled()):
                raise
            raise filtered(e)

    return funcad_api_boundary


def filtered(e: BaseException) -> BaseException:
    """`e` with funcad's frames dropped from its traceback (the full one kept as
    `e.__funcad_unfiltered_traceback__`), for `raise filtered(e)`. Hot paths
    that skip the `api_boundary` wrapper use it in their own `except`."""
    if (getattr(e, "__funcad_unfiltered_traceback__", None) is not None
            or not filtering_enabled()):
        return e
    tb = e.__traceback__
    filtered_tb, dropped = _filter_tb(tb)
    if not dropped:
        return e
    try:
        e.__funcad_unfiltered_traceback__ = tb
    except AttributeError:  # an exception type without a __dict__
        return e
    if hasattr(e, "add_note"):
        e.add_note(_NOTE.format(n=dropped))
    return e.with_traceback(filtered_tb)


_BOUNDARY_CODE = api_boundary(lambda: None).__code__


def boundary_transform(transform: Callable) -> Callable:
    """`api_boundary` for a transformation and for the functions it returns
    (plain functions, alone or inside a returned tuple, e.g. vjp's pullback).

    >>> import funcad.transforms.api as api
    >>> grad = boundary_transform(api.grad)
    >>> float(grad(lambda x: x * x)(3.0))
    6.0
    """
    @functools.wraps(transform)
    def funcad_transform(*args, **kwargs):
        return _wrap_result(transform(*args, **kwargs))

    return api_boundary(funcad_transform)


def _wrap_result(out):
    if isinstance(out, (types.FunctionType, functools.partial)):
        return api_boundary(out)
    if type(out) is tuple and any(isinstance(o, types.FunctionType) for o in out):
        return tuple(_wrap_result(o) for o in out)
    return out
