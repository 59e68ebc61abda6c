"""Lowering of library primitives (JAX's `interpreters.mlir`); see
funcad/interpreters/_mlir.py."""
from ._mlir import (lower_fun, register_lowering)

__all__ = ['lower_fun', 'register_lowering']


_JAX_BUILDERS = {"ir", "hlo", "ir_constant", "ir_constants", "aval_to_ir_type", "aval_to_ir_types",
                 "LoweringRuleContext", "ModuleContext", "dtype_to_ir_type", "i32_attr", "i64_attr",
                 "dense_int_array", "dense_int_elements", "emit_python_callback", "jaxpr_subcomp",
                 "lower_jaxpr_to_fun", "lower_jaxpr_to_module", "make_ir_context", "shape_tensor",
                 "token_type", "flatten_ir_values", "flatten_ir_types", "ir_attribute"}


def __getattr__(name: str):
    if name in _JAX_BUILDERS:
        raise AttributeError(f"funcad.interpreters.mlir has no `{name}`: funcad writes StableHLO "
                             "itself and has no MLIR builder API; lower a primitive with "
                             "register_lowering(p, lower_fun(fun)) instead")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
