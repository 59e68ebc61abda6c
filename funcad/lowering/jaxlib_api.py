"""The jax and jaxlib modules funcad's backend uses, imported in this one place.

Nothing imports this module at funcad's import time: `xla._load()` imports it when
the backend is first used, so `import funcad` never loads jaxlib (importing jax
loads all of these anyway). Where jaxlib's releases name a module differently the
fallback is here, next to the name funcad uses; a part that a release lacks is None
and its user says so (`lapack`). (The profiler's bindings are in lowering/profiler.py,
which only `funcad.profiler` loads.)
"""
import jax
import jax.core
from jaxlib import xla_client
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import chlo, sdy, stablehlo

try:
    from jaxlib.mlir._mlir_libs import _jax_mlir_ext as mlir_dialects
except ImportError:  # jaxlib 0.6 names the module differently
    from jaxlib.mlir._mlir_libs import register_jax_dialects as mlir_dialects

try:
    import jaxlib._jax as extension  # jaxlib >= 0.7
except ImportError:
    from jaxlib import xla_extension as extension  # jaxlib 0.6

try:
    from jaxlib.cpu import _lapack as lapack
except ImportError:
    try:
        from jaxlib import lapack as _lapack_module
        lapack = _lapack_module._lapack
    except (ImportError, AttributeError):
        lapack = None  # lowering/lapack.py raises BackendError when a program needs it

__all__ = ["chlo", "extension", "ir", "jax", "lapack", "mlir_dialects", "sdy", "stablehlo", "xla_client"]
