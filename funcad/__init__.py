"""funcad: composable function transformations for NumPy programs.

>>> import funcad, funcad.numpy as fnp
>>> funcad.grad(fnp.tanh)(0.0)
1.0
"""
from . import numpy, tree_util, lax  # noqa: F401  (numpy installs tracer methods)
from .core import (ClosedJaxpr, ConcretizationError, FuncadError, FuncadTypeError, Jaxpr,
                   ShapeDtypeStruct, TracerLeakError, eval_jaxpr, make_jaxpr)
from .core.avals import float0
from .primitives.elementwise import stop_gradient
from .transforms.api import (grad, jvp, linear_transpose, linearize, value_and_grad, vjp)
from .transforms.jacobians import hessian, jacfwd, jacobian, jacrev
from .transforms.vmap import vmap

__version__ = "0.1.0"
