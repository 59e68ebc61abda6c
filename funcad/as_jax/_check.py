"""`python -m funcad.as_jax --check SCRIPT`: the JAX names, modules and keyword
parameters a script uses that funcad lacks, found by reading its source (the
script is not run)."""
from __future__ import annotations

import ast
import importlib
import inspect
from dataclasses import dataclass


@dataclass(frozen=True)
class Gap:
    line: int
    name: str       # the JAX name as the script spells it after its aliases, e.g. jax.numpy.sort
    keyword: str | None = None

    def __str__(self) -> str:
        if self.keyword is None:
            return f"{self.line}: {self.name}: funcad has no such name"
        return f"{self.line}: {self.name}({self.keyword}=...): funcad's {self.name} takes no parameter {self.keyword!r}"


_MISSING = object()


def resolve(name: str):
    """funcad's object for the JAX name `name` (jax.a.b -> funcad.a.b), or _MISSING."""
    parts = ["funcad", *name.split(".")[1:]]
    for cut in range(len(parts), 0, -1):  # the longest importable module prefix
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            try:
                obj = getattr(obj, attr)
            except AttributeError:  # funcad's UnsupportedError is an AttributeError too
                return _MISSING
        return obj
    return _MISSING


def _aliases(tree: ast.AST) -> dict[str, str]:
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "jax" or a.name.startswith("jax."):
                    if a.asname:
                        names[a.asname] = a.name
                    else:
                        names["jax"] = "jax"
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module \
                and (node.module == "jax" or node.module.startswith("jax.")):
            for a in node.names:
                if a.name != "*":
                    names[a.asname or a.name] = f"{node.module}.{a.name}"
    return names


def _dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    attrs = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id in aliases:
        return ".".join([aliases[node.id], *reversed(attrs)])
    return None


def _private(name: str) -> bool:
    return name.startswith("jax._src")


def _keywords_missing(obj, keywords: list[str]) -> list[str]:
    try:
        params = inspect.signature(obj).parameters
    except (TypeError, ValueError):
        return []
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return []
    return [k for k in keywords if k not in params]


def check_source(source: str) -> list[Gap]:
    """Every gap in `source`, in line order, each once.

    >>> src = "import jax\\nimport jax.numpy as jnp\\njnp.sum(x, where=m)\\njax.no_such_thing(1)\\n"
    >>> [str(g) for g in check_source(src) if "no_such" in g.name]
    ['4: jax.no_such_thing: funcad has no such name']
    """
    tree = ast.parse(source)
    aliases = _aliases(tree)
    gaps: dict[tuple, Gap] = {}
    for alias, name in aliases.items():
        if not _private(name) and resolve(name) is _MISSING:
            line = next(n.lineno for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                        and any((a.asname or a.name.split(".")[0]) == alias or a.name == name.rsplit(".", 1)[-1]
                                for a in n.names))
            gaps[(name, None)] = Gap(line, name)
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and id(node) not in inner:
            name = _dotted(node, aliases)
            if name and not _private(name) and (name, None) not in gaps and resolve(name) is _MISSING:
                gaps[(name, None)] = Gap(node.lineno, name)
        if isinstance(node, ast.Call):
            func = node.func
            name = _dotted(func, aliases) if isinstance(func, ast.Attribute) else (
                aliases.get(func.id) if isinstance(func, ast.Name) else None)
            if not name or _private(name):
                continue
            obj = resolve(name)
            if obj is _MISSING or not callable(obj):
                continue
            for kw in _keywords_missing(obj, [k.arg for k in node.keywords if k.arg]):
                gaps.setdefault((name, kw), Gap(node.lineno, name, kw))
    return sorted(gaps.values(), key=lambda g: (g.line, g.name, g.keyword or ""))
