"""Helpers of the tests that run one program in funcad and in JAX on Explicit mesh
axes: each case is `f(lib, *operands)` with `lib` the namespaces of one side, and
operands given as (value, spec) pairs. `eval_shape` types them on an AbstractMesh (no
devices needed); `run` places them on an 8-device mesh (tests/multidevice.py)."""
from __future__ import annotations

import jax
import jax.numpy as jnp

import funcad
import funcad.numpy as fnp
from funcad.sharding import AbstractMesh, AxisType, NamedSharding, PartitionSpec

AMESH = AbstractMesh((2, 4), ("X", "Y"), (AxisType.Explicit,) * 2)
JAMESH = jax.sharding.AbstractMesh((2, 4), ("X", "Y"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)
_MESHES: dict = {}


class Lib:
    """The namespaces a case uses: funcad's or JAX's, and the mesh out_sharding= names."""

    def __init__(self, jax_side: bool, mesh=None):
        self.jax = jax_side
        self.np = jnp if jax_side else fnp
        self.lax = jax.lax if jax_side else funcad.lax
        self.top = jax if jax_side else funcad
        self.P = jax.sharding.PartitionSpec if jax_side else PartitionSpec
        self.NS = jax.sharding.NamedSharding if jax_side else NamedSharding
        self.mesh = mesh

    def s(self, *spec, **kw):
        return self.NS(self.mesh, self.P(*spec, **kw))


def meshes() -> tuple:
    """funcad's and JAX's (2, 4) Explicit meshes over 8 devices, made once."""
    if not _MESHES:
        _MESHES["f"] = funcad.make_mesh((2, 4), ("X", "Y"), axis_types=(AxisType.Explicit,) * 2)
        _MESHES["j"] = jax.make_mesh((2, 4), ("X", "Y"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)
    return _MESHES["f"], _MESHES["j"]


def specs(tree) -> list:
    """The spec of each leaf's sharding (ShapeDtypeStructs or avals), one entry per dimension."""
    out = []
    for leaf in jax.tree_util.tree_leaves(tree):
        s = leaf.sharding
        # JAX's spec refuses iteration when it has unreduced axes: its partitions
        spec = () if s is None else s.spec.partitions if hasattr(s.spec, "partitions") else tuple(s.spec)
        out.append(tuple(p[0] if isinstance(p, tuple) and len(p) == 1 else p for p in spec)
                   + (None,) * (len(leaf.shape) - len(spec)))
    return out


def eval_shape(jax_side: bool, f, operands):
    """f's result types with the operands typed on the AbstractMesh (a spec of None: untyped)."""
    lib = Lib(jax_side, JAMESH if jax_side else AMESH)
    args = [lib.top.ShapeDtypeStruct(a.shape, a.dtype, sharding=None if spec is None else lib.s(*spec))
            for a, spec in operands]
    return lib.top.eval_shape(lambda *a: f(lib, *a), *args)


def run(jax_side: bool, f, operands, wrap=None):
    """jit(f) (or jit(wrap(lib, f))) on the operands placed on the 8-device mesh."""
    fmesh, jmesh = meshes()
    lib = Lib(jax_side, jmesh if jax_side else fmesh)
    args = [lib.top.device_put(a, lib.s(*spec)) if spec is not None else a for a, spec in operands]
    g = lambda *a: f(lib, *a)  # noqa: E731
    return lib.top.jit(g if wrap is None else wrap(lib, g))(*args)
