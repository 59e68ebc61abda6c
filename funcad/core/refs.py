"""Mutable array references (JAX's `jax.Ref`) as boxes, functionalized while tracing.

A `Ref` holds its current value: an array, or a tracer of the trace it lives at (its
`home`). Reading indexes the value and writing replaces it with funcad ops, so every
transformation sees pure code on values and state needs no primitive, no effect and no
discharge pass: the threading of values JAX's discharge builds is the Python data flow.

A function that is staged into a jaxpr once and called later (jit, the bodies of scan,
while_loop and cond) must take the refs it closes over as inputs and return their new
values. Such a function is traced inside a `scope`: touching a ref made outside it marks
the ref (reads then see the outer value, writes may be staged values) and, when the trace
ends, `ClosedRefs` names the refs so the caller traces again with `threaded`, which binds
each ref to an input for the trace and hands back the final values.
"""
from __future__ import annotations

import threading

from .avals import AbstractRef, ShapedArray
from .trace import Tracer, ctx

__all__ = ["Ref", "AbstractRef", "ClosedRefs", "scope", "threaded", "is_ref"]


_ANY = object()  # home of a ref touched while a scope discovers: any value may be written


class Ref:
    """A mutable array reference; its operations are installed by funcad/ref/_ops.py."""

    __slots__ = ("_value", "_home", "_frozen", "__weakref__")

    def __init__(self, value=None, home=None, *, aval=None, refs=None):
        if aval is not None or refs is not None:
            raise TypeError("Ref(aval=..., refs=...) is JAX's constructor of its internal ref type, "
                            "which funcad does not have; make a reference with funcad.new_ref(value) "
                            "or funcad.empty_ref(shape_dtype)")
        self._value, self._home, self._frozen = value, home, False

    @property
    def aval(self) -> AbstractRef:
        v = self._value
        a = v.aval if isinstance(v, Tracer) else ShapedArray(v.shape, v.dtype)
        return AbstractRef(ShapedArray(a.shape, a.dtype))

    shape = property(lambda self: tuple(self._value.shape))
    dtype = property(lambda self: self._value.dtype)
    ndim = property(lambda self: len(self._value.shape))
    size = property(lambda self: self.aval.size)

    __hash__ = object.__hash__  # refs are identities (dict keys in scopes), not values


def is_ref(x) -> bool:
    return isinstance(x, Ref)


class ClosedRefs(Exception):
    """Raised at the end of a scope's trace that touched refs made outside it."""

    def __init__(self, refs: list):
        super().__init__(
            f"the traced function uses {len(refs)} funcad.Ref(s) made outside it "
            f"({', '.join(r.aval.str_short() for r in refs)}). jit, scan, while_loop, fori_loop, "
            "cond and checkpoint take such refs as inputs; this use of the function (e.g. "
            "jit(f).lower/.trace, make_jaxpr, custom_jvp) cannot: pass the values instead.")
        self.refs = refs


class _Scopes(threading.local):
    def __init__(self):
        self.stack: list = []


_scopes = _Scopes()


class _Scope:
    __slots__ = ("local", "touched")

    def __init__(self, local=()):
        self.local = set(map(id, local))
        self.touched: dict = {}  # id -> (ref, saved value, saved home)


def created(ref: Ref) -> None:
    """Note a new ref as local to the innermost scope."""
    if _scopes.stack:
        _scopes.stack[-1].local.add(id(ref))


def touch(ref: Ref) -> None:
    """Called before every read or write of `ref`: a ref from outside the innermost
    scope is remembered (and may take that scope's staged values until it ends)."""
    if _scopes.stack:
        s = _scopes.stack[-1]
        if id(ref) not in s.local and id(ref) not in s.touched:
            s.touched[id(ref)] = (ref, ref._value, ref._home)
            ref._home = _ANY


class scope:
    """`with scope():` around a trace; raises ClosedRefs if it touched outer refs."""

    def __init__(self, local=()):
        self.s = _Scope(local)

    def __enter__(self):
        _scopes.stack.append(self.s)
        return self.s

    def __exit__(self, typ, exc, tb):
        popped = _scopes.stack.pop()
        assert popped is self.s
        if not self.s.touched:
            return False
        for ref, value, home in self.s.touched.values():
            ref._value, ref._home = value, home
        if typ is not None and issubclass(typ, ClosedRefs):
            return False  # an inner scope's: it is handled there
        raise ClosedRefs([r for r, _, _ in self.s.touched.values()])


def values(refs) -> list:
    """The current values of `refs` (touching them in the enclosing scope)."""
    out = []
    for r in refs:
        check_live(r)
        touch(r)
        out.append(r._value)
    return out


def write_back(refs, new_values) -> None:
    """Store a staged call's results into `refs` (after `values` was read)."""
    for r, v in zip(refs, new_values):
        check_write(r, v)
    for r, v in zip(refs, new_values):
        r._value = v


class threaded:
    """`with threaded(refs, vals) as get:` binds each ref to a value for a trace (its home
    the current trace), as a new scope local to it; `get()` returns the final values.
    The refs get their previous values back on exit."""

    def __init__(self, refs, vals):
        self.refs, self.vals = list(refs), list(vals)

    def __enter__(self):
        self.saved = [(r._value, r._home, r._frozen) for r in self.refs]
        for r, v in zip(self.refs, self.vals):
            r._value, r._home, r._frozen = v, ctx.trace, False
        self.scope = scope(self.refs)
        self.scope.__enter__()
        return lambda: [r._value for r in self.refs]

    def __exit__(self, typ, exc, tb):
        try:
            return self.scope.__exit__(typ, exc, tb)
        finally:
            for r, (v, h, f) in zip(self.refs, self.saved):
                r._value, r._home, r._frozen = v, h, f


def check_live(ref: Ref) -> None:
    if ref._frozen:
        raise ValueError(f"`get` must be called on `Ref` types: ~{ref.aval.inner_aval.str_short()}. "
                         "This ref was frozen (funcad.ref.freeze) or freed (free_ref) inside a "
                         "transformation and cannot be used afterwards; read its value before freezing.")


def check_write(ref: Ref, value) -> None:
    """A written tracer must live at the ref's trace or outside it (JAX's error texts)."""
    home = ref._home
    if home is _ANY or not isinstance(value, Tracer):
        return
    t = value._trace
    h = home
    while h is not None:
        if h is t:
            return
        h = h.parent
    kind = ("vmapped value on an unbatched array reference" if t.name == "vmap"
            else "a differentiated value on a non-differentiated array reference"
            if t.name in ("jvp", "linearize") else f"a value traced by {t.name} on an array reference")
    where = ("be an argument to the vmapped function" if t.name == "vmap"
             else "be an argument of the differentiated function" if t.name in ("jvp", "linearize")
             else "be created inside the transformed function")
    raise ValueError(f"performing a set/swap operation with {kind} of type {ref.aval.str_short()}. "
                     f"Move the array reference to {where}?")
