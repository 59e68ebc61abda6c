"""Attributes a public namespace module computes on first access (PEP 562).

The top-level faces of funcad only re-export; where one must give a name whose value
is made later (a submodule loaded on first use, jaxlib's Device class once jaxlib
loads, a config option's current value), it takes its `__getattr__` and `__dir__`
from `module_attributes`.

>>> import funcad  # its __getattr__ comes from here: jaxlib's Device class loads on use
>>> funcad.Device.__name__, "Device" in dir(funcad)
('Device', True)
"""
from __future__ import annotations

import importlib
import sys
from typing import Any, Callable, Iterable, Mapping


def module_attributes(module: str, submodules: Iterable[str] = (),
                      values: Mapping[str, Callable[[], Any]] | None = None,
                      other: Callable[[str], Any] | None = None,
                      listed: Iterable[str] = ()) -> tuple[Callable, Callable]:
    """(`__getattr__`, `__dir__`) for the module named `module`: a name in `submodules`
    imports `module.<name>`; a name in `values` is its function's result, kept in the
    module after the first access; any other name goes to `other(name)` (default: an
    AttributeError). `dir()` lists the module's globals, those names and `listed`."""
    submodules, values = frozenset(submodules), dict(values or {})
    names = submodules | set(values) | set(listed)

    def __getattr__(name: str):
        if name in submodules:
            return importlib.import_module(f"{module}.{name}")
        if name in values:
            value = values[name]()
            setattr(sys.modules[module], name, value)
            return value
        if other is not None:
            return other(name)
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[module])) | names)

    return __getattr__, __dir__


def attribute(module: str, name: str, wrap: Callable[[Any], Any] | None = None) -> Any:
    """`module.name` (the module imported now), passed through `wrap` if given."""
    value = getattr(importlib.import_module(module), name)
    return value if wrap is None else wrap(value)
