"""StableHLO portable artifacts (the versioned bytecode `jax.export` serializes) through
jaxlib's MLIR bindings, for `funcad.export`.

jaxlib's stablehlo dialect module converts between a module's text and a portable
artifact (`serialize_portable_artifact_str`, `deserialize_portable_artifact_str`; both
in jaxlib 0.6 to 0.12). A deserialized module is printed back to text here, so funcad
compiles it, or inlines it into a program it lowers, like any StableHLO it emits.

>>> text = '''module @m { func.func public @main(%a: tensor<2xf32>) -> tensor<2xf32> {
...   %0 = stablehlo.add %a, %a : tensor<2xf32>
...   return %0 : tensor<2xf32> } }'''
>>> "stablehlo.add" in module_text(serialize(text))
True
"""
from __future__ import annotations

import functools
import re

from . import xla

__all__ = ["serialize", "module_text", "renamed_functions", "custom_call_targets"]


def _stablehlo():
    stablehlo = xla.jaxlib_modules().stablehlo
    try:
        stablehlo.serialize_portable_artifact_str, stablehlo.deserialize_portable_artifact_str
    except AttributeError as e:
        raise xla._unsupported("its MLIR bindings cannot (de)serialize StableHLO portable "
                               "artifacts, which funcad.export needs", e) from None
    return stablehlo


@functools.lru_cache(maxsize=None)
def target_version() -> str:
    """The StableHLO version artifacts are written for: about four weeks older than the
    installed jaxlib's (as jax.export does), so slightly older consumers read them."""
    hlo = _stablehlo()
    if hasattr(hlo, "get_version_from_compatibility_requirement"):
        return hlo.get_version_from_compatibility_requirement(
            hlo.StablehloCompatibilityRequirement.WEEK_4)
    return hlo.get_current_version()


def _mixed():
    """jaxlib's (de)serializer that also keeps Shardy's `sdy` ops (meshes, shardings) of
    an SPMD module, as jax.export writes them; None where jaxlib lacks it."""
    m = getattr(xla._load()._xla, "mlir", None)
    return m if hasattr(m, "serialize_portable_artifact") else None


def serialize(text: str) -> bytes:
    """A StableHLO module's text as a portable artifact."""
    if "sdy." in text and _mixed() is not None:
        return bytes(_mixed().serialize_portable_artifact(text, target_version(), True))
    return bytes(_stablehlo().serialize_portable_artifact_str(text, target_version()))


def module_text(artifact: bytes) -> str:
    """The text of the module a portable artifact holds (without locations)."""
    ir = xla.jaxlib_modules().ir
    mixed = _mixed()
    with xla._mlir_context():
        if mixed is not None:
            module = mixed.deserialize_portable_artifact(bytes(artifact))
            if isinstance(module, (str, bytes)):  # older jaxlibs give the module's text
                module = ir.Module.parse(module)
        else:
            module = ir.Module.parse(_stablehlo().deserialize_portable_artifact_str(bytes(artifact)))
        return module.operation.get_asm(enable_debug_info=False)


def renamed_functions(text: str, prefix: str) -> tuple[list[str], list[str], list[str]]:
    """The functions (and Shardy meshes) of a module, each symbol renamed `prefix + name`
    and all functions private, as texts to place in another module; with @main's argument
    and result types.

    Modules whose top level holds anything else (globals) are refused."""
    ir = xla.jaxlib_modules().ir
    with xla._mlir_context():
        module = ir.Module.parse(text)
        names = []
        for op in module.body.operations:
            if op.operation.name not in ("func.func", "sdy.mesh"):
                raise ValueError(f"funcad cannot call a module holding {op.operation.name} at its "
                                 "top level (only functions and meshes)")
            names.append(ir.StringAttr(op.attributes["sym_name"]).value)
        main = None
        for op, name in zip(list(module.body.operations), names):
            ir.SymbolTable.replace_all_symbol_uses(name, prefix + name, module.operation)
            ir.SymbolTable.set_symbol_name(op, prefix + name)
            if op.operation.name == "func.func":
                op.attributes["sym_visibility"] = ir.StringAttr.get("private")
            if name == "main":
                main = op
        if main is None:
            raise ValueError("the exported module has no @main function")
        ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        ins, outs = [str(t) for t in ftype.inputs], [str(t) for t in ftype.results]
        funcs = [op.operation.get_asm(enable_debug_info=False) for op in module.body.operations]
    return funcs, ins, outs


_TARGET = re.compile(r'stablehlo\.custom_call @([A-Za-z0-9_.$]+)|call_target_name = "([^"]*)"')


def custom_call_targets(text: str) -> set[str]:
    """The custom-call targets a module's text names."""
    return {a or b for a, b in _TARGET.findall(text)}
