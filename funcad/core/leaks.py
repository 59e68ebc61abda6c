"""The `check_tracer_leaks` option: find tracers that outlive their transformation.

funcad already refuses to *use* a leaked tracer (`trace.check_alive`); this check,
off by default as in JAX, reports a leak as soon as it happens. Each trace that
finishes while the option is on is remembered weakly; when the outermost public
entry point (`traceback_util.api_boundary`) returns, every remembered trace that is
still referred to by a tracer has leaked one (internal references are gone by then,
so a referrer is the user's: a global, a closure, a list, an attribute).

>>> import funcad, funcad.numpy as fnp
>>> stash = []
>>> def f(x):
...     stash.append(fnp.sin(x))
...     return x
>>> with funcad.checking_leaks():
...     funcad.grad(f)(1.0)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
funcad.core.errors.TracerLeakError: Leaked trace JVPTrace. Leaked tracer(s): ...
"""
from __future__ import annotations

import gc
import sys
import threading
import types
import weakref

from .errors import TracerLeakError


class _Finished(threading.local):
    def __init__(self):
        self.refs: list[weakref.ref] = []


_finished = _Finished()


tracer_type: type = type(None)  # core.trace's Tracer, set there (it imports this module)


def remember(trace) -> None:
    """Called by `Trace.finish` while the option is on."""
    _finished.refs.append(weakref.ref(trace))


def check() -> None:
    """Raise TracerLeakError if a finished trace is still held by a tracer."""
    refs, _finished.refs = _finished.refs, []
    refs = [r for r in refs if r() is not None]
    if not refs:  # every trace freed by reference counting: nothing can hold its tracers
        return
    gc.collect()  # tracers kept alive only by reference cycles cannot reach user code
    for ref in refs:
        trace = ref()
        if trace is None:
            continue
        leaked = [r for r in gc.get_referrers(trace) if isinstance(r, tracer_type)]
        del trace
        if leaked:
            raise TracerLeakError(_message(leaked))


def _message(leaked: list) -> str:
    trace = leaked[0]._trace
    lines = []
    for t in leaked:  # a loop, not a generator: a generator's cell would hold `t` too
        text = repr(t)
        for h in _holders(t, leaked):
            text += f"\n  held by {h}"
        lines.append(text)
    return (f"Leaked trace {type(trace).__name__}. Leaked tracer(s):\n\n" + "\n\n".join(lines)
            + "\n\nA value computed inside the transformed function was stored where it outlives "
              "the call (a global, a closure, a list or an object attribute). Return it from the "
              "function instead (grad and vjp take has_aux=True for extra outputs).")


def _holders(t, ignore: list) -> list[str]:
    """Who refers to `t`: containers (with the module global or attribute that holds
    them, one step up) and the local variables of live frames."""
    out = []
    skip = {id(ignore), id(sys._getframe())}
    for r in gc.get_referrers(t):
        if id(r) in skip or isinstance(r, types.FrameType):
            continue
        desc = f"a {type(r).__name__}"
        for owner in gc.get_referrers(r):
            if isinstance(owner, dict) and owner.get("__name__") and any(v is r for v in owner.values()):
                name = next(k for k, v in owner.items() if v is r)
                desc += f" ({owner['__name__']}.{name})"
                break
        out.append(desc)
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename == __file__:
            frame = frame.f_back
            continue
        for name, val in frame.f_locals.items():
            if val is ignore:
                continue
            if val is t or (isinstance(val, (list, tuple)) and _holds(val, t)) or (
                    isinstance(val, dict) and _holds(list(val.values()), t)):
                out.append(f"the local variable {name!r} of {frame.f_code.co_qualname} "
                           f"({frame.f_code.co_filename}:{frame.f_lineno})")
        frame = frame.f_back
    return out



def _holds(items, t) -> bool:
    for v in items:  # a loop, not any(genexpr): a genexpr would make `t` a cell variable
        if v is t:
            return True
    return False
