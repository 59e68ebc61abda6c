"""The API that libraries extend funcad with (JAX's `extend` namespace): primitives
and the jaxpr IR (`core`), wrapped functions (`linear_util`), backends (`backend`),
lowering of library primitives (`mlir`), PRNG implementations (`random`) and source
locations (`source_info_util`).

>>> from funcad.extend import core
>>> core.Primitive("my_op").multiple_results
False
"""
from . import backend, core, linear_util, random

__all__ = ["backend", "core", "linear_util", "random"]
