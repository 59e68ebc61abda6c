"""JAX's error classes (`jax.errors`), as the funcad errors raised where JAX raises them.

Each name is funcad's own class (see `funcad.core.errors`), so `except
funcad.errors.TracerBoolConversionError:` catches what `except
jax.errors.TracerBoolConversionError:` catches in the same program. funcad's classes
also keep their own bases (a TracerIntegerConversionError is a ConcretizationTypeError
too; UnexpectedTracerError is a RuntimeError too).

>>> import funcad
>>> try:
...     funcad.jit(lambda x: 1.0 if x > 0 else -1.0)(2.0)
... except funcad.errors.TracerBoolConversionError as e:
...     print(type(e).__name__, isinstance(e, funcad.errors.ConcretizationTypeError))
TracerBoolConversionError True

`JaxRuntimeError` is jaxlib's own class (what a jitted program that fails while running
raises, as in JAX; loaded with the backend on first use). `KeyReuseError` is raised only
with `debug_key_reuse` on (see funcad/random/_key_reuse.py). JAX's
`InconclusiveDimensionOperation` (no shape polymorphism) is not here.
"""
from .core.errors import (BaseIndexError as JAXIndexError, BaseTypeError as JAXTypeError,
                          ConcretizationError as ConcretizationTypeError, JaxprTypeError,
                          KeyReuseError, NonConcreteBooleanIndexError, TracerArrayConversionError,
                          TracerBoolConversionError, TracerIntegerConversionError,
                          TracerLeakError as UnexpectedTracerError)
from .core.module_attributes import module_attributes as _module_attributes
from .lowering.xla import runtime_error_class as _runtime_error_class

__all__ = ["ConcretizationTypeError", "JAXIndexError", "JAXTypeError", "JaxprTypeError", "KeyReuseError",
           "NonConcreteBooleanIndexError", "TracerArrayConversionError", "TracerBoolConversionError",
           "TracerIntegerConversionError", "UnexpectedTracerError", "JaxRuntimeError"]

# JaxRuntimeError is jaxlib's class: importing it starts the backend, so on first use.
__getattr__, __dir__ = _module_attributes(__name__, values={"JaxRuntimeError": _runtime_error_class})
