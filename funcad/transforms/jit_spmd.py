"""jit over several devices: SPMD programs that XLA's partitioner splits.

A jitted call becomes an SPMD program when `in_shardings`/`out_shardings` are
given, an argument is a sharded `Array`, or the function constrains a layout
(`with_sharding_constraint`). The program is lowered once with a sharding
annotation per input and output (unspecified inputs are replicated;
unspecified outputs are laid out as XLA chooses), compiled for a device
assignment of `num_partitions` devices, and run on per-device buffers; XLA
inserts the collectives.
"""
from __future__ import annotations

import itertools
from typing import NamedTuple, Sequence

import numpy as np

from ..core.avals import ShapedArray, float0
from ..core.errors import FuncadValueError
from ..core.ir import ClosedJaxpr, Jaxpr
from ..core.typed_sharding import concrete
from ..core.sharding import (_trimmed, Mesh, NamedSharding, PartitionSpec, Sharding, SingleDeviceSharding,
                             context_mesh, hlo_sharding)
from ..lowering import spmd, xla
from ..lowering.partitioning import Annotator, use_shardy
from ..lowering.spmd import put, wrap
from ..lowering.stablehlo import Partitioning, lower_jaxpr
from ..primitives.sharding import sharding_constraint_p
from .debugging import hoist_prints
from . import inspect_sharding
from .passes import optimize


# ------------------------------------------------------------------ layouts ----

# prim -> params -> the shardings an equation of it places values on (shard_map's
# mesh): a program holding one is an SPMD program over those devices.
program_shardings: dict = {}


def _constraints(jaxpr: Jaxpr, seen=None):
    """The shardings of every with_sharding_constraint in a jaxpr, nested ones included,
    and those of the types of its values (sharding in types), once each."""
    seen = set() if seen is None else seen
    for v in [*jaxpr.invars, *jaxpr.constvars, *jaxpr.outvars]:
        if v.aval._sharding is not None and v.aval._sharding not in seen:
            seen.add(v.aval._sharding)
            yield concrete(v.aval._sharding)
    for eqn in jaxpr.eqns:
        for v in eqn.outvars:
            if v.aval._sharding is not None and v.aval._sharding not in seen:
                seen.add(v.aval._sharding)
                yield concrete(v.aval._sharding)
        if eqn.prim is sharding_constraint_p:
            yield eqn.params["sharding"]
        elif eqn.prim in program_shardings:
            yield from program_shardings[eqn.prim](eqn.params)
            continue
        for p in eqn.params.values():
            for sub in (p if isinstance(p, (tuple, list)) else (p,)):
                if isinstance(sub, ClosedJaxpr):
                    yield from _constraints(sub.jaxpr, seen)
                elif isinstance(sub, Jaxpr):
                    yield from _constraints(sub, seen)


def constrains(closed: ClosedJaxpr) -> bool:
    return next(_constraints(closed.jaxpr), None) is not None


def _assignment(shardings: Sequence) -> tuple:
    """The devices of the program in partition order: those of its first
    multi-device sharding (all must share them, as in JAX)."""
    known = [s for s in shardings if s is not None]
    ref = max(known, key=lambda s: s.num_devices)
    assignment = ref._device_assignment
    for s in known:
        if s.num_devices > 1 and s._device_assignment != assignment:
            raise FuncadValueError(
                f"jit got shardings over different device lists: {ref!r} and {s!r}; all "
                "arguments, constraints and outputs of one program must use the same mesh devices "
                "(in the same order). device_put the arguments onto one mesh first")
        if s.num_devices == 1 and len(assignment) > 1 and s._device_assignment[0] not in assignment:
            raise FuncadValueError(f"jit got {s!r}, whose device is not among the program's "
                                   f"devices {assignment}")
    return tuple(assignment)


def _replicated(assignment) -> Sharding:
    if len(assignment) == 1:
        return SingleDeviceSharding(assignment[0])
    return NamedSharding(Mesh(np.array(assignment, dtype=object), ("_devices",)), PartitionSpec())


# ---------------------------------------------------------------- programs ----

class SpmdLowering(NamedTuple):
    lowered: object        # stablehlo.Lowered
    prints: object         # debug prints hoisted out (or None)
    assignment: tuple      # partition i runs on assignment[i]
    backend: str
    in_shardings: list     # resolved: unspecified inputs replicated
    out_shardings: list    # None where XLA chooses
    candidates: list       # every sharding named by the program, to name XLA's choices
    shardy: bool           # annotated for (and compiled with) Shardy, else GSPMD


def lower_spmd(closed: ClosedJaxpr, name: str, backend: str | None, in_shardings: Sequence,
               out_shardings: Sequence, donated=()) -> SpmdLowering:
    """Lower a jaxpr as one SPMD program with a sharding annotation per input and output."""
    closed, prints = hoist_prints(closed)
    closed = optimize(closed)
    n_out = len(closed.out_avals)
    out_shardings = list(out_shardings) + [None] * (n_out - len(out_shardings))
    meshes = [s.mesh for s in in_shardings if isinstance(s, NamedSharding)]
    # an output whose type has a sharding is laid out so (sharding in types)
    out_shardings = [s if s is not None or a._sharding is None else concrete(a._sharding, *meshes)
                     for s, a in zip(out_shardings, closed.out_avals)]
    constraints = list(_constraints(closed.jaxpr))
    known = list(in_shardings) + out_shardings + constraints
    if not any(s is not None for s in known):
        known = [SingleDeviceSharding(xla.get_device(backend))]
    assignment = _assignment(known)
    backend = assignment[0].platform if assignment[0].platform in ("cpu", "gpu") else \
        (backend or xla.default_backend())
    ins = [s or _replicated(assignment) for s in in_shardings]
    annotator = Annotator(assignment, use_shardy())
    partitioning = Partitioning(annotator, tuple(in_shardings), tuple(out_shardings))
    lowered = lower_jaxpr(closed, name, donated, partitioning=partitioning,
                          platform="cpu" if assignment[0].platform == "cpu" else "gpu")
    candidates = [s for s in list(in_shardings) + out_shardings + constraints if s is not None]
    return SpmdLowering(lowered, prints, assignment, backend, ins, out_shardings, candidates,
                        annotator.shardy)


class SpmdExecutable:
    """A jaxpr compiled as one SPMD program over several devices."""

    def __init__(self, closed: ClosedJaxpr, name: str, backend: str | None,
                 in_shardings: Sequence, out_shardings: Sequence, donated=()):
        with inspect_sharding.collect() as inspected:
            lo = lower_spmd(closed, name, backend, in_shardings, out_shardings, donated)
            lowered, assignment, self.prints = lo.lowered, lo.assignment, lo.prints
            self.assignment, self.in_shardings, self.text = assignment, lo.in_shardings, lowered.text
            self.exe = spmd.compile_spmd(lowered.text, assignment, lo.backend,
                                         [s is None for s in lo.out_shardings],
                                         cache=not inspected, shardy=lo.shardy,
                                         host_callbacks=lowered.host_callbacks)
        self.in_avals, self.out_avals = lowered.in_avals, lowered.out_avals
        chosen = spmd.output_shardings(self.exe, len(self.out_avals), assignment)
        # Where XLA chose a layout the program names, keep that sharding object,
        # so the result flows into the next call without resharding.
        # (a result whose type has no sharding is named on no mesh with Explicit axes)
        untyped = [c for c in lo.candidates
                   if not (isinstance(c, NamedSharding) and c.mesh.explicit_axes)]
        self.out_shardings = [s or _same_as(c, len(a.shape), untyped if a._sharding is None
                                            else lo.candidates, assignment)
                              for s, c, a in zip(lo.out_shardings, chosen, self.out_avals)]
        # funcad.debug.inspect_array_sharding: the partitioner's layouts, named as outputs are
        inspect_sharding.fire(inspected, assignment, lambda s, ndim, meshes: _same_as(
            s, ndim, lo.candidates, assignment, meshes))
        rep = _replicated(assignment)
        self.const_bufs = [put(c, rep) for c in lowered.const_args]
        real = [ShapedArray(a.shape, np.bool_ if a.dtype == float0 else a.dtype)
                for a in self.out_avals]
        self.run = spmd.runner(self.exe, real, self.out_shardings, bool(lowered.host_callbacks))

    def __call__(self, args: Sequence) -> list:
        bufs = self.const_bufs + [put(x, s, a) for x, s, a in
                                  zip(args, self.in_shardings, self.in_avals)]
        raw = self.run(bufs)
        outs = [np.zeros(a.shape, float0) if a.dtype == float0 else wrap(b, a, s)
                for b, a, s in zip(raw, self.out_avals, self.out_shardings)]
        return outs if self.prints is None else self.prints.emit(outs)


def _same_as(chosen: Sharding, ndim: int, candidates, assignment, meshes=()) -> Sharding:
    """XLA's layout `chosen` (of a rank-`ndim` value) as one of the `candidates`, or
    else on one of `meshes`, the mesh of a candidate or the context mesh (as JAX
    names it), or else as it is."""
    text = hlo_sharding(chosen, ndim, assignment)
    for c in candidates:
        try:
            if hlo_sharding(c, ndim, assignment) == text:
                if isinstance(c, NamedSharding) and c.spec and c.spec[-1] is None:
                    # (equal to c; JAX names XLA's choice without trailing Nones)
                    return NamedSharding(c.mesh, PartitionSpec(*_trimmed(c.spec)))
                return c
        except FuncadValueError:  # a candidate of another rank
            continue
    meshes = dict.fromkeys([*meshes, *(c.mesh for c in candidates if isinstance(c, NamedSharding)),
                            *([context_mesh()] if context_mesh() is not None else [])])
    for mesh in meshes:
        names = mesh.axis_names
        # Each mesh axis splits one dimension or none; (ndim + 1) ** n_axes tries.
        for choice in itertools.product(range(ndim + 1), repeat=len(names)):
            parts = [tuple(a for a, d in zip(names, choice) if d == i) for i in range(ndim)]
            while parts and not parts[-1]:  # JAX names XLA's choice without trailing Nones
                parts.pop()
            spec = PartitionSpec(*[p[0] if len(p) == 1 else (p or None) for p in parts])
            s = NamedSharding(mesh, spec)
            if s._device_assignment == tuple(assignment) and hlo_sharding(s, ndim, assignment) == text:
                return s
    return chosen
