"""Calling an `Exported`: the opaque primitive `call_exported` (its module compiled as is,
or inlined as private functions into a program being jitted), wrapped in a custom_vjp
whose backward pass calls the exported VJP, as JAX does."""
from __future__ import annotations

import weakref

import numpy as np

from ..core.avals import ShapedArray, float0
from ..core.sharding import Mesh, NamedSharding, PartitionSpec
from ..core.pytree import keystr, tree_flatten, tree_flatten_with_path
from ..core.trace import batch_rules, jvp_rules, lowering_rules, sharding_rules
from ..core.typed_sharding import BY_SHAPE_RULE
from ..lowering import portable
from ..primitives._base import new_primitive
from ._exported import DisabledSafetyCheck, Exported, default_export_platform
from ..core.staging import trace_to_jaxpr
from ..core.avals import aval_of
from ..transforms.jit import executable_for, jit
import funcad.numpy as fnp
from ..primitives.structural import moveaxis0
from ..transforms.custom import custom_vjp
from ..transforms.sparsity import _interp, rules

__all__ = ["call", "call_exported_p"]

_PREFIX = "__funcad_exported_prefix__"


def _arg_names(exported) -> list[str]:
    """'args[0]', "kwargs['x']", ... for each flat argument (for error messages)."""
    tree = exported.in_tree.unflatten(list(range(exported.in_tree.num_leaves)))
    names = []
    for path, _ in tree_flatten_with_path(tree)[0]:
        head = "args" if path and getattr(path[0], "idx", None) == 0 else "kwargs"
        names.append(head + keystr(path[1:]))
    return names


def _abstract(*avals, exported):
    names = None
    for i, (exp, got) in enumerate(zip(exported.in_avals, avals)):
        if exp.shape == got.shape and exp.dtype == got.dtype:
            continue
        names = names or _arg_names(exported)
        if len(exp.shape) != len(got.shape):
            raise ValueError(f"Rank mismatch for {names[i]}: expected {exp.shape} and called with "
                             f"{got.shape}")
        if exp.dtype != got.dtype:
            raise ValueError(f"Dtype mismatch for {names[i]}: expected {exp.dtype} and called with "
                             f"{got.dtype}")
        d = next(d for d in range(len(exp.shape)) if exp.shape[d] != got.shape[d])
        raise ValueError(f"Shape mismatch for {names[i]}.shape[{d}] (expected same constant): "
                         f"expected {exp.shape} and called with {got.shape}")
    return [_typed(a, s) for a, s in zip(exported.out_avals, exported._out_named_shardings)]


def _typed(aval, s):
    """An output's type with its exported sharding, where its mesh's axes are Explicit
    (sharding in types, as JAX's abstract evaluation gives)."""
    if s is None or not s.mesh.explicit_axes or s.mesh.size == 1:
        return aval
    spec = PartitionSpec(*s.spec, *[None] * (len(aval.shape) - len(s.spec)))  # (JAX's: one per dim)
    return ShapedArray(aval.shape, aval.dtype, sharding=NamedSharding(s.mesh, spec))


def _impl(*args, exported):
    _abstract(*[aval_of(a) for a in args], exported=exported)  # JAX's errors for wrong arguments
    if exported.nr_devices > 1:  # one SPMD program on the arguments' devices (their shardings)
        run = _one_call.get(exported)
        if run is None:
            run = _one_call[exported] = jit(lambda *xs: call_exported_p.bind(*xs, exported=exported))
        return run(*args)
    closed = _one_call.get(exported)
    if closed is None:
        closed = _one_call[exported] = trace_to_jaxpr(
            lambda *xs: call_exported_p.bind(*xs, exported=exported), list(exported.in_avals),
            name=f"call_exported({exported.fun_name})")
    return executable_for(closed, f"call_exported_{exported.fun_name}", None)(list(args))


_one_call: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_functions: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()

call_exported_p = new_primitive("call_exported", _impl, _abstract, multiple_results=True)
# the exported module's result types, as JAX's: a one-device export's are unsharded
sharding_rules[call_exported_p] = BY_SHAPE_RULE


def _platform_index(exported, platform: str) -> int:
    here = ("cpu",) if platform == "cpu" else ("cuda", "rocm")
    for i, p in enumerate(exported.platforms):
        if p in here:
            return i
    if DisabledSafetyCheck.platform() in exported.disabled_safety_checks:
        return 0
    used = "cpu" if platform == "cpu" else _gpu_name()
    raise ValueError(f"Function '{exported.fun_name}' was exported for platforms "
                     f"'{exported.platforms}' but it is used on '{(used,)}'.")


def _gpu_name() -> str:
    return default_export_platform() if default_export_platform() != "cpu" else "cuda"


def _on_partitions(s, assignment) -> NamedSharding:
    """An exported sharding on the program's devices: the exported mesh's devices are the
    partitions in order (JAX's convention), here `assignment`."""
    devices = np.array(assignment, dtype=object).reshape(s.mesh.axis_sizes)
    return NamedSharding(Mesh(devices, s.mesh.axis_names, s.mesh.axis_types), s.spec)


def _lower(ctx, *args, exported):
    part = ctx.module.partition
    num_devices = len(part.assignment) if part is not None else 1
    if num_devices != exported.nr_devices and exported.nr_devices != 1:
        raise ValueError(f"Function {exported.fun_name} was exported for {exported.nr_devices} "
                         f"devices and is called in a context with {num_devices} devices, which "
                         "is not allowed.")
    if exported.nr_devices > 1:  # the arguments laid out as exported
        args = [x if s is None else part.constrain(ctx, x, _on_partitions(s, part.assignment))
                for x, s in zip(args, exported._in_named_shardings)]
    index = _platform_index(exported, ctx.module.platform)
    funcs = _functions.get(exported)
    if funcs is None:
        funcs = _functions[exported] = portable.renamed_functions(
            portable.module_text(exported.mlir_module_serialized), _PREFIX)
    texts, in_types, _ = funcs
    if part is not None and not part.shardy and any(t.startswith("sdy.mesh") for t in texts):
        raise ValueError("The function was exported with shardy enabled but you are calling it "
                         "with Shardy disabled. Please enable Shardy with "
                         "funcad.config.update('jax_use_shardy_partitioner', True).")
    prefix = f"_exported{ctx.module.fresh()[1:]}_{len(ctx.module.functions)}_"
    ctx.module.functions.extend("  " + t.replace(_PREFIX, prefix).replace("\n", "\n  ") for t in texts)
    operands = [args[i] for i in exported.module_kept_var_idx]
    if len(exported.platforms) > 1:
        operands = [ctx.constant(index, np.int32)] + operands
        if in_types[0] != "tensor<i32>":
            raise ValueError(f"the exported module's platform index has type {in_types[0]}; "
                             "funcad passes tensor<i32>")
    return ctx.op("func.call", operands, ctx.out_avals, f"callee = @{prefix}main")


lowering_rules[call_exported_p] = _lower


def _no_jvp(primals, tangents, *, exported):
    raise ValueError(f"the exported function '{exported.fun_name}' has no forward-mode derivative: "
                     "an exported function is differentiated in reverse mode (grad, vjp) with its "
                     "serialized VJP; export it with serialize(vjp_order=1) or more")


jvp_rules[call_exported_p] = _no_jvp


def _batch(vals, dims, *, axis_size, exported):
    """vmap: the exported function applied to each batch entry in turn (its module is
    fixed to the exported shapes)."""
    vals = [v if d is None else moveaxis0(v, d, axis_size) for v, d in zip(vals, dims)]
    rows = [call_exported_p.bind(*[v if d is None else v[k] for v, d in zip(vals, dims)],
                                 exported=exported) for k in range(axis_size)]
    if not rows:
        return [fnp.zeros((0,) + a.shape, a.dtype) for a in exported.out_avals], [0] * len(exported.out_avals)
    return [fnp.stack([r[i] for r in rows]) for i in range(len(exported.out_avals))], [0] * len(rows[0])


batch_rules[call_exported_p] = _batch


def _zero_cotangent(ct, aval):
    return np.zeros(aval.shape, float0) if aval.dtype == float0 else ct


def call(exported):
    """A function calling `exported` with arguments of its exported structure; it is
    differentiable in reverse mode when the exported VJP is available."""
    if not isinstance(exported, Exported):
        raise ValueError(f"The exported argument must be an export.Exported. Found {exported}.")

    @custom_vjp
    def f_flat(*args):
        return call_exported_p.bind(*args, exported=exported)

    def fwd(*args):
        return f_flat(*args), args

    def bwd(args, cts):
        exp_vjp = exported.vjp()
        cts = [_zero_cotangent(c, a) for c, a in zip(cts, exp_vjp.in_avals[len(args):])]
        return tuple(call(exp_vjp)(*args, *cts))  # itself differentiable: higher orders

    f_flat.defvjp(fwd, bwd)

    def f_imported(*args, **kwargs):
        leaves, tree = tree_flatten((args, kwargs))
        if tree != exported.in_tree:
            raise ValueError("The invocation args and kwargs must have the same pytree structure "
                             f"as when the function '{exported.fun_name}' was exported, but they "
                             f"have the structure {tree} and it was exported for {exported.in_tree}.")
        return exported.out_tree.unflatten(f_flat(*leaves))
    return f_imported



def _register_sparsity() -> None:
    """Sparse Jacobians see an exported call as dense (its module is opaque) and never
    run it to fold constants."""
    _interp.dep_rules[call_exported_p] = rules.dense
    _interp.NO_FOLD.add(call_exported_p)


_register_sparsity()


def _call_method(self, *args, **kwargs):
    """Run the exported function on arguments of the exported structure, shapes and dtypes.

    >>> import funcad, numpy as np
    >>> exp = funcad.export.export(funcad.jit(lambda x: 2.0 * x))(np.ones(2, np.float32))
    >>> exp.call(np.arange(2, dtype=np.float32))
    Array([0., 2.], dtype=float32)
    """
    return call(self)(*args, **kwargs)


Exported.call = _call_method
