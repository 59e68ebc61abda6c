"""The jit runtime: compiled executables, host-to-device transfers, the memo.

An `Executable` is one compiled jaxpr on one device, with its constant
buffers, input transfers and result handlers prebuilt, so that a call is a
list comprehension and one `execute`. Small NumPy inputs travel packed in
one transfer (packing.py). `device_put` copies arrays (or pytrees) to a
device or a sharding; `memo` keeps data derived from a jaxpr (its
executables, its jvp/transpose/batched jaxprs) as long as the jaxpr lives.
Tracing, caching by signature and the `jit_p` rules are transforms/jit.py's.
"""
from __future__ import annotations

import logging
import time
import weakref
from typing import Callable, Sequence

import numpy as np

from . import packing, transfer_guard, xla
from .array import Array, is_device_array
from .spmd import device_put_sharded
from .stablehlo import lower_jaxpr
from ..core import monitoring, options as _options
from ..core.avals import ShapedArray, aval_of, float0
from ..core.errors import FuncadTypeError
from ..core.ir import ClosedJaxpr
from ..core.pytree import tree_flatten, tree_map, tree_unflatten
from ..core.sharding import PartitionSpec, Sharding, SingleDeviceSharding, flat_shardings
from ..core.trace import Tracer

_log = logging.getLogger("funcad")

__all__ = ["Executable", "compiled_cost", "compiled_memory", "compiled_text", "device_put",
           "guard_inputs", "host_mask", "memo", "to_buffer"]


class Executable:
    """A compiled jaxpr: XLA executable, constant buffers and result handlers.

    `host[i]` says input i is expected to come from the host (NumPy); small
    host inputs then travel packed in one transfer (see lowering/packing.py).
    """

    __slots__ = ("exe", "device", "const_bufs", "handlers", "in_avals", "out_avals", "text",
                 "has_float0", "puts", "run", "prints", "effects", "layout", "packed_idx", "rest",
                 "put_packed")

    def __init__(self, closed: ClosedJaxpr, name: str, backend: str | None, donated=(),
                 host: Sequence[bool] | None = None, prints=None):
        # `closed` comes optimized, its debug prints hoisted into extra outputs that
        # `prints.emit` prints after each call (transforms/jit.py prepares it).
        self.prints = prints
        self.layout = None
        if host is not None:
            flags = list(donated) + [False] * (len(host) - len(donated))
            self.layout = packing.plan(closed.in_avals, [
                h and packing.packable(a, d) for h, a, d in zip(host, closed.in_avals, flags)])
        self.device = xla.get_device(backend)
        for d in {v.aval.dtype for v in (*closed.jaxpr.invars, *closed.jaxpr.outvars,
                                         *(o for e in closed.jaxpr.eqns for o in e.outvars))
                  if hasattr(v, "aval")}:
            xla.check_dtype(d)
        with monitoring.timed(monitoring.JAXPR_TO_MLIR_MODULE_EVENT, fun_name=f"jit({name})"):
            lowered = lower_jaxpr(closed, name, donated, self.layout,
                                  platform="cpu" if self.device.platform == "cpu" else "gpu")
        self.text = lowered.text
        if _options.log_compiles:
            _log.warning("Compiling jit(%s) with global shapes and types [%s].", name,
                         ", ".join(a.str_short() for a in closed.in_avals))
            start = time.perf_counter()
        self.exe = xla.compile_text(lowered.text, backend, lowered.host_callbacks, fun_name=f"jit({name})")
        if _options.log_compiles:
            _log.warning("Finished XLA compilation of jit(%s) in %.6f sec", name, time.perf_counter() - start)
        self.in_avals = lowered.in_avals
        self.out_avals = lowered.out_avals
        self.const_bufs = [to_buffer(c, aval_of(c), self.device) for c in lowered.const_args]
        self.handlers = xla.result_handlers(
            [ShapedArray(a.shape, np.bool_ if a.dtype == float0 else a.dtype) for a in self.out_avals],
            self.device)
        self.has_float0 = any(a.dtype == float0 for a in self.out_avals)
        self.puts = [_putter(a, self.device) for a in self.in_avals]
        self.effects = bool(lowered.host_callbacks)
        self.run = xla.runner(self.exe, self.handlers, self.effects)
        if self.layout is not None:
            self.packed_idx = tuple(s.index for s in self.layout.slots)
            packed = set(self.packed_idx)
            self.rest = tuple(i for i in range(len(self.in_avals)) if i not in packed)
            self.put_packed = xla.host_putter((self.layout.nbytes,), np.uint8, self.device)

    def _simple_call(self):
        """The hot path for the common case (no packing, float0 or prints), with
        everything it reads bound as locals: each attribute read costs ~30 ns."""
        consts, puts, dev, avals = self.const_bufs, self.puts, self.device, self.out_avals
        run, handlers = self.exe.execute_sharded, self.handlers
        if handlers is None or consts:
            run_list = self.run

            def call(args):
                bufs = consts + [x._buf if type(x) is Array and x._device is dev else put(x)
                                 for x, put in zip(args, puts)]
                return [Array(b, a, dev) for b, a in zip(run_list(bufs), avals)]
        elif len(avals) == 1:
            a0 = avals[0]

            def call(args):
                raw = run([x._buf if type(x) is Array and x._device is dev else put(x)
                           for x, put in zip(args, puts)]).consume_with_handlers(handlers)
                return [Array(raw[0], a0, dev)]
        else:
            def call(args):
                raw = run([x._buf if type(x) is Array and x._device is dev else put(x)
                           for x, put in zip(args, puts)]).consume_with_handlers(handlers)
                return [Array(b, a, dev) for b, a in zip(raw, avals)]
        return call

    def fast_call(self) -> Callable:
        """args -> outputs, the quickest way this executable can run."""
        if self.layout is None and not self.has_float0 and self.prints is None and not self.effects:
            return self._simple_call()
        return self

    def __call__(self, args: Sequence) -> list:
        dev = self.device
        if self.layout is None:
            bufs = self.const_bufs + [x._buf if type(x) is Array and x._device is dev else put(x)
                                      for x, put in zip(args, self.puts)]
        else:
            bufs = self.const_bufs + [
                self.put_packed(packing.pack(self.layout, [args[i] for i in self.packed_idx]))]
            puts = self.puts
            for i in self.rest:
                x = args[i]
                bufs.append(x._buf if type(x) is Array and x._device is dev else puts[i](x))
        raw = self.run(bufs)
        if self.has_float0:
            outs = [np.zeros(a.shape, float0) if a.dtype == float0 else Array(b, a, dev)
                    for b, a in zip(raw, self.out_avals)]
        else:
            outs = [Array(b, a, dev) for b, a in zip(raw, self.out_avals)]
        return outs if self.prints is None else self.prints.emit(outs)


def _putter(aval, device):
    """x -> device buffer for one input: a direct transfer for NumPy arrays of the
    right dtype, the general conversion otherwise."""
    if aval.dtype == float0:
        return lambda x: to_buffer(x, aval, device)
    return xla.host_putter(aval.shape, aval.dtype, device, lambda x: to_buffer(x, aval, device))


def to_buffer(x, aval, device):
    """A device buffer holding x (converted to aval's dtype) on `device`."""
    if type(x) is Array:
        if x._device is device:
            return x._buf
        x = x._value(guarded=False)  # another device: through the host (guarded by the caller)
    elif isinstance(x, Tracer):
        raise FuncadTypeError(f"jit got a traced value {x!r} where a concrete array was expected")
    if aval.dtype == float0:
        return xla.device_put(np.zeros(aval.shape, np.bool_), device)
    x = np.asarray(x)
    if x.dtype != aval.dtype:
        x = x.astype(aval.dtype)
    return xla.device_put(x, device)


def device_put(x, device=None, *, src=None, donate=False, may_alias=None) -> Array:
    """Copy an array (or each leaf of a pytree) to a device: `device` is a device,
    a `funcad.sharding.Sharding` (a tree of them for a tree), a backend name, or
    None for the default backend's first device.

    may_alias: None or True lets an array already placed as asked be returned as it
    is; False always makes a copy. donate: x's buffers may be reused (it implies a
    copy, as in JAX; not with may_alias=True). On CPU JAX deletes nothing on a donating
    device_put, and funcad, which runs in one process, neither: both keep x. src: where
    x lives, for JAX's transfers between processes; funcad has one process and reads
    it from x, so it changes nothing, as JAX on one host.

    >>> import funcad, numpy as np
    >>> funcad.device_put(np.arange(3.0))
    Array([0., 1., 2.], dtype=float64)
    >>> x = funcad.device_put(np.ones(2))
    >>> funcad.device_put(x) is x, funcad.device_put(x, may_alias=False) is x
    (True, False)
    """
    if donate and may_alias:
        raise ValueError("may_alias and donate cannot be True at the same time.")
    if src is not None and not (isinstance(src, (Sharding, PartitionSpec)) or hasattr(src, "platform")):
        raise TypeError(f"device_put: src must be a Device or a Sharding, got {src!r}")
    if may_alias is False or donate:  # a fresh buffer (through the host), placed as asked
        if device is None:  # ... where each array is now
            return tree_map(lambda v: device_put(np.array(v), getattr(v, "sharding", None))
                            if isinstance(v, Array) else device_put(v), x)
        x = tree_map(lambda v: np.array(v) if isinstance(v, Array) else v, x)
    if _options.transfer_guards:
        with transfer_guard.explicit():
            return _device_put(x, device)
    return _device_put(x, device)


def _device_put(x, device):
    if isinstance(device, Sharding) or not (device is None or isinstance(device, str)
                                            or hasattr(device, "platform")):
        leaves, tree = tree_flatten(x)
        shardings = flat_shardings(device, x, "device_put")
        if _options.transfer_guards:
            for v, s in zip(leaves, shardings):
                _guard_put(v, s)
        return tree_unflatten(tree, [device_put_sharded(v, s) for v, s in zip(leaves, shardings)])
    if isinstance(x, Tracer):
        # Inside a trace the value stays where the computation runs: on one device JAX's
        # device_put of a traced value to a device (or to none) is the value itself.
        return x
    if not isinstance(x, (Array, np.ndarray, np.generic, int, float, complex, bool)):
        leaves, tree = tree_flatten(x)
        if len(leaves) == 1 and leaves[0] is x:  # a leaf that is no array
            raise TypeError(f"device_put: argument {x!r} of type {type(x)} is not a valid JAX type; "
                            "pass arrays, Python scalars or pytrees of them")
        return tree_unflatten(tree, [_device_put(v, device) for v in leaves])
    if hasattr(device, "platform"):
        if _options.transfer_guards:
            _guard_put(x, SingleDeviceSharding(device))
        return device_put_sharded(x, SingleDeviceSharding(device))
    device = xla.get_device(device)
    if type(x) is Array and x._device is device:
        return x
    if _options.transfer_guards:
        _guard_put(x, SingleDeviceSharding(device))
    aval = aval_of(x)
    return Array(to_buffer(x, aval, device), aval.update(weak_type=False), device)


def _guard_put(x, sharding) -> None:
    """The transfer guards on one leaf of `device_put` (explicit transfers)."""
    if isinstance(x, Tracer):
        return
    dst = sharding._device if isinstance(sharding, SingleDeviceSharding) else sharding
    if is_device_array(x):
        if x._device is not dst and x._device != dst:
            transfer_guard.device_to_device(x.aval, x._device, dst)
    else:
        transfer_guard.host_to_device(aval_of(x), dst)


def guard_inputs(args, exe) -> None:
    """The transfer guards on a compiled call's inputs (implicit transfers): host values
    go to the device, Arrays of another device are copied over."""
    dst = getattr(exe, "device", None)
    for x in args:
        if isinstance(x, Tracer):
            continue
        if is_device_array(x):
            if dst is not None and type(x) is Array and x._device is not dst:
                transfer_guard.device_to_device(x.aval, x._device, dst)
        else:
            transfer_guard.host_to_device(aval_of(x), dst if dst is not None else exe.in_shardings)


# Derived data (executables, jvp/partial-eval/transpose jaxprs) is memoized on
# the jaxpr object, so it lives exactly as long as the jaxpr.
_memo_table: "weakref.WeakKeyDictionary[ClosedJaxpr, dict]" = weakref.WeakKeyDictionary()


def memo(closed: ClosedJaxpr, key, make: Callable):
    """`make()`, computed once per (jaxpr, key) and kept as long as the jaxpr lives."""
    table = _memo_table.get(closed)
    if table is None:
        table = _memo_table[closed] = {}
    out = table.get(key)
    if out is None:
        out = table[key] = make()
    return out


# -- what XLA made of a program (jit(f).lower(...).compile()'s as_text and analyses) --

def _unless_unimplemented(fn):
    """fn(), or None where the backend does not implement it (as JAX's Compiled)."""
    try:
        return fn()
    except NotImplementedError:
        return None
    except Exception as e:  # jaxlib's runtime error
        if type(e).__name__ in ("XlaRuntimeError", "JaxRuntimeError") and \
                str(e).startswith("UNIMPLEMENTED"):
            return None
        raise


def compiled_text(exe) -> str | None:
    """The optimized HLO text of a jaxlib executable (every module of it)."""
    if hasattr(exe, "get_hlo_text"):
        return _unless_unimplemented(exe.get_hlo_text)
    if not hasattr(exe, "hlo_modules"):
        return None
    return _unless_unimplemented(lambda: "\n\n".join(m.to_string() for m in exe.hlo_modules()))


def compiled_cost(exe) -> dict | None:
    """XLA's cost analysis of a jaxlib executable (flops, bytes accessed, ...)."""
    return _unless_unimplemented(exe.cost_analysis) if hasattr(exe, "cost_analysis") else None


def compiled_memory(exe):
    """XLA's memory statistics of a jaxlib executable (`CompiledMemoryStats`)."""
    if not hasattr(exe, "get_compiled_memory_stats"):
        return None
    return _unless_unimplemented(exe.get_compiled_memory_stats)


def host_mask(leaves) -> tuple:
    """Which arguments come from the host (NumPy arrays, scalars) rather than the device."""
    return tuple(type(x) is not Array and not isinstance(x, Tracer) for x in leaves)


def clear_memo() -> None:
    _memo_table.clear()
