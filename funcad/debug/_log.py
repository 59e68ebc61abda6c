"""`funcad.debug.log`: `funcad.debug.print` through Python's `logging`, as `jax.debug.log`.

The message is formatted when the program runs (per batch entry under vmap, with primal
values under grad, after each call under jit, as `funcad.debug.callback`) and handed to
the logger "funcad.debug" as an INFO record that names the user's line that logged it.
"""
from __future__ import annotations

import copy
import logging
import string
import sys
from typing import Any, Callable

import numpy as np

from ._callbacks import debug_callback
from ..core.errors import FuncadTypeError, FuncadValueError
from ..core.traceback_util import user_frame

__all__ = ["log", "logger"]

logger = logging.getLogger("funcad.debug")


class _FormatChecker(string.Formatter):
    """Checks that a format string uses exactly the arguments given, formatting nothing."""

    def format_field(self, value, format_spec):
        return ""

    def check_unused_args(self, used_args, args, kwargs):
        unused = [a for i, a in enumerate(args) if i not in used_args]
        if unused:
            raise FuncadValueError(f"Unused positional arguments to `funcad.debug.log`: {unused}")
        unused_kw = [k for k in kwargs if k not in used_args]
        if unused_kw:
            raise FuncadValueError(
                f"Unused keyword arguments to `funcad.debug.log`: {unused_kw}. You may be passing "
                'an f-string (f"{x}") into funcad.debug.log; pass a plain string and the values.')


_checker = _FormatChecker()


def _record(level: int) -> logging.LogRecord:
    frame = user_frame(sys._getframe(1))
    path, line = ("(unknown file)", 0) if frame is None else (frame.f_code.co_filename, frame.f_lineno)
    return logger.makeRecord(logger.name, level, path, line, "", (), None)


def log(fmt: str | None = None, *args: Any, ordered: bool = False, partitioned: bool = False,
        skip_format_check: bool = False, **kwargs: Any) -> Callable[..., None] | None:
    """Log `fmt.format(*args, **kwargs)` at INFO level to the logger "funcad.debug", with
    the values the program computes, also under jit, vmap and grad (as `jax.debug.log`).
    `log(ordered=True)(fmt, ...)` is the two-call form.

    >>> import funcad, funcad.numpy as fnp
    >>> seen = []
    >>> def keep(record):
    ...     return seen.append(record.getMessage()) or True
    >>> logger.addFilter(keep)
    >>> _ = funcad.jit(lambda x: funcad.debug.log("x = {}", x) or fnp.sin(x))(1.0)
    >>> logger.removeFilter(keep)
    >>> seen
    ['x = 1.0']
    """
    def call(fmt: str, *c_args, **c_kwargs) -> None:
        if not isinstance(fmt, str):
            raise FuncadTypeError(f"funcad.debug.log takes a format string first, got "
                                  f"{type(fmt).__name__}; write funcad.debug.log('{{}}', x)")
        if not skip_format_check:
            _checker.format(fmt, *c_args, **c_kwargs)
        placeholders = bool(fmt) and next(iter(string.Formatter().parse(fmt)))[1] is not None
        printoptions = np.get_printoptions()
        record = _record(logging.INFO)

        def emit(*a, **kw):
            if placeholders:
                with np.printoptions(**printoptions):
                    msg = fmt.format(*a, **kw)
            else:
                msg = " ".join((fmt, *(str(x) for x in a)))
            rec = copy.copy(record)
            rec.msg = msg
            logger.handle(rec)

        debug_callback(emit, *c_args, ordered=ordered, partitioned=partitioned, **c_kwargs)

    if fmt is not None:
        call(fmt, *args, **kwargs)
        return None
    if args or kwargs:
        raise FuncadTypeError(f"funcad.debug.log got unexpected arguments in the two-call form: "
                              f"args={args} kwargs={kwargs}")
    return call
