"""funcad's layers, read from the imports.

Every module of funcad/ has a layer; a module imports only from its own layer and
the ones below it, at module level or inside a function:

  core          avals, the IR, primitives and traces, staging, pytrees, options, errors
  lowering      backends: StableHLO emission, the to_python emitter, the XLA client,
                device Arrays and device queries; they know no primitive
  primitives    each primitive with all its rules
  transforms    jvp, linearize, transpose, vmap, the jaxpr-level transforms, the
                higher-order primitives and their front ends (jit, checkpoint,
                cond/while/scan, custom derivatives), passes
  arrays        the array operations lax and numpy share: dtype promotion, shapes,
                indexing, ufuncs, reductions, creation, products
  lax           funcad.lax
  numpy         funcad.numpy (and its fft, linalg)
  libraries     nn, random, scipy.special, debug, ref
  applications  scipy, image, example_libraries
  extensions    experimental, export, and JAX's extension namespaces (extend,
                interpreters, lib)
  faces         funcad/__init__.py and the top-level modules: they re-export

Imports inside one layer are free, but no module reaches itself through its imports
(no cycles). Where a lower layer needs a higher one at run time, the higher one installs
a hook (`funcad.core.trace.hooks`) or a rule in a table; the few exceptions are in
ALLOWED, each with why. An import inside a function is kept for a heavy dependency
loaded on first use or an import order that cannot be otherwise; each says why in a
comment, and there are at most LOCAL_IMPORT_BUDGET of them.
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


def _local_imports():
    out = []
    for path in MODULES:
        lines = path.read_text().splitlines()
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Import, ast.ImportFrom)) and _is_funcad(inner, path):
                    out.append((path, inner.lineno, lines))
    return sorted(set((p, n) for p, n, _ in out)), {p: ls for p, _, ls in out}


def _is_funcad(node, path) -> bool:
    if isinstance(node, ast.Import):
        return any(a.name.startswith("funcad") for a in node.names)
    return bool(node.level) or (node.module or "").startswith("funcad")


def _has_reason(lines: list[str], line: int) -> bool:
    # a comment on the import's line (or its continuation), or on the line above
    here = lines[line - 1]
    k = line
    while here.rstrip().endswith((",", "(", "\\")) and k < len(lines):
        here += lines[k]
        k += 1
    return "#" in here or lines[line - 2].strip().startswith("#")


def test_function_local_imports_are_few_and_say_why():
    found, text = _local_imports()
    silent = [_where(p, n) for p, n in found if not _has_reason(text[p], n)]
    assert not silent, ("function-local imports without a comment saying why (a heavy dependency "
                        "kept lazy, or an import order):\n" + "\n".join(silent))
    assert len(found) <= LOCAL_IMPORT_BUDGET, (
        f"{len(found)} function-local imports of funcad modules (budget {LOCAL_IMPORT_BUDGET}); "
        "import at module level where the layers allow it:\n" + "\n".join(_where(p, n) for p, n in found))


def test_top_level_modules_are_faces():
    # A top-level module is a public face: packages import the implementation, not the face.
    faces = {_module_name(p) for p in ROOT.glob("*.py")} - {"funcad"}
    bad = [f"{_where(path, line)}: {src} imports the face {target}"
           for src, target, line, local, path in _edges()
           if target in faces | {"funcad"} and layer_of(src) < NAMES.index("faces")]
    assert not bad, "\n".join(bad)


def test_no_file_is_named_for_when_it_arrived():
    # x64 and chi2 name their topic; a trailing digit elsewhere is a second attempt.
    bad = [str(p.relative_to(ROOT.parent)) for p in MODULES
           if re.search(r"(_more|_extra|_new|_old|\d)$", p.stem) and p.stem not in ("x64", "chi2")]
    assert not bad, bad
