"""Public namespaces export only public names.

A public namespace is `funcad` and every module under it with no component
starting with an underscore, outside the implementation packages (core,
primitives, transforms, lowering). Each defines `__all__`; its globals and
its `dir()` hold exactly those names, its public child namespaces, and
nothing else: no stray imports (`np`, `annotations`, helper functions).
Namespaces are found by walking the package, so a new one is checked without
being listed.
"""
from __future__ import annotations

import importlib
import pkgutil
import types

import pytest

import funcad

# funcad's implementation; their modules are not namespaces a user imports from.
INTERNAL = {"core", "primitives", "transforms", "lowering", "arrays"}


def _namespaces() -> list[str]:
    names = ["funcad"]
    for info in pkgutil.walk_packages(funcad.__path__, "funcad."):
        parts = info.name.split(".")[1:]
        if parts[0] not in INTERNAL and not any(p.startswith("_") for p in parts):
            names.append(info.name)
    return names


NAMESPACES = _namespaces()


def _children(mod) -> set:
    """Submodules bound as attributes of `mod` (importing a package binds them), and the
    ones it loads on first access (listed in `dir()` before they are loaded)."""
    lazy = set(getattr(mod, "_LAZY", ())) | set(getattr(mod, "_LAZY_SUBMODULES", ()))
    return lazy | {n for n, v in vars(mod).items()
                   if isinstance(v, types.ModuleType) and v.__name__ == f"{mod.__name__}.{n}"}


def test_the_known_namespaces_are_found():
    assert {"funcad", "funcad.numpy", "funcad.numpy.linalg", "funcad.lax", "funcad.tree_util",
            "funcad.debug", "funcad.config", "funcad.test_util", "funcad.viz"} <= set(NAMESPACES)


@pytest.mark.parametrize("name", NAMESPACES)
def test_namespace_exports_only_its_all(name):
    mod = importlib.import_module(name)
    assert isinstance(getattr(mod, "__all__", None), (list, tuple)), f"{name} defines no __all__"
    exported = set(mod.__all__)
    assert len(exported) == len(mod.__all__), f"{name}.__all__ lists a name twice"
    missing = [n for n in exported if not hasattr(mod, n)]
    assert not missing, f"{name}.__all__ names {missing}, which {name} does not have"
    children = _children(mod)
    # (pytest's assertion rewriting adds non-identifier names such as `@py_builtins`.)
    stray_globals = {n for n in vars(mod) if not n.startswith("_") and n.isidentifier()} - exported - children
    assert not stray_globals, f"{name} has public names not in __all__: {sorted(stray_globals)}"
    stray_dir = {n for n in dir(mod) if not n.startswith("_") and n.isidentifier()} - exported - children
    assert not stray_dir, f"dir({name}) shows names not in __all__: {sorted(stray_dir)}"


@pytest.mark.parametrize("name", NAMESPACES)
def test_public_children_are_namespaces(name):
    # A public-named submodule is itself a namespace (and so checked above); an
    # implementation module inside a namespace gets a leading underscore.
    mod = importlib.import_module(name)
    for child in _children(mod) - {n for n in _children(mod) if n.startswith("_")}:
        full = f"{name}.{child}"
        if name == "funcad" and child in INTERNAL:
            continue
        assert full in NAMESPACES, f"{full} is public but not found as a namespace"


def test_the_check_can_fail():
    fake = types.ModuleType("funcad.fake")
    fake.__all__ = ["f"]
    fake.f, fake.np = len, types
    assert {n for n in vars(fake) if not n.startswith("_")} - set(fake.__all__) == {"np"}
