"""funcad's layers, read from the imports (issue 19).

Lower layers never import higher ones, at module level or inside a function:

  core        avals, the IR, primitives and traces, staging, pytrees, errors
  lowering    backends: StableHLO emission and its rule factories, the
              to_python emitter, the XLA client, device arrays; they know no
              primitive (each primitive registers its rules beside itself)
  primitives  each primitive with all its rules
  transforms  jvp, linearize, transpose, vmap, the jaxpr-level transforms, the
              higher-order primitives (jit, checkpoint, cond/while/scan, custom
              derivative calls), passes
  api         the public namespaces (funcad, funcad.numpy, funcad.lax, ...)

Imports inside one layer are free. Where a lower layer needs a higher one at
run time, the higher one installs a hook (`funcad.core.trace.hooks`) or a
rule in a table; the few exceptions are listed in ALLOWED, each with why.
"""
from __future__ import annotations

import ast
import pathlib

import funcad

ROOT = pathlib.Path(funcad.__file__).parent
LAYERS = ["core", "lowering", "primitives", "transforms", "api"]

# (importing module, imported module): why the upward import is acceptable.
ALLOWED = {
    ("funcad.primitives._base", "funcad.transforms.jvp"):
        "jvp_of_composition: a jvp rule stated as the derivative of another algorithm "
        "(cumprod's prefix scan) runs the jvp transform on it, as JAX's lax does",
}


def layer_of(module: str) -> int:
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in LAYERS[:4]:
        return LAYERS.index(parts[1])
    return LAYERS.index("api")


def _module_name(path: pathlib.Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(name: str) -> bool:
    rel = pathlib.Path(*name.split(".")[1:])
    return (ROOT / rel).with_suffix(".py").exists() or (ROOT / rel / "__init__.py").exists()


def imports_of(path: pathlib.Path) -> list[tuple[str, int, bool]]:
    """(imported funcad module, line, inside a function) for every import in the file."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    out = []

    def visit(node, local):
        for child in ast.iter_child_nodes(node):
            inner = local or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                out.extend((a.name, child.lineno, local) for a in child.names if a.name.startswith("funcad"))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[:len(base) - child.level + 1]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                if not target.startswith("funcad"):
                    continue
                for a in child.names:  # `from pkg import module` imports that module
                    sub = f"{target}.{a.name}"
                    out.append((sub if _is_module(sub) else target, child.lineno, local))
            visit(child, inner)

    visit(ast.parse(path.read_text()), False)
    return out


MODULES = sorted(ROOT.rglob("*.py"))


def _edges():
    for path in MODULES:
        src = _module_name(path)
        for target, line, local in imports_of(path):
            yield src, target, line, local, path


def test_every_layer_is_known():
    assert {layer_of(_module_name(p)) for p in MODULES} == set(range(len(LAYERS)))
    assert layer_of("funcad.core.trace") < layer_of("funcad.lowering.stablehlo") \
        < layer_of("funcad.primitives.elementwise") < layer_of("funcad.transforms.jit") \
        < layer_of("funcad.numpy._ufuncs") == layer_of("funcad")


def test_imports_reach_the_modules_they_name():
    # The parser resolves relative imports; a wrong resolution would hide edges.
    edges = {(s, t) for s, t, *_ in _edges()}
    assert ("funcad.primitives.elementwise", "funcad.lowering.stablehlo") in edges
    assert ("funcad.transforms.jit", "funcad.lowering.xla") in edges
    assert ("funcad.lax", "funcad.primitives.elementwise") in edges


def test_no_lower_layer_imports_a_higher_one():
    bad = []
    for src, target, line, local, path in _edges():
        if layer_of(target) > layer_of(src) and (src, target) not in ALLOWED:
            where = "in a function" if local else "at module level"
            bad.append(f"{path.relative_to(ROOT.parent)}:{line}: {src} ({LAYERS[layer_of(src)]}) imports "
                       f"{target} ({LAYERS[layer_of(target)]}) {where}")
    assert not bad, "lower layers import higher ones:\n" + "\n".join(bad)


def test_allowed_exceptions_are_still_used():
    edges = {(s, t) for s, t, *_ in _edges()}
    stale = [pair for pair in ALLOWED if pair not in edges]
    assert not stale, f"remove these from ALLOWED, they no longer occur: {stale}"


def test_core_imports_nothing_above_it():
    # Stated on its own: the rule the design rests on.
    ups = {t for s, t, *_ in _edges() if layer_of(s) == 0 and layer_of(t) > 0}
    assert not ups, ups
