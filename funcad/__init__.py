"""funcad: composable function transformations for NumPy programs.

>>> import funcad, funcad.numpy as fnp
>>> funcad.grad(fnp.tanh)(0.0)
1.0
"""
from . import numpy, tree_util, lax  # noqa: F401  (numpy installs tracer methods)
from .core import (ClosedJaxpr, ConcretizationError, FuncadError, FuncadTypeError, Jaxpr,
                   ShapeDtypeStruct, TracerLeakError, eval_jaxpr)
from .core.avals import float0
from .primitives.elementwise import stop_gradient
from .transforms.api import (grad, jvp, linear_transpose, linearize, make_jaxpr, value_and_grad, vjp)
from .transforms.custom import custom_jvp, custom_vjp
from .transforms.checkpoint import checkpoint, remat
from .transforms.jacobians import hessian, jacfwd, jacobian, jacrev
from .transforms.vmap import vmap
from .transforms.passes import optimize
from .transforms.jit import device_put, jit
from .lowering.array import Array
from .lowering.xla import BackendError
from .lowering.python_source import to_python
from . import viz  # noqa: F401  (graphviz is imported only when drawing)
from . import config, debug  # noqa: F401  (settings; debug.print and debug_nans)
from .core.errors import MissingRuleError, NaNError, UnsupportedError
from .transforms.jit import clear_caches
from .core.traceback_util import api_boundary as _api_boundary, boundary_transform as _boundary

# Errors leaving the public entry points (and the functions they return) show
# the user's frames only; see funcad/core/traceback_util.py.
(grad, value_and_grad, jvp, vjp, linearize, linear_transpose, vmap, jacfwd, jacrev, jacobian,
 hessian, make_jaxpr, checkpoint) = map(_boundary, (
    grad, value_and_grad, jvp, vjp, linearize, linear_transpose, vmap, jacfwd, jacrev, jacobian,
    hessian, make_jaxpr, checkpoint))
remat = checkpoint
jit = _api_boundary(jit)  # a jitted function's __call__ is a boundary of its own

__version__ = "0.1.0"

__all__ = ["Array", "BackendError", "ClosedJaxpr", "ConcretizationError", "FuncadError",
           "FuncadTypeError", "Jaxpr", "MissingRuleError", "NaNError",
           "ShapeDtypeStruct", "TracerLeakError", "UnsupportedError", "checkpoint",
           "clear_caches", "custom_jvp", "custom_vjp", "device_put", "eval_jaxpr",
           "float0", "grad", "hessian", "jacfwd", "jacobian", "jacrev", "jit", "jvp",
           "linear_transpose", "linearize", "make_jaxpr", "optimize", "remat",
           "stop_gradient", "to_python", "value_and_grad", "vjp", "vmap"]
