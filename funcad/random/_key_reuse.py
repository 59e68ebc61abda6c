"""JAX's key-reuse checker (`debug_key_reuse`): a typed key may be consumed once.

With the option on (`funcad.config.update("debug_key_reuse", True)`, `with
funcad.debug_key_reuse(True):` or FUNCAD_DEBUG_KEY_REUSE=1), typed keys
(`funcad.random.key`, `split` of one, `wrap_key_data`) are tracked as JAX tracks them.
Raw uint32 keys are not. Samplers, `split`, `bits` and indexing consume keys; `fold_in`,
`key_data` and `==` do not; `clone` and `wrap_key_data` make fresh keys.

- Eagerly, each `PRNGKeyArray` carries a `_consumed` flag (a bool, or a bool array over
  its key axes once part of it was indexed), set when it is consumed; consuming a
  consumed key raises "Previously-consumed key passed to <site> at index <i>".
- Traced, the consumption points are the no-op markers of
  `funcad/primitives/key_reuse.py`, and a jaxpr's *signature* (`jaxpr_signature`:
  which inputs it consumes, which outputs are fresh, which outputs are its inputs) is
  found by JAX's rules over funcad's IR: calls use their body's signature, `cond` the
  union of its branches' sinks, `scan` and `while` refuse bodies that would consume a
  key again on the next iteration. Every jit trace is checked, and a top-level jitted
  (or vmapped) call checks its key arguments against the signature and marks them.

A key closed over by a jitted function is consumed when the function is traced (funcad
stages no key constants): it must be unconsumed then, and each later call raises, as
JAX's do; its uses inside that trace are not checked against each other.
"""
from __future__ import annotations

import threading
import weakref
from collections import defaultdict
from functools import reduce

import numpy as np

from ..core import options
from ..core.arguments import split_static
from ..core.errors import KeyReuseError
from ..core.ir import ClosedJaxpr, Literal
from ..core.pytree import tree_flatten
from ..core.staging import make_jaxpr
from ..core.trace import Tracer, call_rules, ctx, hooks
from ..primitives.key_reuse import KeyMask, random_clone_p, random_consume_p
from ..transforms.control_flow import cond_p, scan_p, while_p
from ..transforms.jit import Jitted
from ._keyarray import PRNGKeyArray, hooks as _keyarray_hooks

__all__ = ["consume", "fresh", "index_mask", "jaxpr_signature", "set_enabled"]


# The name JAX's eager error gives each traced consumption site.
_EAGER_SITE = {"jit": "jit-compiled function"}
_state = threading.local()  # .quiet: tracing only to find a signature; consume nothing eagerly


# ------------------------------------------------------------ eager flags ----

def consumed_of(key: PRNGKeyArray):
    return getattr(key, "_consumed", False)


def consume(key, site: str, mask=None, index: int = 0):
    """Consume typed keys (or the part `mask` selects): check and mark them eagerly,
    or return keys over marked data when traced. Raw keys pass through."""
    if not isinstance(key, PRNGKeyArray):
        return key
    if isinstance(key._data, Tracer):
        data = random_consume_p.bind(key._data, site=site,
                                     mask=None if mask is None else KeyMask(mask))
        return PRNGKeyArray(data, key._impl)
    if getattr(_state, "quiet", False):
        return key
    sel = True if mask is None else mask
    recording = getattr(_state, "recording", None) if ctx.trace is not None else None
    if recording is not None and any(k is key for k in recording):
        return key  # a closed-over key the jit trace consumed already: checked at each call
    if np.any(np.logical_and(consumed_of(key), sel)):
        raise KeyReuseError(f"Previously-consumed key passed to {_EAGER_SITE.get(site, site)} "
                            f"at index {index}")
    key._consumed = _simplify(np.logical_or(consumed_of(key), sel))
    if recording is not None:
        recording.append(key)  # a key closed over by the function a jit traces
    return key


def index_mask(shape: tuple, idx: tuple):
    """The keys `keys[idx]` takes, as a mask over the key axes (None: all of them, also
    for a traced index, which JAX's dynamic slices treat as the whole array)."""
    if any(isinstance(i, Tracer) for i in idx):
        return None
    mask = np.zeros(shape, dtype=bool)
    try:
        mask[idx] = True
    except (IndexError, TypeError, ValueError):
        return None
    return None if mask.all() else mask


def fresh(key):
    """Keys that share `key`'s data but not its consumption (clone, wrap_key_data)."""
    if isinstance(key, PRNGKeyArray) and isinstance(key._data, Tracer):
        return PRNGKeyArray(random_clone_p.bind(key._data), key._impl)
    return key


def _simplify(mask):
    mask = np.asarray(mask, dtype=bool)
    if mask.all():
        return True
    return False if not mask.any() else mask


# ------------------------------------------------------------- signatures ----

class Sink:
    def __init__(self, idx: int, mask=True):
        self.idx, self.mask = idx, _simplify(mask) if not isinstance(mask, bool) else mask

    def __repr__(self):
        return f"Sink({self.idx})" if self.mask is True else f"Sink({self.idx}, {self.mask})"


class Source(Sink):
    def __repr__(self):
        return f"Source({self.idx})" if self.mask is True else f"Source({self.idx}, {self.mask})"


class Signature:
    """What a jaxpr does to keys: the inputs it consumes (sinks, with a mask over key
    axes), the outputs that are fresh keys (sources) and the outputs that are inputs
    (forwards, (in, out) pairs)."""

    def __init__(self, sinks=(), sources=(), forwards=()):
        self.sinks, self.sources, self.forwards = list(sinks), list(sources), set(forwards)

    def __repr__(self):
        parts = sorted(self.sinks, key=lambda s: s.idx) + sorted(self.sources, key=lambda s: s.idx)
        parts = [repr(p) for p in parts] + [f"Forward({i}, {o})" for i, o in sorted(self.forwards)]
        return "KeyReuseSignature(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"

    def shifted(self, by: int) -> "Signature":
        return Signature([Sink(s.idx + by, s.mask) for s in self.sinks], self.sources,
                         {(i + by, o) for i, o in self.forwards})


def _body(closed) -> tuple:
    return (closed.jaxpr, closed) if isinstance(closed, ClosedJaxpr) else (closed, None)


_memo: dict = {}  # id(jaxpr) -> (jaxpr, signature); the jaxpr is held so the id stays its own


def jaxpr_signature(closed) -> Signature:
    """The key-reuse signature of a (closed) jaxpr; raises KeyReuseError where it uses a
    consumed key, as JAX's `jaxpr_type_signature`."""
    jaxpr, _ = _body(closed)
    hit = _memo.get(id(jaxpr))
    if hit is not None and hit[0] is jaxpr:
        return hit[1]
    sig = _analyse(jaxpr)
    if len(_memo) > 4096:
        _memo.clear()
    _memo[id(jaxpr)] = (jaxpr, sig)
    return sig


def _analyse(jaxpr) -> Signature:
    consumed: dict = {}
    forwards: dict = {}

    def resolve(v):
        while not isinstance(v, Literal) and v in forwards:
            v = forwards[v]
        return v

    for eqn in jaxpr.eqns:
        sig, name = _eqn_signature(eqn)
        for i, o in sig.forwards:
            forwards[eqn.outvars[o]] = eqn.inputs[i]
        for snk in sig.sinks:
            v = resolve(eqn.inputs[snk.idx])
            if isinstance(v, Literal):
                continue
            if np.any(np.logical_and(consumed.get(v, False), snk.mask)):
                raise KeyReuseError(f"In {name}, argument {snk.idx} is already consumed.")
            consumed[v] = np.logical_or(consumed.get(v, False), snk.mask)
        sourced = {s.idx for s in sig.sources}
        for o, v in enumerate(eqn.outvars):
            if v not in forwards:
                consumed[v] = o not in sourced  # a call's other outputs are consumed keys

    inputs = list(jaxpr.invars) + list(jaxpr.constvars)
    position = {v: i for i, v in enumerate(inputs)}
    sinks = [Sink(position[v], consumed[v]) for v in inputs if np.any(consumed.get(v, False))]
    sources, fwd = [], set()
    for o, v in enumerate(jaxpr.outvars):
        if isinstance(v, Literal):
            continue
        r = resolve(v)
        if r in position:
            fwd.add((position[r], o))
        elif _key_like(v) and not np.any(consumed.get(v, False)):
            sources.append(Source(o))
    return Signature(sinks, sources, fwd)


def _key_like(v) -> bool:
    """Could `v` hold key data (uint32[..., n])? Only such outputs are listed as fresh keys."""
    return v.aval.dtype == np.uint32 and v.aval.ndim >= 1


def _eqn_signature(eqn) -> tuple:
    """(signature, the name errors give) of one equation; operations that know no keys
    consume none and make fresh outputs."""
    prim, params = eqn.prim, eqn.params
    rule = key_reuse_rules.get(prim)
    if rule is not None:  # random_consume_p's errors name the sampler that consumed the key
        return rule(eqn), params["site"] if prim is random_consume_p else prim.name
    call = call_rules.get(prim)
    if call is not None:
        return jaxpr_signature(params[call.param]), prim.name
    return Signature((), [Source(o) for o in range(len(eqn.outvars))]), prim.name


def _consume_signature(eqn) -> Signature:
    mask = True if eqn.params["mask"] is None else eqn.params["mask"].array
    return Signature([Sink(0, mask)], (), {(0, 0)})


def _cond_signature(branches) -> Signature:
    sigs = [jaxpr_signature(b) for b in branches]
    sinks, sources = defaultdict(list), defaultdict(list)
    for sig in sigs:
        for s in sig.sinks:
            sinks[s.idx].append(s.mask)
        for s in sig.sources:
            sources[s.idx].append(s.mask)
    # An output is fresh only if every branch makes it fresh (the index is input 0).
    return Signature([Sink(i + 1, reduce(np.logical_or, m)) for i, m in sinks.items()],
                     [Source(i, reduce(np.logical_and, m)) for i, m in sources.items()
                      if len(m) == len(sigs)],
                     {(i + 1, o) for i, o in set.intersection(*(s.forwards for s in sigs))})


def _scan_signature(eqn) -> Signature:
    params = eqn.params
    nc, nk = params["num_consts"], params["num_carry"]
    sig = jaxpr_signature(params["jaxpr"])
    # A carry passed through unchanged is a constant of the loop (JAX hoists it).
    const = lambda i: i < nc or (nc <= i < nc + nk and (i, i - nc) in sig.forwards)
    if any(np.any(s.mask) and const(s.idx) for s in sig.sinks):
        raise KeyReuseError("scan body function leads to key reuse when repeatedly executed, "
                            "because key constants are repeatedly consumed:\n"
                            f"  signature={sig!r}\n  eqn={eqn.prim.name}")
    carry_sinks = {s.idx - nc for s in sig.sinks if nc <= s.idx < nc + nk and np.any(s.mask)}
    carry_sources = {s.idx for s in sig.sources if s.idx < nk and np.any(s.mask)}
    if not carry_sinks <= carry_sources:
        raise KeyReuseError("scan body function leads to key reuse when repeatedly executed, "
                            "because consumed inputs don't match sourced outputs:\n"
                            f"  signature={sig!r}\n  eqn={eqn.prim.name}")
    return sig


def _while_signature(eqn) -> Signature:
    params = eqn.params
    ncc, nbc = params["cond_nconsts"], params["body_nconsts"]
    cond_sig = jaxpr_signature(params["cond_jaxpr"])
    body_sig = jaxpr_signature(params["body_jaxpr"])
    cond_err = ("while_loop cond function leads to key reuse when repeatedly executed: "
                f"  cond_signature={cond_sig!r}")
    body_err = ("while_loop body function leads to key reuse when repeatedly executed: "
                f"  body_signature={body_sig!r}")
    if any(np.any(s.mask) for s in cond_sig.sinks if s.idx < ncc):
        raise KeyReuseError(cond_err)
    if any(np.any(s.mask) for s in body_sig.sinks if s.idx < nbc):
        raise KeyReuseError(body_err)
    body_carry = {s.idx - nbc for s in body_sig.sinks if s.idx >= nbc}
    cond_carry = {s.idx - ncc for s in cond_sig.sinks if s.idx >= ncc}
    sources = {s.idx for s in body_sig.sources}
    if not cond_carry <= sources:
        raise KeyReuseError(cond_err)
    if not body_carry <= sources:
        raise KeyReuseError(body_err)
    if body_carry & cond_carry:
        raise KeyReuseError("while_loop cond and body functions both use the same key: "
                            f"  cond_signature={cond_sig!r}  body_signature={body_sig!r}")
    # The while's inputs are the cond's constants, the body's, then the carry.
    return body_sig.shifted(ncc)


# --------------------------------------------------------------- boundaries ----

def _key_leaves(tree) -> list:
    return tree_flatten(tree, is_leaf=lambda x: isinstance(x, PRNGKeyArray))[0]


def check_signature(sig: Signature, args: list, funcname: str = "jit-compiled function") -> None:
    for s in sig.sinks:
        key = args[s.idx] if s.idx < len(args) else None
        if isinstance(key, PRNGKeyArray) and np.any(np.logical_and(consumed_of(key), s.mask)):
            raise KeyReuseError(f"Previously-consumed key passed to {funcname} at index {s.idx}")


def update_consumption(sig: Signature, args: list, outs: list) -> None:
    for s in sig.sinks:
        key = args[s.idx] if s.idx < len(args) else None
        if isinstance(key, PRNGKeyArray):
            key._consumed = _simplify(np.logical_or(consumed_of(key), s.mask))
    for out in outs:
        if isinstance(out, PRNGKeyArray):
            out._consumed = True
    for s in sig.sources:
        if s.idx < len(outs) and isinstance(outs[s.idx], PRNGKeyArray):
            outs[s.idx]._consumed = _simplify(np.logical_not(s.mask))
    for i, o in sig.forwards:
        if i < len(args) and o < len(outs) and isinstance(args[i], PRNGKeyArray) \
                and isinstance(outs[o], PRNGKeyArray):
            outs[o]._consumed = consumed_of(args[i])


def _jitted_call(self, *args, **kwargs):
    """Jitted.__call__ while the option is on: JAX's checks at a top-level call."""
    if ctx.trace is not None:
        return self._call(args, kwargs)
    static_pos, dyn = split_static(args, self.static_argnums)
    dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
    flat = _key_leaves((dyn, dyn_kwargs))
    before = _traces[0]
    entry, _ = self._entry(args, kwargs)
    closure = _closure_keys.get(entry.closed, ())
    if not closure and not any(isinstance(x, PRNGKeyArray) for x in flat):
        return self._call(args, kwargs)
    sig = jaxpr_signature(entry.closed)
    check_signature(sig, flat)
    if _traces[0] == before:  # (a trace has just consumed them, and checked them then)
        for j, key in enumerate(closure):
            if np.any(consumed_of(key)):
                raise KeyReuseError("Previously-consumed key passed to jit-compiled function at "
                                    f"index {len(flat) + j}")
    out = self._call(args, kwargs)
    update_consumption(sig, flat, _key_leaves(out))
    return out


def _boundary(fun, args):
    """A top-level transformed call (vmap) with typed keys among its arguments: its
    jaxpr's signature is checked and applied as a jitted call's is."""
    flat = _key_leaves(args)
    if not any(isinstance(x, PRNGKeyArray) for x in flat):
        return fun(*args)
    _state.quiet = True
    try:
        closed = make_jaxpr(fun)(*args)
    finally:
        _state.quiet = False
    sig = jaxpr_signature(closed)
    for s in sig.sinks:  # name the operation that consumes it, as JAX's eager error does
        key = flat[s.idx] if s.idx < len(flat) else None
        if isinstance(key, PRNGKeyArray) and np.any(np.logical_and(consumed_of(key), s.mask)):
            site, index = _first_consumer(closed.jaxpr, closed.jaxpr.invars[s.idx])
            raise KeyReuseError(f"Previously-consumed key passed to {site} at index {index}")
    out = fun(*args)
    update_consumption(sig, flat, _key_leaves(out))
    return out


def _first_consumer(jaxpr, var) -> tuple:
    for eqn in jaxpr.eqns:
        sig, name = _eqn_signature(eqn)
        for s in sig.sinks:
            if eqn.inputs[s.idx] is var:
                return _EAGER_SITE.get(name, name), s.idx
        for i, o in sig.forwards:
            if eqn.inputs[i] is var:
                var = eqn.outvars[o]
    return "jit-compiled function", 0


_closure_keys = weakref.WeakKeyDictionary()  # traced jaxpr -> the closed-over keys it consumed
_traces = [0]


def traced_checked(trace, *args, **kwargs):
    """A jit trace, `trace(*args, **kwargs)`, with JAX's checks: raise KeyReuseError if the
    program uses a consumed key; remember the closed-over keys it consumed, which JAX
    passes as constants at each call."""
    outer = getattr(_state, "recording", None)
    _state.recording = keys = []
    try:
        closed = trace(*args, **kwargs)
    finally:
        _state.recording = outer
    if outer is not None:
        outer.extend(keys)
    _traces[0] += 1
    jaxpr_signature(closed)
    if keys:
        _closure_keys[closed] = keys
    return closed


# primitive -> rule(eqn) -> Signature: the primitives that consume, copy or route keys
# (random_consume_p's errors name its sampler: `_eqn_signature`); call primitives
# analyse their bodies, and every other primitive consumes none and makes fresh outputs.
key_reuse_rules: dict = {
    random_consume_p: _consume_signature,
    random_clone_p: lambda eqn: Signature((), [Source(0)]),
    cond_p: lambda eqn: _cond_signature(eqn.params["branches"]),
    scan_p: _scan_signature,
    while_p: _while_signature,
}


_saved: dict = {}


def set_enabled(on: bool) -> None:
    """Install (or remove) the checks at jit's and vmap's boundaries and on jit traces."""
    options.debug_key_reuse = bool(on)
    if on and not _saved:
        _saved["call"] = Jitted.__call__
        Jitted.__call__ = _jitted_call
    elif not on and _saved:
        Jitted.__call__ = _saved.pop("call")
    hooks.key_reuse_trace = traced_checked
    hooks.key_reuse_boundary = _boundary


options.bind("debug_key_reuse", on_set=set_enabled)
if options.debug_key_reuse:  # set (e.g. by FUNCAD_DEBUG_KEY_REUSE) before funcad.random loaded
    set_enabled(True)


def _consume_slice(keys, idx):
    return consume(keys, "slice", index_mask(keys.shape, idx))


_keyarray_hooks.consume_slice = staticmethod(_consume_slice)
