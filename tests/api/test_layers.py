"""funcad's layers, read from the imports.

Every module of funcad/ has a layer; a module imports only from its own layer and
the ones below it, at module level or inside a function:

  core          avals, the IR, primitives and traces, staging, pytrees (and tree_util's
                functions), options, errors, jaxpr drawings (viz), the lazy attributes
                of the faces (module_attributes)
  lowering      backends: StableHLO emission, the to_python emitter, the XLA client
                (jax and jaxlib imported in jaxlib_api, on first use), device Arrays,
                device queries, DLPack, the profiler, distributed processes; they know
                no primitive
  primitives    each primitive with all its rules
  transforms    jvp, linearize, transpose, vmap, the jaxpr-level transforms, the
                higher-order primitives and their front ends (jit and its stages,
                checkpoint and its saved residuals, cond/while/scan, custom derivatives,
                custom_vmap), passes
  arrays        the array operations lax and numpy share: dtype promotion, shapes,
                indexing, ufuncs, reductions, creation, products, placement and
                resharding (funcad.sharding's functions), the array annotations (typing)
  lax           funcad.lax
  numpy         funcad.numpy (and its fft, linalg), and what is built on it: the segment
                reductions (funcad.ops), ravel_pytree (funcad.flatten_util)
  libraries     nn, random, scipy.special, debug, ref
  applications  scipy, image, example_libraries (and the tour `python -m funcad` prints)
  extensions    experimental, export, and JAX's extension namespaces (extend,
                interpreters, lib)
  faces         funcad/__init__.py and the top-level modules: they re-export, and define
                no function or class (test_top_level_modules_only_re_export)

Imports inside one layer are free, but no module reaches itself through its imports
(no cycles). Where a lower layer needs a higher one at run time, the higher one installs
a hook (`funcad.core.trace.hooks`) or a rule in a table; the few exceptions are in
ALLOWED, each with why. An import inside a function (of any module: funcad's own, the
standard library's, NumPy, SciPy, jaxlib) is kept only for a heavy or optional
dependency loaded on first use, or an import order that cannot be otherwise; each says
why in a comment, and there are at most LOCAL_IMPORT_BUDGET of them.
"""
from __future__ import annotations

import ast
import pathlib
import re

import funcad

ROOT = pathlib.Path(funcad.__file__).parent
LAYERS = {
    "core": ["funcad.core"],
    "lowering": ["funcad.lowering"],
    "primitives": ["funcad.primitives"],
    "transforms": ["funcad.transforms"],
    "arrays": ["funcad.arrays"],
    "lax": ["funcad.lax"],
    "numpy": ["funcad.numpy"],
    "libraries": ["funcad.nn", "funcad.random", "funcad.scipy.special", "funcad.debug", "funcad.ref"],
    "applications": ["funcad.scipy", "funcad.image", "funcad.example_libraries"],
    "extensions": ["funcad.experimental", "funcad.export", "funcad.extend", "funcad.interpreters",
                   "funcad.lib"],
    "faces": ["funcad"],  # funcad/__init__.py, the top-level modules, funcad.as_jax
}
NAMES = list(LAYERS)
CORE_HALF = NAMES[:4]

# (importing module, imported module): why the upward import is acceptable.
ALLOWED = {
    ("funcad.primitives._base", "funcad.transforms.jvp"):
        "jvp_of_composition: a jvp rule stated as the derivative of another algorithm "
        "(cumprod's prefix scan) runs the jvp transform on it, as JAX's lax does",
}
LOCAL_IMPORT_BUDGET = 60
# The one cycle left: the rules of the basic primitives need each other (add's transpose
# un-broadcasts with reduce_sum, whose rules broadcast; pad's transpose subtracts), and
# primitives/_base's helpers (full, unbroadcast) bind them; JAX keeps all of them in one
# module (lax.py). Its edges are function-local imports, each marked. Any other cycle fails.
KNOWN_CYCLE = ["funcad.primitives._base", "funcad.primitives.elementwise", "funcad.primitives.reductions",
               "funcad.primitives.sharding", "funcad.primitives.structural", "funcad.transforms.custom",
               "funcad.transforms.custom_calls", "funcad.transforms.jvp"]


def layer_of(module: str) -> int:
    best = max((p for ps in LAYERS.values() for p in ps if module == p or module.startswith(p + ".")),
               key=len)
    return next(i for i, ps in enumerate(LAYERS.values()) if best in ps)


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


def _where(path, line):
    return f"{path.relative_to(ROOT.parent)}:{line}"


def test_every_layer_is_known():
    layers = {NAMES[layer_of(_module_name(p))] for p in MODULES}
    assert layers == set(NAMES)
    # Everything outside the listed packages is a top-level face.
    for p in MODULES:
        m = _module_name(p)
        if layer_of(m) == NAMES.index("faces"):
            assert m == "funcad" or m.count(".") == 1 or m.startswith("funcad.as_jax"), \
                f"{m}: put its package in LAYERS"
    assert layer_of("funcad.core.trace") < layer_of("funcad.lowering.stablehlo") \
        < layer_of("funcad.primitives.elementwise") < layer_of("funcad.transforms.jit") \
        < layer_of("funcad.arrays.dtypes") < layer_of("funcad.lax._slicing") \
        < layer_of("funcad.numpy._poly") < layer_of("funcad.scipy.special._gamma") \
        < layer_of("funcad.scipy.linalg") < layer_of("funcad.experimental.jet") \
        < layer_of("funcad.tree_util") == layer_of("funcad")
    # where the top-level faces' code lives
    assert layer_of("funcad.core.tree_util") < layer_of("funcad.lowering.profiler") \
        < layer_of("funcad.transforms.saved_residuals") < layer_of("funcad.arrays.sharding") \
        < layer_of("funcad.numpy._segment") < layer_of("funcad.example_libraries._tour") \
        < layer_of("funcad.sharding")


def test_imports_reach_the_modules_they_name():
    # The parser resolves relative imports; a wrong resolution would hide edges.
    edges = {(s, t) for s, t, *_ in _edges()}
    assert ("funcad.primitives.elementwise", "funcad.lowering.stablehlo") in edges
    assert ("funcad.transforms.jit", "funcad.lowering.xla") in edges
    assert ("funcad.lax", "funcad.primitives.elementwise") in edges


def test_no_module_imports_a_higher_layer():
    bad = []
    for src, target, line, local, path in _edges():
        if layer_of(target) > layer_of(src) and (src, target) not in ALLOWED:
            where = "in a function" if local else "at module level"
            bad.append(f"{_where(path, line)}: {src} ({NAMES[layer_of(src)]}) imports "
                       f"{target} ({NAMES[layer_of(target)]}) {where}")
    assert not bad, "lower layers import higher ones:\n" + "\n".join(bad)


def test_allowed_exceptions_are_still_used():
    edges = {(s, t) for s, t, *_ in _edges()}
    stale = [pair for pair in ALLOWED if pair not in edges]
    assert not stale, f"remove these from ALLOWED, they no longer occur: {stale}"


def test_core_half_imports_nothing_public():
    # Stated on its own: the rule the design rests on.
    ups = {(s, t) for s, t, *_ in _edges()
           if NAMES[layer_of(s)] in CORE_HALF and NAMES[layer_of(t)] not in CORE_HALF}
    assert not ups, ups


def import_graph() -> dict[str, set[str]]:
    """Module -> the funcad modules it imports (a package re-exporting its own children,
    an edge Python's import order makes harmless, is left out)."""
    graph: dict[str, set[str]] = {_module_name(p): set() for p in MODULES}
    for src, target, *_ in _edges():
        if target != src and not target.startswith(src + "."):
            graph[src].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm,
    iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in graph:
                    continue
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    every = cycles(import_graph())
    assert KNOWN_CYCLE in every, "the primitives' cycle is gone (or changed): update KNOWN_CYCLE"
    found = [c for c in every if c != KNOWN_CYCLE]
    assert not found, "import cycles (each a set of modules that reach each other):\n" + "\n".join(
        f"{len(c)}: {', '.join(c)}" for c in found)


def local_imports(path: pathlib.Path) -> list[tuple[int, bool]]:
    """(line, whether a comment says why) of every import statement inside a function
    (or lambda) of the file, whatever it imports."""
    text = path.read_text()
    lines = text.splitlines()
    found = {inner.lineno for node in ast.walk(ast.parse(text))
             if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
             for inner in ast.walk(node) if isinstance(inner, (ast.Import, ast.ImportFrom))}
    return [(n, _has_reason(lines, n)) for n in sorted(found)]


def _has_reason(lines: list[str], line: int) -> bool:
    # a comment on the import's line (or its continuation), or on the line above
    here = lines[line - 1]
    k = line
    while here.rstrip().endswith((",", "(", "\\")) and k < len(lines):
        here += lines[k]
        k += 1
    return "#" in here or lines[line - 2].strip().startswith("#")


def test_function_local_imports_are_few_and_say_why():
    found = [(p, n, why) for p in MODULES for n, why in local_imports(p)]
    silent = [_where(p, n) for p, n, why in found if not why]
    assert not silent, ("function-local imports without a comment saying why (a heavy dependency "
                        "kept lazy, or an import order):\n" + "\n".join(silent))
    assert len(found) <= LOCAL_IMPORT_BUDGET, (
        f"{len(found)} function-local imports (budget {LOCAL_IMPORT_BUDGET}); import at module "
        "level where the layers allow it:\n" + "\n".join(_where(p, n) for p, n, _ in found))


def test_the_local_import_check_can_fail(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("import os\n\n\ndef f():\n    import json\n    # SciPy loads on first use\n"
                     "    import scipy\n    from numpy import (pi,  # lazy: ...\n        e)\n\n\n"
                     "g = lambda: __import__('os')\n\n\nclass C:\n    def m(self):\n"
                     "        from . import sibling\n")
    assert local_imports(probe) == [(5, False), (7, True), (8, True), (17, False)]


def test_top_level_modules_are_faces():
    # A top-level module is a public face: packages import the implementation, not the face.
    faces = {_module_name(p) for p in ROOT.glob("*.py")} - {"funcad"}
    bad = [f"{_where(path, line)}: {src} imports the face {target}"
           for src, target, line, local, path in _edges()
           if target in faces | {"funcad"} and layer_of(src) < NAMES.index("faces")]
    assert not bad, "\n".join(bad)


def definitions(path: pathlib.Path) -> list[tuple[int, str]]:
    """(line, what) of every function, class and lambda the file defines, at any depth."""
    kinds = {ast.FunctionDef: "def", ast.AsyncFunctionDef: "async def", ast.ClassDef: "class",
             ast.Lambda: "lambda"}
    return sorted((n.lineno, f"{kinds[type(n)]} {getattr(n, 'name', '')}".rstrip())
                  for n in ast.walk(ast.parse(path.read_text())) if type(n) in kinds)


def test_top_level_modules_only_re_export():
    # A top-level module is a docstring, imports, __all__ and aliases; its code lives in the
    # package of its topic (JAX's layout: jax/_src implements, jax/<module>.py re-exports).
    # A lazy attribute's __getattr__ comes from core/module_attributes.py.
    bad = [f"{_where(p, line)}: {what}" for p in sorted(ROOT.glob("*.py")) for line, what in definitions(p)]
    assert not bad, ("top-level modules that define code; move it to the package of its topic "
                     "and import it:\n" + "\n".join(bad))


def test_the_face_check_can_fail(tmp_path):
    face, impl = tmp_path / "face.py", tmp_path / "impl.py"
    face.write_text('"""A face."""\nfrom x import y\n\n__all__ = ["y", "z"]\nz = y\n')
    impl.write_text("def f():\n    pass\n\n\nclass C:\n    async def g(self):\n        return lambda: 1\n")
    assert definitions(face) == []
    assert definitions(impl) == [(1, "def f"), (5, "class C"), (6, "async def g"), (7, "lambda")]


def test_no_file_is_named_for_when_it_arrived():
    # x64 and chi2 name their topic; a trailing digit elsewhere is a second attempt.
    bad = [str(p.relative_to(ROOT.parent)) for p in MODULES
           if re.search(r"(_more|_extra|_new|_old|\d)$", p.stem) and p.stem not in ("x64", "chi2")]
    assert not bad, bad
