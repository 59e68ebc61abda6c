"""numpy.vectorize on vmap: a function of core-shaped arrays, mapped over the loop dimensions."""
from __future__ import annotations

import functools
import re
from typing import Any, Callable, Collection

import numpy as np

from ..arrays.creation import asarray
from ..transforms.vmap import vmap
from ..arrays.shape import broadcast_to

__all__ = ["vectorize"]

_DIMS = r"\(\s*(?:\w+(?:\s*,\s*\w+)*)?\s*\)"
_SIGNATURE = re.compile(rf"^\s*{_DIMS}(?:\s*,\s*{_DIMS})*\s*->\s*{_DIMS}(?:\s*,\s*{_DIMS})*\s*$")


def _parse_signature(signature: str):
    if not _SIGNATURE.match(signature):
        raise ValueError(f"not a valid gufunc signature: {signature!r}; "
                         "write it like '(m,n),(n)->(m)'")
    def groups(side):
        return [tuple(d.strip() for d in g.split(",") if d.strip())
                for g in re.findall(r"\(([^)]*)\)", side)]
    ins, outs = signature.split("->")
    return groups(ins), groups(outs)


def _bind_excluded(fun, excluded, args, kwargs):
    """fun with the excluded positional and keyword arguments fixed; the remaining arguments."""
    fixed = [(i, args[i]) for i in sorted(e for e in excluded if isinstance(e, int)) if i < len(args)]
    fixed_kw = {k: v for k, v in kwargs.items() if k in excluded}
    free = [a for i, a in enumerate(args) if i not in excluded]
    free_kw = {k: v for k, v in kwargs.items() if k not in excluded}

    def bound(*xs):
        xs = list(xs)
        for i, a in fixed:
            xs.insert(i, a)
        return fun(*xs, **free_kw, **fixed_kw)
    return bound, free


def _core_sizes(args, in_dims, signature):
    sizes: dict[str, int] = {}
    loop_shapes = []
    for i, (x, dims) in enumerate(zip(args, in_dims)):
        if x.ndim < len(dims):
            raise ValueError(f"argument {i} of the vectorized function has shape {x.shape}, fewer "
                             f"dimensions than its core dimensions {dims} in signature {signature!r}")
        core = x.shape[x.ndim - len(dims):] if dims else ()
        for name, n in zip(dims, core):
            if sizes.setdefault(name, n) != n:
                raise ValueError(f"core dimension {name!r} has sizes {sizes[name]} and {n} in the "
                                 f"arguments of the vectorized function (signature {signature!r})")
        loop_shapes.append(x.shape[:x.ndim - len(dims)])
    try:
        loop = np.broadcast_shapes(*loop_shapes)
    except ValueError:
        raise ValueError(f"the loop dimensions {loop_shapes} of the vectorized function's "
                         "arguments do not broadcast together") from None
    return sizes, loop


def vectorize(pyfunc: Callable, *, excluded: Collection[int | str] = frozenset(),
              signature: str | None = None) -> Callable:
    """A function of core-shaped arrays, applied over all leading (loop) dimensions with vmap.

    As numpy.vectorize with a gufunc `signature`; the function itself runs once, traced, so
    the result is batched code rather than a Python loop. Keyword arguments not in
    `excluded` are passed to every call unchanged.

    >>> import funcad.numpy as fnp
    >>> mv = vectorize(lambda m, v: m @ v, signature="(n,k),(k)->(n)")
    >>> mv(fnp.ones((4, 2, 3)), fnp.ones(3)).shape
    (4, 2)
    """

    if any(not isinstance(e, (int, str)) for e in excluded):
        raise TypeError(f"vectorize can only exclude integer or string arguments, got excluded={excluded!r}")
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise ValueError(f"excluded={excluded!r} contains negative numbers")
    in_dims, out_dims = _parse_signature(signature) if signature is not None else (None, None)

    @functools.wraps(pyfunc)
    def wrapped(*args: Any, **kwargs: Any):
        fun, free = _bind_excluded(pyfunc, excluded, args, kwargs)
        dims = in_dims if in_dims is not None else [()] * len(free)
        if len(dims) != len(free):
            raise TypeError(f"the vectorized function got {len(free)} array arguments, but its "
                            f"signature {signature!r} names {len(dims)}")
        if not free:
            return fun()
        xs = [asarray(x) for x in free]
        sizes, loop = _core_sizes(xs, dims, signature)
        n = int(np.prod(loop, dtype=np.int64))
        flat = [_broadcast_loop(x, d, loop).reshape((n,) + x.shape[x.ndim - len(d):] if d else (n,))
                for x, d in zip(xs, dims)]

        def checked(*core):
            out = fun(*core)
            if out_dims is not None:
                outs = out if isinstance(out, tuple) else (out,)
                if len(out_dims) > 1 and not isinstance(out, tuple):
                    raise TypeError(f"the vectorized function must return a tuple of {len(out_dims)} "
                                    f"arrays for signature {signature!r}, got {out!r:.60}")
                if len(outs) != len(out_dims):
                    raise TypeError(f"the vectorized function returned {len(outs)} outputs; its "
                                    f"signature {signature!r} names {len(out_dims)}")
                for o, d in zip(outs, out_dims):
                    shape = np.shape(o)
                    want = tuple(sizes.get(name, s) for name, s in zip(d, shape))
                    if len(shape) != len(d) or shape != want:
                        raise ValueError(f"output shape {shape} does not match core dimensions {d} "
                                         f"of signature {signature!r}")
            return out

        out = vmap(checked)(*flat)
        return _unflatten(out, loop)

    return wrapped


def _broadcast_loop(x, core_dims, loop):
    core = x.shape[x.ndim - len(core_dims):] if core_dims else ()
    return broadcast_to(x, tuple(loop) + tuple(core))


def _unflatten(out, loop):
    if isinstance(out, tuple):
        return tuple(_unflatten(o, loop) for o in out)
    return out.reshape(tuple(loop) + tuple(out.shape[1:]))
