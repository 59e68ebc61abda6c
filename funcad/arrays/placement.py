"""Where an array function's result lives: JAX's `device=` and `out_sharding=`.

Eagerly the result is put on that device or sharding (funcad.device_put); under a
transformation it is constrained to the sharding (with_sharding_constraint), and a
plain device there is one JAX's jit also ignores for placement inside a trace
(the computation's device is jit's). A PartitionSpec means one over the mesh of
`funcad.set_mesh`. funcad's mesh axes are Auto ones: the placement is a layout for
XLA, not part of the array's type as on JAX's Explicit axes (see the README).
"""
from __future__ import annotations

from ..core.sharding import PartitionSpec, Sharding
from ..core.trace import Tracer
from ..primitives.sharding import with_sharding_constraint
from ..lowering.runtime import device_put


def place(x, device=None, out_sharding=None, *, name: str = "this function"):
    """`x` placed as `device` or `out_sharding` says (at most one of them; both None: `x`)."""
    if device is None and out_sharding is None:
        return x
    if device is not None and out_sharding is not None:
        raise ValueError(f"{name}: only one of `device` and `out_sharding` may be given, got "
                         f"device={device!r} and out_sharding={out_sharding!r}")
    target = device if device is not None else out_sharding
    if not (isinstance(target, (Sharding, PartitionSpec)) or hasattr(target, "platform")):
        arg = "device" if device is not None else "out_sharding"
        raise TypeError(f"{name}: `{arg}` must be a Device, a Sharding or a PartitionSpec, got {target!r}")
    if isinstance(x, Tracer):
        return with_sharding_constraint(x, target) if not hasattr(target, "platform") else x
    return device_put(x, target)
