"""The API that libraries extend funcad with (JAX's `extend` namespace): primitives
and the jaxpr IR (`core`), wrapped functions (`linear_util`), backends (`backend`),
PRNG building blocks (`random`) and source locations (`source_info_util`: libraries'
files to skip). Rules of primitives are registered in funcad.interpreters.

>>> from funcad.extend import core
>>> core.Primitive("my_op").multiple_results
False
"""
from . import backend, core, linear_util, random, source_info_util

__all__ = ["backend", "core", "linear_util", "random", "source_info_util"]
