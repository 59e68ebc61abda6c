"""jit: trace once, lower to StableHLO, compile with XLA, run on CPU or GPU.

At top level `jit(f)(*args)` looks its argument signature up in a bounded
LRU cache (signature -> compiled executable); on a miss it traces `f` to a
jaxpr, lowers and compiles it. Results stay on the device as `Array`s.

Under another transformation, jit is the call primitive `jit_p` whose
parameter is the traced ClosedJaxpr; its rules transform that jaxpr (jvp,
partial evaluation, transpose, batching), and its impl compiles it. Derived
jaxprs are memoized per jaxpr, so `grad(jit(f))` also compiles once.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import time
import weakref
from collections import OrderedDict
from typing import Callable, NamedTuple

import numpy as np

from ..core.arguments import merge_static, resolve_static_args, split_static
from ..core.avals import aval_of
from ..core import monitoring, options as _options, refs as _refs
from ..core.errors import FuncadTypeError
from ..core.pytree import flatten_fun, tree_flatten, tree_unflatten
from ..core.sharding import NamedSharding, Sharding, context_mesh, flat_shardings
from ..core.staging import lift_traced_consts, trace_to_jaxpr
from ..core.trace import abstract_eval_rules, ctx, hooks, sharding_rules
from ..core.typed_sharding import BY_SHAPE_RULE, concrete, with_shardings
from ..core.traceback_util import api_boundary, filtered
from ..lowering import xla
from ..lowering.array import Array, ShardedArray, is_device_array
from ..lowering.runtime import clear_memo, device_put, guard_inputs, host_mask
from ..lowering.spmd import put, wrap
from .cache_miss import explain as _explain_miss
from .debugging import check_jit_nans
from . import jit_refs
from .jit_primitive import _bind_call, _refuse_execution, executable_for, jit_p
from .jit_stages import ArgInfo, Compiled, Lowered, Traced, _Entry  # noqa: F401

__all__ = ["ArgInfo", "Compiled", "Jitted", "Lowered", "Traced", "clear_caches", "device_put", "executable_for", "jit",
           "jit_p"]

# --------------------------------------------------------------------- API ----

_log = logging.getLogger("funcad")
CACHE_SIZE = 128  # compiled signatures kept per jitted function (LRU)
_live: "weakref.WeakSet[Jitted]" = weakref.WeakSet()


# The signature of one argument leaf, (shape, dtype, weak_type), looked up by
# type for speed; other leaf types go through aval_of. A sharded array's
# layout is part of it.
_LEAF_KEYS = {
    np.ndarray: lambda x: (x.shape, x.dtype, False),
    Array: lambda x: (x.aval.shape, x.aval.dtype, x.aval.weak_type),
    ShardedArray: lambda x: (x.aval.shape, x.aval.dtype, x.aval.weak_type, x.sharding),
    float: lambda x: _FLOAT_KEY,
    int: lambda x: _INT_KEY,
    bool: lambda x: _BOOL_KEY,
}
for _t in (np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8,
           np.uint16, np.uint32, np.uint64, np.bool_, np.complex64, np.complex128):
    _LEAF_KEYS[_t] = lambda x, k=((), np.dtype(_t), False): k  # built once: a scalar type is its dtype
_FLOAT_KEY = ((), np.dtype(np.float64), True)
_INT_KEY = ((), np.dtype(np.int64), True)
_BOOL_KEY = ((), np.dtype(np.bool_), False)

# The fast path's index (positional leaves -> prebuilt call) takes the same keys,
# except that a device Array's is its aval: unequal to a NumPy array's tuple, so
# the index also tells host inputs from device ones (one executable per host
# mask). Sharded arrays take the general path.
_FAST_KEYS = {**_LEAF_KEYS, Array: lambda x: x.aval}
del _FAST_KEYS[ShardedArray]


def _leaf_key(x):
    f = _LEAF_KEYS.get(type(x))
    if f is not None:
        return f(x)
    a = aval_of(x)
    return (a.shape, a.dtype, a.weak_type)


class _Fast(NamedTuple):
    """A fast-path cache value: how to run this exact argument signature."""
    call: Callable  # args -> list of outputs
    single: bool
    out_tree: object


class Jitted:
    """A function compiled with XLA on first call per argument signature.

    Call it like the function. `.lower(*args)` gives the StableHLO text and
    `.compile()`; `.clear_cache()` drops the compiled signatures.
    """

    def __init__(self, fun, static_argnums=(), static_argnames=(), donate_argnums=(),
                 backend=None, in_shardings=None, out_shardings=None, donate_argnames=(),
                 keep_unused=False, device=None, inline=False, compiler_options=None):
        self.fun = fun
        self.in_shardings, self.out_shardings = in_shardings, out_shardings
        self.static_argnums, self.static_argnames = resolve_static_args(fun, static_argnums,
                                                                        static_argnames)
        self.donate_argnums, self.donate_argnames = resolve_static_args(
            fun, donate_argnums, donate_argnames, what="donate")
        self.backend = backend
        self.keep_unused, self.device, self.inline = keep_unused, device, inline
        self.compiler_options = compiler_options
        self.name = getattr(fun, "__name__", "fun")
        # signature -> _Entry, for top-level calls and calls inside transforms alike;
        # positional-arrays signature -> _Fast (an index into _cache). Shared by
        # every jit of the same function with the same options (see _caches_for).
        self._cache, self._fast = _caches_for(
            fun, (self.static_argnums, self.static_argnames, self.donate_argnums,
                  self.donate_argnames, backend, _options_key(in_shardings),
                  _options_key(out_shardings), device, _compiler_key(compiler_options)))
        self._fast_ok = (not self.static_argnums and not self.static_argnames
                         and in_shardings is None and out_shardings is None and device is None)
        # Copy the name and docstring only: another wrapper's __dict__ (e.g. grad of a
        # jitted function) would bring that function's caches along.
        functools.update_wrapper(self, fun, updated=())
        _live.add(self)
        # funcad.Ref support (transforms/jit_refs.py): the refs the function was found to
        # close over, and the jitted function that threads ref values (False: this is it).
        self._closed_refs: list = []
        self._ref_inner = None

    # -- signature ---------------------------------------------------------
    def _split(self, args, kwargs):
        """(dynamic leaves, signature key, in_tree, static positions) for a call."""
        static_pos, dyn_args = split_static(args, self.static_argnums)
        statics = []
        for i in sorted(static_pos):
            statics.append((i, _hashable(args[i], f"static argument {i}")))
        for k in self.static_argnames:
            if k in kwargs:
                statics.append((k, _hashable(kwargs[k], f"static argument {k!r}")))
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        leaves, in_tree = tree_flatten((dyn_args, dyn_kwargs))
        # backend None means the default one; the caches are dropped when it changes.
        # The options declared with jit_key=True (core/options.py) change what a trace
        # makes; the context mesh (funcad.set_mesh) gives PartitionSpecs their devices.
        # (transforms/cache_miss.py names the entries from the same declarations.)
        key = (in_tree, tuple(_leaf_key(x) for x in leaves), tuple(statics), self.backend,
               _options.jit_key, context_mesh())
        return leaves, key, in_tree, static_pos

    def _trace(self, args, kwargs, leaves, in_tree, static_pos, parent=None):
        fun, static_kw = self.fun, {k: v for k, v in kwargs.items() if k in self.static_argnames}
        flat_fun, out_trees = flatten_fun(
            lambda d, kw: fun(*merge_static(args, static_pos, d), **static_kw, **kw), in_tree)
        avals = [aval_of(x) for x in leaves]
        if _options.no_tracing:
            raise RuntimeError(f"re-tracing function {self.name} for `jit`, but 'no_tracing' is set. "
                               "Its arguments' shapes, dtypes or static values differ from those of "
                               "earlier calls (or it was never called before the block).")
        start = time.perf_counter()
        def run_trace(fun):
            if _options.debug_key_reuse:  # checked, and its closed-over keys remembered
                return hooks.key_reuse_trace(trace_to_jaxpr, fun, avals, name=f"jit({self.name})",
                                             parent=parent)
            return trace_to_jaxpr(fun, avals, name=f"jit({self.name})", parent=parent)

        if self._ref_inner is False:
            closed = run_trace(flat_fun)
        else:
            def checked(*xs):
                outs = flat_fun(*xs)
                jit_refs.check_no_refs(outs, self.name)
                return outs
            # A ref closed over raises ClosedRefs when the trace ends (see _call).
            with _refs.scope():
                closed = run_trace(checked)
        if _options.log_compiles:
            _log.warning("Finished tracing + transforming %s for jit in %.6f sec", self.name,
                         time.perf_counter() - start)
        if monitoring.timing():
            monitoring.record_duration(monitoring.JAXPR_TRACE_EVENT, start, fun_name=self.name)
        return closed, out_trees[0]

    def _donated(self, args, static_pos, leaves, kwargs=None):
        if not self.donate_argnums and not self.donate_argnames:
            return ()
        donate = split_static(args, self.donate_argnums)[0]
        flags = []
        for i, a in enumerate(args):
            if i not in static_pos:
                flags += [i in donate] * len(tree_flatten(a)[0])
        # keyword arguments follow in the leaves in key order (the dict's flattening)
        dyn_kwargs = {k: v for k, v in (kwargs or {}).items() if k not in self.static_argnames}
        for k in sorted(dyn_kwargs):
            flags += [k in self.donate_argnames] * len(tree_flatten(dyn_kwargs[k])[0])
        return tuple(flags) + (False,) * (len(leaves) - len(flags))

    def _entry(self, args, kwargs):
        leaves, key, in_tree, static_pos = self._split(args, kwargs)
        entry = self._cache.get(key)
        if entry is None:
            if _options.explain_cache_misses:
                _explain_miss(self, key, args, kwargs, static_pos)
            closed, out_tree = self._trace(args, kwargs, leaves, in_tree, static_pos)
            entry = self._new_entry(key, args, kwargs, static_pos, leaves, closed, out_tree)
        else:
            self._cache.move_to_end(key)
        return entry, leaves

    def _new_entry(self, key, args, kwargs, static_pos, leaves, closed, out_tree) -> "_Entry":
        ins, outs = self._shardings(args, kwargs, static_pos, leaves, out_tree)
        return self._store(key, _Entry(closed, out_tree, self.name, self.backend,
                                       self._donated(args, static_pos, leaves, kwargs), ins, outs,
                                       self.compiler_options))

    def _shardings(self, args, kwargs, static_pos, leaves, out_tree):
        """Per input and output leaf: its sharding, or None where unspecified. A
        sharded Array argument keeps its layout unless in_shardings says otherwise."""
        ins = [x.sharding if type(x) is ShardedArray else None for x in leaves]
        if self.in_shardings is not None:
            dyn = tuple(a for i, a in enumerate(args) if i not in static_pos)
            given = flat_shardings(self.in_shardings, dyn, "in_shardings")
            ins[:len(given)] = [g if g is not None else s for g, s in zip(given, ins)]
        outs = []
        if self.out_shardings is not None:
            shape = tree_unflatten(out_tree, [0] * out_tree.num_leaves)
            outs = flat_shardings(self.out_shardings, shape, "out_shardings")
        return ins, outs

    def _store(self, key, entry: "_Entry") -> "_Entry":
        self._cache[key] = entry
        if len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)
            self._fast.clear()  # it may point at the evicted entry
        return entry

    # -- calls ---------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        # Fast path: positional array arguments of a signature seen before map
        # straight to a compiled call. It skips the api_boundary wrapper (a
        # Python call) and filters tracebacks itself; all else goes to _call.
        if not kwargs and self._fast_ok and ctx.trace is None:
            try:
                hit = self._fast.get(tuple([_FAST_KEYS[type(a)](a) for a in args]))
            except KeyError:
                hit = None
            if hit is not None and not ctx.debug_nans:
                try:
                    outs = hit.call(args)
                except Exception as e:
                    raise filtered(e)
                return outs[0] if hit.single else tree_unflatten(hit.out_tree, outs)
        return self._call(args, kwargs)

    @api_boundary
    def _call(self, args, kwargs):
        if self.device is not None:
            with _on_device(self.device):
                return self._call_on_device(args, kwargs)
        return self._call_on_device(args, kwargs)

    def _call_on_device(self, args, kwargs):
        if self._ref_inner is not False and (self._closed_refs or jit_refs.has_refs(args, kwargs)):
            return jit_refs.call(self, args, kwargs)
        try:
            return self._call_plain(args, kwargs)
        except _refs.ClosedRefs as e:
            if self._ref_inner is False:
                raise
            self._closed_refs = list(e.refs)
            self._fast_ok = False  # every call now reads the refs' current values
            self._fast.clear()
            return jit_refs.call(self, args, kwargs)

    def _call_plain(self, args, kwargs):
        if ctx.trace is not None:
            return self._call_traced(args, kwargs)
        fast_key = None
        if not kwargs and self._fast_ok:
            try:
                fast_key = tuple([_FAST_KEYS[type(a)](a) for a in args])
            except KeyError:
                pass
        entry, leaves = self._entry(args, kwargs)
        exe = entry.executable(host_mask(leaves))
        if _options.no_execution:
            _refuse_execution(self.name)
        if _options.transfer_guards:  # (the fast path is off while they are on)
            guard_inputs(leaves, exe)
        elif fast_key is not None and not entry.spmd:
            if len(self._fast) > 2 * CACHE_SIZE:
                self._fast.clear()
            self._fast[fast_key] = _Fast(exe.fast_call(), entry.single, entry.out_tree)
        outs = exe(leaves)
        if ctx.debug_nans:
            check_jit_nans(self, args, kwargs, outs)
        return outs[0] if entry.single else tree_unflatten(entry.out_tree, outs)

    def _call_traced(self, args, kwargs):
        if self.compiler_options and _inside_jit(ctx.trace):
            # as JAX's: the options apply to one XLA compile, and a nested call has none
            raise ValueError(f"`compiler_options` can only be passed to top-level `jit`. Got "
                             f"compiler_options={self.compiler_options} on a jit of {self.name} "
                             "called inside another jit; pass them to the outer jit instead.")
        leaves, key, in_tree, static_pos = self._split(args, kwargs)
        entry = self._cache.get(key)
        if entry is not None:
            self._cache.move_to_end(key)
            closed, out_tree, lifted = entry.closed, entry.out_tree, []
        else:
            if _options.explain_cache_misses:
                _explain_miss(self, key, args, kwargs, static_pos)
            closed, out_tree = self._trace(args, kwargs, leaves, in_tree, static_pos, ctx.trace)
            closed, lifted = lift_traced_consts(closed)
            if not lifted:  # closed over no traced value: safe to reuse, at top level too
                self._new_entry(key, args, kwargs, static_pos, leaves, closed, out_tree)
        outs = _bind_call([*lifted, *leaves], closed, self.name, self.backend)
        return tree_unflatten(out_tree, outs)

    def trace(self, *args, **kwargs) -> "Traced":
        """Trace for these arguments (without lowering): a `Traced` stage.

        >>> import funcad, numpy as np
        >>> print(funcad.jit(lambda x: x + 1.0).trace(np.ones(2)).jaxpr)
        { lambda ; a:f64[2]. let
            b:f64[2] = add a 1.0:f64[]
          in (b,) }
        """
        leaves, key, in_tree, static_pos = self._split(args, kwargs)
        closed, out_tree = self._trace(args, kwargs, leaves, in_tree, static_pos)
        return Traced(self, closed, in_tree, out_tree, key, self._donated(args, static_pos, leaves, kwargs),
                      self._shardings(args, kwargs, static_pos, leaves, out_tree))

    def lower(self, *args, **kwargs) -> "Lowered":
        """Trace and lower for these arguments (without compiling): `self.trace(...).lower()`.

        >>> import funcad, numpy as np
        >>> print(funcad.jit(lambda x: x + 1.0).lower(np.ones(2)).as_text())  # doctest: +ELLIPSIS
        module @jit_...
        """
        return self.trace(*args, **kwargs).lower()

    def _cache_size(self) -> int:
        """How many argument signatures are compiled (for tests)."""
        return len(self._cache)

    def clear_cache(self) -> None:
        self._cache.clear()
        self._fast.clear()

    def __repr__(self):
        return f"<jitted function {self.name}>"

    def __get__(self, obj, objtype=None):  # jit works on methods too
        return self if obj is None else functools.partial(self, obj)

    @property
    def __signature__(self) -> inspect.Signature:
        # inspect takes an object with __get__ for a builtin descriptor and finds no
        # signature unless it is given here (JAX's jitted functions give the function's).
        return inspect.signature(self.fun)


def _hashable(x, what):
    try:
        hash(x)
    except TypeError:
        raise FuncadTypeError(
            f"jit: {what} must be hashable because static values key the compilation cache, but got "
            f"a {type(x).__name__}. Pass a tuple instead of a list, or make the argument dynamic.") from None
    return x


def jit(fun: Callable | None = None, *, in_shardings=None, out_shardings=None, static_argnums=(),
        static_argnames=(), donate_argnums=(), donate_argnames=(), keep_unused: bool = False,
        device=None, backend: str | None = None, inline: bool = False,
        compiler_options: dict | None = None):
    """Compile `fun` with XLA; trace once per argument signature.

    static_argnums/static_argnames: arguments passed as Python values (hashable)
    that key the cache instead of being traced. donate_argnums/donate_argnames:
    inputs whose device buffers the computation may reuse for outputs (the donated
    Arrays are deleted); each is completed from the other through the signature,
    as JAX's. backend: "cpu" or "gpu" (default: FUNCAD_BACKEND, else the GPU when
    present); device: a Device to run on (not with backend or shardings, as in JAX).
    in_shardings/out_shardings: a `funcad.sharding.Sharding` for all positional
    arguments (outputs), or a tree prefix of them with None where XLA may choose;
    with them (or sharded arguments) the program runs on every device of the
    shardings, partitioned by XLA. compiler_options: XLA options by name for every
    compile of this function (see `Lowered.compile`).

    Accepted as JAX accepts them, with nothing for funcad to do: keep_unused
    (funcad never prunes unused inputs, so every program keeps them, which is
    what JAX's keep_unused=True asks for; False only allows pruning) and inline
    (JAX's inline=True inlines the call when lowering; funcad's lowering already
    inlines nested jitted calls, so the jaxpr and results are the same either way).

    >>> import funcad, funcad.numpy as fnp
    >>> f = funcad.jit(lambda x: x ** 3 + 2.0 * x, inline=True)
    >>> f(2.0)
    Array(12., dtype=float64)
    >>> float(funcad.grad(f)(2.0))
    14.0
    """
    if fun is None:
        return functools.partial(jit, in_shardings=in_shardings, out_shardings=out_shardings,
                                 static_argnums=static_argnums, static_argnames=static_argnames,
                                 donate_argnums=donate_argnums, donate_argnames=donate_argnames,
                                 keep_unused=keep_unused, device=device, backend=backend,
                                 inline=inline, compiler_options=compiler_options)
    if not callable(fun):
        raise FuncadTypeError(f"jit expected a callable, got {fun!r} of type {type(fun).__name__}; pass "
                              "the function to compile: funcad.jit(f), or use @funcad.jit")
    if not isinstance(inline, bool):
        raise ValueError(f"Invalid inline option: {inline!r} (jit's inline is True or False)")
    if not isinstance(keep_unused, bool):
        raise FuncadTypeError(f"jit: keep_unused must be True or False, got {keep_unused!r}")
    if compiler_options is not None and not isinstance(compiler_options, dict):
        raise FuncadTypeError(f"jit: compiler_options must be a dict of XLA option names to values, "
                              f"got {type(compiler_options).__name__}")
    if device is not None:
        if backend is not None:
            raise ValueError(f"can't specify both a device and a backend for jit, got device={device} "
                             f"and backend={backend!r}")
        if in_shardings is not None or out_shardings is not None:
            raise ValueError("If backend or device is specified on jit, then in_shardings and "
                             "out_shardings should not be specified.")
        if isinstance(device, str) or not hasattr(device, "platform"):
            raise FuncadTypeError(f"jit: device must be a Device (e.g. funcad.devices()[0]), got "
                                  f"{device!r}; use backend= for a platform name")
    if backend is not None:
        backend = xla._canonical(backend)
    return Jitted(fun, static_argnums, static_argnames, donate_argnums, backend, in_shardings,
                  out_shardings, donate_argnames, keep_unused, device, inline, compiler_options)


@contextlib.contextmanager
def _on_device(device):
    """Run jit(device=...)'s calls with `device` as the default device (where jit places
    the computation and its results)."""
    old = _options.default_device
    if old is device:
        yield
        return
    _options.set_value("default_device", device)  # (it keys the trace cache, as any jit-key option)
    try:
        yield
    finally:
        _options.set_value("default_device", old)


def _inside_jit(trace) -> bool:
    while trace is not None:
        if str(getattr(trace, "name", "")).startswith("jit("):
            return True
        trace = getattr(trace, "parent", None)
    return False


def _compiler_key(options) -> tuple:
    return tuple(sorted((options or {}).items()))


def _options_key(shardings):
    """A hashable stand-in for in_shardings/out_shardings in the shared-cache key."""
    leaves, tree = tree_flatten(shardings, is_leaf=lambda s: s is None or isinstance(s, Sharding))
    return (tree, tuple(leaves))


# Like JAX, the trace cache is keyed on the function object (weakly), so that
# `jit(f)(x)` written inline in a loop traces f once, not on every call.
_shared: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _caches_for(fun, options) -> tuple:
    """The (signature, fast index) caches of `fun` jitted with `options`."""
    fresh = (OrderedDict(), {})
    if inspect.ismethod(fun):  # a new bound-method object per attribute access
        return fresh
    try:
        per_fun = _shared.get(fun)
        if per_fun is None:
            per_fun = _shared[fun] = {}
    except TypeError:  # not hashable or not weakly referenceable: no sharing
        return fresh
    return per_fun.setdefault(options, fresh)


def _all_caches():
    for per_fun in list(_shared.values()):
        yield from per_fun.values()
    for j in list(_live):
        yield j._cache, j._fast


def _drop_compiled():
    for entries, fast in _all_caches():
        entries.clear()
        fast.clear()


xla.backend_change_hooks.append(_drop_compiled)  # entries for backend=None are stale


def _drop_fast_paths() -> None:
    # The fast index is keyed on the arguments alone; it skips the trace-cache key and the
    # checks that options enter (a complex128 input means complex64 with x64 off).
    for _, fast in _all_caches():
        fast.clear()


def _set_cache_size(n: int) -> None:
    global CACHE_SIZE
    CACHE_SIZE = n
    for f in list(_live):  # shrink the caches that are now too big
        while len(f._cache) > n:
            f._cache.popitem(last=False)
        f._fast.clear()


_options.on_jit_key_change(_drop_fast_paths)
_options.bind("jit_cache_size", on_set=_set_cache_size, get=lambda: CACHE_SIZE)


def clear_caches() -> None:
    """Drop every jitted function's compiled signatures and the executable cache."""
    for caches in _all_caches():
        for c in caches:
            c.clear()
    clear_memo()
    if xla._xc is not None:
        xla.clear_executable_cache()


# ------------------------------------------------ eager operations on devices ----

def _sharded_eager(prim, args, params):
    """`prim` on operands some of which are laid out over several devices, as JAX runs it:
    with types on Explicit mesh axes, computed on the host and each result laid out as
    its type says; else as a one-operation SPMD program, its results where XLA puts them."""
    in_avals = [aval_of(a) for a in args]
    host = lambda: [a._value() if is_device_array(a) else a for a in args]  # noqa: E731  (fetched only when used)
    if not any(a._sharding is not None for a in in_avals):
        if sharding_rules.get(prim, BY_SHAPE_RULE) is BY_SHAPE_RULE:
            return prim.bind(*host(), **params)  # effects, calls: on the host values
        try:
            run = _one_op(prim, tuple(sorted(params.items())))
        except TypeError:  # unhashable params
            return prim.bind(*host(), **params)
        return run(*args)
    out_avals = with_shardings(prim, in_avals, abstract_eval_rules[prim](*in_avals, **params), params)
    outs = prim.bind(*host(), **params)
    meshes = [a.sharding.mesh for a in args if type(a) is ShardedArray
              and isinstance(a.sharding, NamedSharding)]

    def laid_out(o, aval):
        if getattr(aval, "_sharding", None) is None:
            return o
        s = concrete(aval._sharding, *meshes)
        return wrap(put(o, s, aval), aval, s)
    if prim.multiple_results:
        return [laid_out(o, a) for o, a in zip(outs, out_avals)]
    return laid_out(outs, out_avals)


@functools.lru_cache(maxsize=512)
def _one_op(prim, params: tuple):
    kw = dict(params)
    return jit(lambda *xs: prim.bind(*xs, **kw))


hooks.typed_eager = _sharded_eager
hooks.typed_types = frozenset({ShardedArray})
