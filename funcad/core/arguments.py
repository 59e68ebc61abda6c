"""Function arguments: which are static or differentiated, split out and merged back.

`split_static`/`merge_static` take the static positions out of a call and put
them back (jit, make_jaxpr, checkpoint); `argnums_partial` is the function of
the `argnums` arguments only (grad, jacfwd, jacrev); `resolve_static_args`
completes static_argnums and static_argnames from each other through the
function's signature.

As in JAX: when only `static_argnames` is given, the names' positions become
static argnums too (so `f(2.0, 3)` treats `n` as static in `jit(f,
static_argnames="n")`); when only `static_argnums` is given, the names of
those positions become static argnames (so `f(2.0, n=3)` does too). When both
are given they are taken as they are. Functions without a signature (some
builtins) keep what was given.
"""
from __future__ import annotations

import inspect
from typing import Callable

from .errors import FuncadTypeError, FuncadValueError

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_KEYWORD = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


__all__ = ["argnums_partial", "argnums_positions", "int_tuple", "merge_static", "resolve_static_args",
           "split_static", "with_args"]


def split_static(args: tuple, static_argnums) -> tuple[set, list]:
    """(the static positions of this call, the other arguments); a negative argnum
    counts from the end, one past the call's arguments is ignored, as in JAX.

    >>> split_static((1.0, "x", 2.0), (-2,))
    ({1}, [1.0, 2.0])
    """
    n = len(args)
    static_pos = {i % n for i in static_argnums if -n <= i < n}
    return static_pos, [a for i, a in enumerate(args) if i not in static_pos]


def merge_static(args: tuple, static_pos: set, dyn) -> list:
    """The call's arguments with the non-static ones replaced by `dyn`, in order."""
    it = iter(dyn)
    return [args[i] if i in static_pos else next(it) for i in range(len(args))]


def argnums_positions(argnums, nargs: int, name: str) -> tuple[bool, tuple]:
    """(whether argnums is a single int, its positions counted from the start) for a
    call with `nargs` positional arguments; an argnum outside them raises.

    >>> argnums_positions(-1, 3, "grad")
    (True, (2,))
    """
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    for i in nums:
        if not -nargs <= i < nargs:
            raise FuncadTypeError(f"{name}: argnums={argnums} but the function was called with "
                                  f"{nargs} positional argument{'s' if nargs != 1 else ''}")
    return single, tuple(i % nargs for i in nums)


def with_args(args: tuple, nums: tuple, dyn) -> list:
    """The call's arguments with those at positions `nums` replaced by `dyn`."""
    full = list(args)
    for i, x in zip(nums, dyn):
        full[i] = x
    return full


def argnums_partial(fun: Callable, argnums, args: tuple, kwargs: dict, name: str):
    """(single, the arguments at argnums, fun of those only with the rest fixed).

    >>> single, dyn, g = argnums_partial(lambda a, b: a - b, 1, (5.0, 2.0), {}, "grad")
    >>> single, dyn, g(1.0)
    (True, (2.0,), 4.0)
    """
    single, nums = argnums_positions(argnums, len(args), name)

    def partial_fun(*d):
        return fun(*with_args(args, nums, d), **kwargs)

    return single, tuple(args[i] for i in nums), partial_fun


def int_tuple(x) -> tuple:
    if x is None:
        return ()
    return (int(x),) if isinstance(x, int) else tuple(int(i) for i in x)


def _str_tuple(x) -> tuple:
    if x is None:
        return ()
    return (x,) if isinstance(x, str) else tuple(x)


def _signature(fun: Callable) -> inspect.Signature | None:
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        return None


def resolve_static_args(fun: Callable, static_argnums, static_argnames,
                        what: str = "static") -> tuple[tuple, tuple]:
    """(static argnums, static argnames) of `fun`, each completed from the other
    (`what="donate"`: jit's donate_argnums and donate_argnames, resolved alike).

    >>> def f(x, n, *, scale=1.0): ...
    >>> resolve_static_args(f, None, "n")
    ((1,), ('n',))
    >>> resolve_static_args(f, 1, None)
    ((1,), ('n',))
    """
    # An empty tuple counts as not given: funcad's jit defaults them to ().
    static_argnums = static_argnums if static_argnums not in ((), []) else None
    static_argnames = static_argnames if static_argnames not in ((), []) else None
    nums, names = int_tuple(static_argnums), _str_tuple(static_argnames)
    if static_argnums is None and static_argnames is None:
        return nums, names  # the common case: no signature needed
    sig = _signature(fun)
    if sig is None:
        return nums, names
    params = list(sig.parameters.values())
    if static_argnums is None:
        nums = tuple(i for i, p in enumerate(params)
                     if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD and p.name in names)
    elif static_argnames is None:
        n = len(params)
        names = tuple(p.name for i, p in enumerate(params)
                      if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
                      and (i in nums or i - n in nums))
    _validate(sig, nums, names, what)
    if not any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        n_pos = sum(p.kind in _POSITIONAL for p in params)
        if n_pos:  # a negative argnum counts from the signature's end, not the call's
            nums = tuple(i % n_pos if i < 0 else i for i in nums)
    return nums, names


def _validate(sig: inspect.Signature, nums: tuple, names: tuple, what: str) -> None:
    params = list(sig.parameters.values())
    if not any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        n_pos = sum(p.kind in _POSITIONAL for p in params)
        if nums and (-min(nums) > n_pos or max(nums) >= n_pos):
            raise FuncadValueError(f"jit: {what}_argnums={nums}, but the function takes only {n_pos} "
                             f"positional argument{'s' if n_pos != 1 else ''} ({sig})")
    pos_only = {p.name for p in params if p.kind in (inspect.Parameter.POSITIONAL_ONLY,
                                                      inspect.Parameter.VAR_POSITIONAL)}
    if bad := pos_only & set(names):
        raise FuncadValueError(f"jit: {what}_argnames {sorted(bad)} are positional-only in {sig}; "
                         f"use {what}_argnums for them")
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return
    if bad := set(names) - {p.name for p in params if p.kind in _KEYWORD}:
        raise FuncadValueError(f"jit: {what}_argnames {sorted(bad)} are not parameters of the function "
                         f"{sig}")
