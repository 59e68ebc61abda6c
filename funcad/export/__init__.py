"""funcad.export: JAX's `jax.export` for funcad's jitted functions.

`export(jit(f))(*specs)` lowers `f` to a StableHLO portable artifact with its calling
convention (an `Exported`); `serialize()` writes jax.export's flatbuffers bytes and
`deserialize` reads them, funcad's and JAX's alike, so exported functions move between
funcad and JAX in both directions. `Exported.call` runs one (also under jit, vmap and
grad; its derivative comes from the exported VJP). Shape polymorphism (symbolic
dimensions) is not supported.

>>> import funcad, numpy as np
>>> exp = funcad.export.export(funcad.jit(lambda x: x * x))(np.ones(3, np.float32))
>>> blob = exp.serialize(vjp_order=1)
>>> f = funcad.export.deserialize(blob)
>>> funcad.grad(lambda x: f.call(x).sum())(np.arange(3, dtype=np.float32))
Array([0., 2., 4.], dtype=float32)
"""
from ._exported import (DisabledSafetyCheck, Exported, default_export_platform, export,
                        maximum_supported_calling_convention_version,
                        minimum_supported_calling_convention_version)
from ._serialization import deserialize  # (and Exported.serialize)
from . import _call  # noqa: F401  (Exported.call)
from ._registry import register_namedtuple_serialization, register_pytree_node_serialization

__all__ = ["DisabledSafetyCheck", "Exported", "default_export_platform", "deserialize", "export",
           "maximum_supported_calling_convention_version", "minimum_supported_calling_convention_version",
           "register_namedtuple_serialization", "register_pytree_node_serialization"]
