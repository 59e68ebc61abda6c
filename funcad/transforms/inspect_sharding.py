"""`funcad.debug.inspect_array_sharding` on traced values: the `inspect_sharding` primitive.

As in JAX, the callback gets the sharding of the value *where it is computed*:
eagerly (and under grad/vmap of eager code) the array's own sharding, at once;
inside `jit` the layout XLA's SPMD partitioner chose for that intermediate,
once, when the program is compiled (not on later calls of the cached program).

Inside an SPMD program the value goes through jaxlib's `InspectSharding`
custom call, whose backend config names a Python function the partitioner
calls with the value's `HloSharding` (`lowering/spmd.inspect_key`); the
partitioner then removes it, so the compiled program is unchanged. Each
inspected value of a program being lowered is an `Inspection` in the list
`collect()` opens; the runtime calls the user's callbacks after compiling
(`fire`), in program order, with the layout named on the program's mesh as
JAX names it (`NamedSharding(mesh, spec)`; inside a `shard_map` body, where
values are per-device, `P()` on its mesh). A one-device program partitions
nothing: its values are on that device (`SingleDeviceSharding`).
"""
from __future__ import annotations

from ..core.trace import sharding_rules as _sharding_rules
from ..core.typed_sharding import BY_SHAPE_RULE as _BY_SHAPE_RULE
import contextlib
import threading
from typing import Callable, Sequence

from ..core.sharding import NamedSharding, PartitionSpec, Sharding, SingleDeviceSharding
from ..core.trace import (Primitive, abstract_eval_rules, batch_rules, impl_rules, jvp_rules,
                          lowering_rules)
from ..lowering.array import is_device_array
from ..lowering.stablehlo import tensor_type
from .passes import register_effect
from ..lowering import xla
from ..lowering.spmd import inspect_key
from ..lowering.spmd import from_hlo_sharding
from ..lowering.spmd import from_op_sharding

__all__ = ["Inspection", "collect", "fire", "inspect_sharding_p", "sharding_of"]

inspect_sharding_p = Primitive("inspect_sharding", multiple_results=True)


def sharding_of(x) -> Sharding:
    """The sharding of a concrete array (host values: the default device's)."""
    sharding = getattr(x, "sharding", None) if is_device_array(x) else None
    if isinstance(sharding, Sharding):
        return sharding
    return SingleDeviceSharding(xla.get_device(None))  # eager values live on the default device


def _impl(x, *, callback):
    callback(sharding_of(x))
    return []


def _batch(vals, dims, *, axis_size, callback):
    # the batched value is inspected once, batch axis included (as JAX does)
    inspect_sharding_p.bind(vals[0], callback=callback)
    return [], []


impl_rules[inspect_sharding_p] = _impl
abstract_eval_rules[inspect_sharding_p] = lambda x, *, callback: []
_sharding_rules[inspect_sharding_p] = _BY_SHAPE_RULE  # no results
jvp_rules[inspect_sharding_p] = lambda primals, tangents, **p: (inspect_sharding_p.bind(*primals, **p), [])
batch_rules[inspect_sharding_p] = _batch
register_effect(inspect_sharding_p)  # no outputs: the passes must keep it


# -------------------------------------------------------------- lowering ----

class Inspection:
    """One inspected value of a program being lowered; `hlo` is the partitioner's
    HloSharding for it (None until compiled, and in a one-device program)."""

    __slots__ = ("callback", "ndim", "mesh", "hlo", "hook")

    def __init__(self, callback: Callable, ndim: int, mesh):
        self.callback, self.ndim, self.mesh, self.hlo = callback, ndim, mesh, None
        self.hook = self._record  # kept alive here: XLA holds only its address

    def _record(self, hlo_sharding) -> None:
        self.hlo = hlo_sharding


class _Collecting(threading.local):
    def __init__(self):
        self.stack: list = []


_collecting = _Collecting()


@contextlib.contextmanager
def collect():
    """Collect the `Inspection`s of the programs lowered inside the block (a list)."""
    found: list = []
    _collecting.stack.append(found)
    try:
        yield found
    finally:
        _collecting.stack.pop()


def _lowering(lctx, x, *, callback):
    if not _collecting.stack:  # lowered without being compiled here: nothing to report
        return []
    manual = getattr(lctx.module, "manual", None)
    rec = Inspection(callback, len(x.aval.shape), manual[-1].mesh if manual else None)
    _collecting.stack[-1].append(rec)
    assignment = lctx.module.assignment
    if assignment is None or len(assignment) == 1:
        return []  # one device: no partitioner runs; `fire` reports the device
    t = tensor_type(x.aval)
    lctx.lines.append(
        " " * lctx.indent + f'{lctx.module.fresh()} = "stablehlo.custom_call"({x.name}) '
        f'<{{api_version = 1 : i32, backend_config = "{inspect_key(rec.hook)}", '
        f'call_target_name = "InspectSharding", has_side_effect = true}}> : ({t}) -> {t}')
    return []


lowering_rules[inspect_sharding_p] = _lowering


def fire(found: Sequence[Inspection], assignment: Sequence, name: Callable | None = None) -> None:
    """Call each inspection's callback, in program order, with its value's sharding:
    `name(sharding, ndim, meshes)` names a partitioner's layout on the program's
    meshes (jit_spmd's naming); without it (a one-device program) the device's."""
    for rec in found:
        if len(assignment) == 1 or name is None:
            sharding = SingleDeviceSharding(assignment[0])
            if name is not None:
                sharding = name(sharding, rec.ndim, [rec.mesh] if rec.mesh else [])
        elif rec.hlo is None:
            continue  # the partitioner never saw it (XLA removed the value first)
        elif rec.hlo.is_manual():  # a per-device value of a shard_map body
            sharding = NamedSharding(rec.mesh, PartitionSpec()) if rec.mesh is not None else \
                name(_replicated_hlo(assignment), rec.ndim, [])
        else:
            sharding = name(from_hlo_sharding(rec.hlo, assignment), rec.ndim,
                            [rec.mesh] if rec.mesh else [])
        rec.callback(sharding)


def _replicated_hlo(assignment):
    return from_op_sharding(None, assignment)
