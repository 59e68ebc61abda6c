"""The primitives behind multihost_utils' host-local <-> global conversions.

`host_local_array_to_global_array` takes this process's part of an array
(laid out over its devices of the mesh as `pspec` says) to the global array
over the whole mesh; `global_array_to_host_local_array` goes back. Over one
process the two are the identity on values. Both are linear: as JAX's, the
transpose of each is the same primitive on the cotangent. Under `jit` they
lower to the identity (the program already works on global values).
"""
from __future__ import annotations

import math

import numpy as np

from ..core.avals import ShapedArray, aval_of, float0
from ..core.errors import FuncadValueError
from ..core.sharding import NamedSharding, PartitionSpec, _axes, batching
from ..core.trace import (Primitive, abstract_eval_rules, batch_rules, hooks, impl_rules, lowering_rules,
                          sharding_rules)
from ._base import deflinear, defpython
from ..lowering import spmd
from ..lowering.array import is_device_array

__all__ = ["global_to_local_p", "local_to_global_p", "global_shape", "local_shape"]

local_to_global_p = Primitive("host_local_array_to_global_array")
global_to_local_p = Primitive("global_array_to_host_local_array")


def _check_spec(pspec):
    if pspec is None:
        raise FuncadValueError("`None` is not a valid input to the pspecs argument. Please use "
                               "funcad.sharding.PartitionSpec() if you wanted to replicate your input.")


def _rescale(shape, pspec, mesh, divide_by, multiply_by, what):
    """shape with each dimension that pspec splits divided by its axes' sizes in
    `divide_by` and multiplied by those in `multiply_by`."""
    shape = list(shape)
    if len(pspec) > len(shape):
        raise FuncadValueError(f"{what}: the PartitionSpec {pspec} has {len(pspec)} entries, more "
                               f"than the {len(shape)} dimensions of the value (shape "
                               f"{tuple(shape)}); give at most one entry per dimension")
    for i, part in enumerate(pspec):
        for name in _axes(part):
            if name not in mesh.axis_names:
                raise FuncadValueError(f"{what}: the PartitionSpec {pspec} names the axis "
                                       f"{name!r}, which the mesh {mesh} does not have")
        lo = math.prod(divide_by[n] for n in _axes(part))
        if shape[i] % lo:
            raise FuncadValueError(f"{what}: dimension {i} of shape {tuple(shape)} has size "
                                   f"{shape[i]}, which the mesh axes {_axes(part)} of {pspec} "
                                   f"(size {lo}) do not divide")
        shape[i] = shape[i] // lo * math.prod(multiply_by[n] for n in _axes(part))
    return tuple(shape)


def global_shape(local, mesh, pspec) -> tuple:
    """The global shape whose part on this process's devices has shape `local`."""
    return _rescale(local, pspec, mesh, mesh.local_mesh.shape, mesh.shape,
                    "host_local_array_to_global_array")


def local_shape(glob, mesh, pspec) -> tuple:
    """The shape of this process's part of a global array of shape `glob`."""
    return _rescale(glob, pspec, mesh, mesh.shape, mesh.local_mesh.shape,
                    "global_array_to_host_local_array")


def _fully_addressable(x) -> bool:
    return all(d.process_index == d.client.process_index() for d in x.sharding.device_set)


def _host(x):
    """x as a NumPy value of funcad's dtype (float0 as bool zeros, as JAX)."""
    aval = aval_of(x)
    if aval.dtype == float0:
        return np.zeros(aval.shape, np.bool_)
    return np.asarray(x, dtype=aval.dtype)


def _local_to_global_impl(x, *, global_mesh, pspec):
    _check_spec(pspec)
    if is_device_array(x) and not _fully_addressable(x):
        return x  # already global
    host = _host(x)
    local = NamedSharding(global_mesh.local_mesh, pspec)
    index = local.devices_indices_map(host.shape)
    shape = global_shape(host.shape, global_mesh, pspec)
    # contiguous local devices: a device's block of the local part is its block of the whole
    glob = NamedSharding(global_mesh, pspec)
    bufs = [spmd.xla.device_put(np.array(host[index[d]], order="C"), d)
            for d in glob._device_assignment if d.process_index == d.client.process_index()]
    return spmd.wrap(spmd.assemble(shape, glob, bufs), ShapedArray(shape, host.dtype), glob)


def _global_to_local_impl(x, *, global_mesh, pspec):
    _check_spec(pspec)
    if is_device_array(x) and _fully_addressable(x):
        return x  # already host local
    glob = NamedSharding(global_mesh, pspec)
    local = NamedSharding(global_mesh.local_mesh, pspec)
    aval = aval_of(x).update(weak_type=False)
    shape = local_shape(aval.shape, global_mesh, pspec)
    if not is_device_array(x):  # a NumPy value (as under AD): take this process's blocks
        host = _host(x)
        index = glob.devices_indices_map(host.shape)
        bufs = [spmd.xla.device_put(np.array(host[index[d]], order="C"), d)
                for d in local._device_assignment]
    else:
        if x.sharding.devices_indices_map(aval.shape) != glob.devices_indices_map(aval.shape):
            # multihost_utils reshards before binding; a global array cannot be moved here
            raise FuncadValueError(
                f"global_array_to_host_local_array: the array is laid out as {x.sharding}, not as "
                f"{glob}; reshard it first (funcad.jit(lambda v: v, out_shardings=...))")
        by_device = {d: b for d, _, b in spmd.shards(x._buf)}
        bufs = [by_device[d] for d in local._device_assignment]
    return spmd.wrap(spmd.assemble(shape, local, bufs), ShapedArray(shape, aval.dtype), local)


def _local_to_global_batch(vals, dims, *, axis_size, global_mesh, pspec):
    # as JAX: the batch dimension is split over vmap's spmd_axis_name, if any
    (x,), (d,) = vals, dims
    if d is not None:
        names = batching.spmd_axis_name
        entry = None if not names else (names[0] if len(names) == 1 else tuple(names))
        spec = list(pspec) + [None] * max(0, d - len(pspec))
        spec.insert(d, entry)
        pspec = PartitionSpec(*spec)
    return local_to_global_p.bind(x, global_mesh=global_mesh, pspec=pspec), d


def _global_to_local_batch(vals, dims, *, axis_size, global_mesh, pspec):
    # as JAX's (defvectorized): the same spec on the batched operand
    (x,), (d,) = vals, dims
    return global_to_local_p.bind(x, global_mesh=global_mesh, pspec=pspec), d


def _identity_lowering(name):
    def lower(ctx, x, *, global_mesh, pspec):
        out = abstract_eval_rules[ctx_prim[name]](x.aval, global_mesh=global_mesh, pspec=pspec)
        if tuple(out.shape) != tuple(x.aval.shape):
            raise FuncadValueError(
                f"{name} inside jit: over several processes the local part {x.aval.str_short()} "
                f"and the global array {out.str_short()} differ, and a jitted program works on "
                f"global arrays only; call {name} outside jit and pass the result in")
        return x
    return lower


ctx_prim = {p.name: p for p in (local_to_global_p, global_to_local_p)}

impl_rules[local_to_global_p] = _local_to_global_impl
impl_rules[global_to_local_p] = _global_to_local_impl
hooks.on_device_impls.update((local_to_global_p, global_to_local_p))  # they take device arrays
abstract_eval_rules[local_to_global_p] = lambda x, *, global_mesh, pspec: ShapedArray(
    global_shape(x.shape, global_mesh, pspec), x.dtype)
abstract_eval_rules[global_to_local_p] = lambda x, *, global_mesh, pspec: ShapedArray(
    local_shape(x.shape, global_mesh, pspec), x.dtype)
# On Explicit axes the result is unsplit in its type, as JAX's (the layout is the program's)
sharding_rules[local_to_global_p] = sharding_rules[global_to_local_p] = \
    lambda x, *, global_mesh, pspec: (None,) * len(x.shape)
deflinear(local_to_global_p, lambda ct, x, **params: [local_to_global_p.bind(ct, **params)])
deflinear(global_to_local_p, lambda ct, x, **params: [global_to_local_p.bind(ct, **params)])
batch_rules[local_to_global_p] = _local_to_global_batch
batch_rules[global_to_local_p] = _global_to_local_batch
lowering_rules[local_to_global_p] = _identity_lowering(local_to_global_p.name)
lowering_rules[global_to_local_p] = _identity_lowering(global_to_local_p.name)
defpython(local_to_global_p, "{0}")
defpython(global_to_local_p, "{0}")
