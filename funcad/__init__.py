"""funcad: composable function transformations for NumPy programs.

>>> import funcad, funcad.numpy as fnp
>>> funcad.grad(fnp.tanh)(0.0)
Array(1., dtype=float64, weak_type=True)
"""
from functools import partial as _partial

from . import numpy, tree_util, tree, lax  # noqa: F401  (numpy installs tracer methods)
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
from .transforms.jit import clear_caches, jit
from .transforms import eager_xla as _eager_xla  # noqa: F401  (binds the eager_backend option)
from .lowering.runtime import device_put
from .lowering.array import Array, Shard
from .lowering.xla import BackendError
from .lowering.python_source import to_python
from . import config, debug, distributed, experimental  # noqa: F401  (settings; debug.print and debug_nans)
from .core.errors import MissingRuleError, NaNError, UnsupportedError
from .lowering.devices import (block_until_ready, copy_to_host_async, default_backend, device_count,
                               device_get, devices, effects_barrier, host_count, host_id, host_ids,
                               live_arrays, local_device_count, local_devices, print_environment_info,
                               process_count, process_index, process_indices)
from .transforms.tracing import disable_jit, ensure_compile_time_eval, eval_shape, named_call, named_scope
from .arrays.dtypes import typeof
from .core.config import checking_leaks, transfer_guard
from .core.traceback_util import api_boundary as _api_boundary, boundary_transform as _boundary
from . import sharding  # noqa: F401  (Mesh, NamedSharding, PartitionSpec, ...)
from .sharding import (NamedSharding, PartitionSpec as P, get_abstract_mesh, get_mesh, make_mesh,
                       reshard, set_mesh)
from .lowering.make_array import (make_array_from_callback, make_array_from_process_local_data,
                          make_array_from_single_device_arrays)
from .transforms.closure import closure_convert, custom_gradient
from .debug._pure_callback import pure_callback
from .transforms.shard_map import shard_map
from .transforms.smap import smap
from .transforms.pmap import pmap
from . import ad_checkpoint  # noqa: F401  (checkpoint_name, print_saved_residuals)
from .ad_checkpoint import checkpoint_policies
from . import custom_batching, custom_derivatives  # noqa: F401  (custom_vmap, sequential_vmap; JAX's module)
from .transforms.fwd_and_bwd import fwd_and_bwd
from . import dtypes, errors, typing  # noqa: F401  (JAX's jax.dtypes, jax.errors, jax.typing)
from . import dlpack, stages, version  # noqa: F401  (JAX's jax.dlpack, jax.stages, jax.version)
from .core.errors import InfError
from .lowering.devices import device_class as _device_class
from .core.module_attributes import attribute as _attribute, module_attributes as _module_attributes
globals().update(config.scopes)  # `with funcad.<option>(value):`, one per option declared with a scope

# Errors leaving the public entry points (and the functions they return) show
# the user's frames only; see funcad/core/traceback_util.py.
(grad, value_and_grad, jvp, vjp, linearize, linear_transpose, vmap, jacfwd, jacrev, jacobian,
 hessian, make_jaxpr, checkpoint, shard_map, smap) = map(_boundary, (
    grad, value_and_grad, jvp, vjp, linearize, linear_transpose, vmap, jacfwd, jacrev, jacobian,
    hessian, make_jaxpr, checkpoint, shard_map, smap))
remat = checkpoint
jit = _api_boundary(jit)  # a jitted function's __call__ is a boundary of its own

from .version import __version__, __version_info__  # noqa: E402
from . import ref  # noqa: E402,F401  (JAX's jax.ref: mutable array references)
from .ref._ops import Ref, ds, empty_ref, free_ref, freeze, new_ref  # noqa: E402

# User namespaces, and the sparse-Jacobian transforms (they need scipy.sparse), load on
# first attribute access, as attributes of `funcad` like JAX's, so `import funcad` (and a
# process's cold start) pays only for what the program touches.
# Submodules reachable as attributes after `import funcad` without being imported first, as
# JAX's are (libraries write `jax.interpreters.ad...` after `import jax`); loaded on use.
_LAZY = frozenset({"random", "nn", "scipy", "viz", "ops", "image", "profiler", "flatten_util", "export",
                   "interpreters", "extend", "api_util", "lib", "monitoring", "experimental", "distributed",
                   "dlpack", "stages", "custom_batching", "typing", "ref"})
_SPARSE = frozenset({"SparseMatrix", "hessian_sparsity", "jacobian_sparsity", "sparse_hessian",
                     "sparse_jacfwd", "sparse_jacobian", "sparse_jacrev"})

__getattr__, __dir__ = _module_attributes(__name__, _LAZY, {
    "Device": _device_class,  # jaxlib's class: jaxlib loads on first use
    **{name: _partial(_attribute, f"{__name__}.transforms.sparsity", name,
                      None if name == "SparseMatrix" else _boundary) for name in _SPARSE}})

__all__ = ["Array", "BackendError", "block_until_ready", "checking_leaks", "checkpoint",
           "checkpoint_policies", "clear_caches", "ClosedJaxpr", "closure_convert",
           "ConcretizationError", "copy_to_host_async", "custom_gradient", "custom_jvp",
           "custom_vjp", "default_backend", "Device", "device_count", "device_get", "device_put",
           "devices", "disable_jit", "dlpack", "ds", "dtypes", "effects_barrier",
           "ensure_compile_time_eval", "errors", "empty_ref", "eval_jaxpr", "eval_shape",
           "float0", "free_ref", "freeze", "FuncadError", "FuncadTypeError", "fwd_and_bwd",
           "get_abstract_mesh", "get_mesh", "grad", "hessian", "hessian_sparsity", "host_count",
           "host_id", "host_ids", "InfError", "jacfwd", "jacobian", "jacobian_sparsity", "jacrev",
           "Jaxpr", "jit", "jvp", "linear_transpose", "linearize", "live_arrays",
           "local_device_count", "local_devices", "make_array_from_callback",
           "make_array_from_process_local_data", "make_array_from_single_device_arrays",
           "make_jaxpr", "make_mesh", "MissingRuleError", "named_call", "named_scope",
           "NamedSharding", "NaNError", "new_ref", "optimize", "P", "pmap",
           "print_environment_info", "process_count", "process_index", "process_indices",
           "pure_callback", "Ref", "ref", "remat", "reshard", "set_mesh", "Shard",
           "ShapeDtypeStruct", "shard_map", "smap", "sparse_hessian", "sparse_jacfwd",
           "sparse_jacobian", "sparse_jacrev", "SparseMatrix", "stages", "stop_gradient",
           "to_python", "TracerLeakError", "transfer_guard", "typeof", "typing",
           "UnsupportedError", "value_and_grad", "version", "vjp", "vmap",
           *config.scopes]
