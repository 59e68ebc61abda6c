"""`explain_cache_misses`: why a jitted function traces again, in JAX's words.

On each trace-cache miss of `funcad.jit` (with the option on) one WARNING record goes to
the "funcad" logger: where the call was made, and either that the function was never
seen, or how the new signature differs from the closest one seen before. Differences
are ranked as JAX ranks them: the tracing context (configuration options such as
`jax_enable_x64`, `jax_default_matmul_precision`) first, then the argument pytree, then
static arguments, then the argument types; among keys of the same rank the one with
fewest differences is the closest.

>>> import funcad, numpy as np, logging
>>> f = funcad.jit(lambda x: x * 2)
>>> with funcad.explain_cache_misses(True):
...     _ = f(np.ones(2)); _ = f(np.ones(3))  # the second logs "different input types"
"""
from __future__ import annotations

import inspect
import logging
import sys

from ..core import options as _options
from ..core.pytree import keystr, one_level, tree_leaves_with_path, tree_unflatten
from ..core.traceback_util import is_internal, user_frame
from ..core.avals import short_dtype

__all__ = ["explain"]

_log = logging.getLogger("funcad")

# jit's cache key (transforms/jit.py `_split`) ends with the tracing context: the
# backend, the values of the jit-key options (core/options.py) and the context mesh.
_CONTEXT_START = 3

_seen_callsites: set = set()


def explain(jitted, key, args, kwargs, static_pos) -> None:
    """Log why `jitted` misses its cache for `key` (see the module docstring)."""
    fun = jitted.fun
    code = getattr(fun, "__code__", None)
    filename = code.co_filename if code is not None else None
    if filename and is_internal(filename):
        return  # funcad's own jitted helpers: not the user's concern (as JAX)
    frame = user_frame(sys._getframe(1))
    callsite = _callsite(frame)
    msg = [f"TRACING CACHE MISS at {callsite}:"]
    where = (f" defined at {filename}" if filename else "") + (
        f":{code.co_firstlineno}" if code is not None else "")
    old_keys = list(jitted._cache)
    if not old_keys:
        msg.append(f"  never seen function:\n    {jitted.name} id={id(fun)}{where}")
        if callsite in _seen_callsites:
            msg.append("  but seen another function defined on the same line; maybe the function is\n"
                       "  being re-defined repeatedly, preventing caching?")
        else:
            _seen_callsites.add(callsite)
        _log.warning("\n".join(msg))
        return
    msg.append(f"  for {jitted.name}{where}")
    names = _arg_names(fun, args, kwargs, static_pos, jitted.static_argnames, key[0])
    closest = min(_diff(key, old, names) for old in old_keys)[-1]
    msg.append("  all previously seen cache keys differ. For the closest previous key:")
    msg.append("  " + closest)
    _log.warning("\n".join(msg))


def _callsite(frame) -> str:
    if frame is None:
        return "<unknown>"
    col = ""
    try:  # Python 3.11+: the column of the call
        pos = inspect.getframeinfo(frame).positions
        if pos is not None and pos.col_offset is not None:
            col = f":{pos.col_offset}"
    except (AttributeError, ValueError, OSError):
        pass
    return f"{frame.f_code.co_filename}:{frame.f_lineno}{col} ({frame.f_code.co_name})"


# ------------------------------------------------------------------ diffs ----

def _diff(new, old, names) -> tuple:
    """(rank, number of differences, explanation) of two cache keys; lower is closer."""
    return (_diff_context(new, old) or _diff_trees(new[0], old[0]) or _diff_statics(new[2], old[2])
            or _diff_types(names, new[1], old[1]) or (4, 0, "cache miss explanation unavailable"))


def _diff_context(new, old):
    backend, opts, mesh = new[_CONTEXT_START:]
    old_backend, old_opts, old_mesh = old[_CONTEXT_START:]
    if (backend, opts, mesh) == (old_backend, old_opts, old_mesh):
        return None
    lines = ["Tracing context doesn't match, e.g. due to config or context manager."]
    names = ("backend", *_options.jit_key_names, "mesh")
    new_ctx, old_ctx = (backend, *opts, mesh), (old_backend, *old_opts, old_mesh)
    n = 0
    for name, a, b in zip(names, new_ctx, old_ctx):
        if a != b:
            n += 1
            lines.append(f"  * {name} differs: now {a} and before {b}")
    return 0, n, "\n".join(lines)


def _diff_trees(new_tree, old_tree):
    if new_tree == old_tree:
        return None
    leaf = _Leaf()

    def args_and_kwargs(td):  # jit keeps the positional arguments in a list; JAX's are a tuple
        args, kwargs = tree_unflatten(td, [leaf] * td.num_leaves)
        return tuple(args), kwargs
    errs = list(_tree_errors((), args_and_kwargs(new_tree), args_and_kwargs(old_tree)))
    if not errs:
        return None
    lines = [f"  * at input path {keystr(tuple(path))}, now {a} and before {b}, so {why}"
             for path, a, b, why in errs]
    return 1, len(lines), "different input pytree:\n" + "\n".join(lines)


class _LeafType(type):
    def __repr__(cls):
        return "pytree leaf"


class _Leaf(metaclass=_LeafType):
    pass


def _describe_type(x) -> str:
    return "pytree leaf" if isinstance(x, _Leaf) else str(type(x))


def _tree_errors(path, a, b):
    """(path, now, before, why) for each place two pytrees' structures differ (JAX's wording)."""
    na, nb = one_level(a, with_keys=True), one_level(b, with_keys=True)
    if na is None and nb is None:
        return
    if type(a) is not type(b) or na is None or nb is None:
        yield path, _describe_type(a), _describe_type(b), "their Python types differ"
        return
    if isinstance(a, (list, tuple)) and len(a) != len(b):
        yield (path, f"{type(a).__name__} of length {len(a)}", f"{type(b).__name__} of length {len(b)}",
               "the lengths do not match")
        return
    (kids_a, aux_a), (kids_b, aux_b) = na, nb
    keys_a, keys_b = [k for k, _ in kids_a], [k for k, _ in kids_b]
    if len(kids_a) != len(kids_b):
        try:
            diff = " ".join(repr(_key_value(k)) for k in set(keys_a) ^ set(keys_b))
        except TypeError:
            diff = ""

        def children(n):
            return f"{n} child{'ren' if n > 1 else ''}"
        yield (path, f"{type(a)} with {children(len(kids_a))}", f"{type(b)} with {children(len(kids_b))}",
               "the numbers of children do not match"
               + (f", with the symmetric difference of key sets: {{{diff}}}" if diff else ""))
        return
    if aux_a != aux_b:
        yield (path, f"{type(a)} with pytree metadata {aux_a}", f"{type(b)} with pytree metadata {aux_b}",
               "the pytree node metadata does not match")
        return
    for (k, ca), (_, cb) in zip(kids_a, kids_b):
        yield from _tree_errors((*path, k), ca, cb)


def _key_value(k):
    for attr in ("key", "idx", "name"):
        if hasattr(k, attr):
            return getattr(k, attr)
    return k


def _diff_statics(new, old):
    if new == old:
        return None
    old_map, new_map = dict(old), dict(new)
    lines = []
    for where in sorted(set(old_map) | set(new_map), key=str):
        a, b = new_map.get(where, "<not given>"), old_map.get(where, "<not given>")
        if a != b or type(a) is not type(b):
            label = f"argument {where}" if isinstance(where, int) else where
            lines.append(f"  * at {label}, now {a!r} and before {b!r}")
    return 2, len(lines), "different static arguments:\n" + "\n".join(lines)


def _diff_types(names, new_leaves, old_leaves):
    if new_leaves == old_leaves:
        return None
    lines, weak_hint = [], False
    for name, a, b in zip(names, new_leaves, old_leaves):
        if a == b:
            continue
        sa, sb = _short(a), _short(b)
        if a[2] != b[2]:
            weak_hint = True
            sa += f"{{weak_type={a[2]}}}"
            sb += f"{{weak_type={b[2]}}}"
        if len(a) > 3 or len(b) > 3:  # a sharded argument's layout
            sa += f" {a[3] if len(a) > 3 else 'unsharded'}"
            sb += f" {b[3] if len(b) > 3 else 'unsharded'}"
        lines.append(f"  * at {name}, now {sa} and before {sb}")
    msg = "different input types:\n" + "\n".join(lines)
    if weak_hint:
        msg += "https://docs.jax.dev/en/latest/101/type_promotion.html#weak-types"
    return 3, len(lines), msg


def _short(leaf_key) -> str:
    shape, dtype = leaf_key[0], leaf_key[1]
    return f"{short_dtype(dtype)}[{','.join(map(str, shape))}]"


# ------------------------------------------------------------------ names ----

def _arg_names(fun, args, kwargs, static_pos, static_names, in_tree) -> list:
    """A name per dynamic leaf, as JAX's debug info has them: `x`, `x['b'][1]`,
    `args[0]`, `kw['w']`, from the function's signature."""
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        sig = None
    positional: list[str] = []
    var_pos = None
    if sig is not None:
        for p in sig.parameters.values():
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                positional.append(p.name)
            elif p.kind == p.VAR_POSITIONAL:
                var_pos = p.name
    var_kw = None if sig is None else next(
        (p.name for p in sig.parameters.values() if p.kind == p.VAR_KEYWORD), None)
    names = []
    for i, a in enumerate(args):
        if i in static_pos:
            continue
        if i < len(positional):
            base = positional[i]
        elif var_pos is not None:
            base = f"{var_pos}[{i - len(positional)}]"
        else:
            base = f"args[{i}]"
        names += [base + keystr(p) for p, _ in _leaf_paths(a)]
    named = set() if sig is None else {p.name for p in sig.parameters.values()
                                       if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    for k in sorted(k for k in kwargs if k not in static_names):
        base = k if (k in named or var_kw is None) else f"{var_kw}[{k!r}]"
        names += [base + keystr(p) for p, _ in _leaf_paths(kwargs[k])]
    n = in_tree.num_leaves
    if len(names) != n:  # a signature that does not bind these arguments: number them
        names = [f"leaf {i}" for i in range(n)]
    return names


def _leaf_paths(x):
    return tree_leaves_with_path(x)

