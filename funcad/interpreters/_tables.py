"""A mapping over one of funcad's rule tables that stores rules written with JAX's
calling convention adapted to funcad's, and hands rules back in JAX's convention."""
from __future__ import annotations

from collections.abc import MutableMapping
from typing import Callable


class RuleTable(MutableMapping):
    """`table[prim] = jax_rule` stores `to_funcad(prim, jax_rule)` in funcad's table;
    `table[prim]` returns the rule as registered, or funcad's own rule adapted with
    `to_jax(prim, rule)`."""

    def __init__(self, table: dict, to_funcad: Callable, to_jax: Callable):
        self._table, self._to_funcad, self._to_jax = table, to_funcad, to_jax

    def __getitem__(self, prim):
        rule = self._table[prim]
        original = getattr(rule, "jax_rule", None)
        return original if original is not None else self._to_jax(prim, rule)

    def __setitem__(self, prim, rule) -> None:
        adapted = self._to_funcad(prim, rule)
        adapted.jax_rule = rule
        self._table[prim] = adapted

    def __delitem__(self, prim) -> None:
        del self._table[prim]

    def __iter__(self):
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)

    def __contains__(self, prim) -> bool:
        return prim in self._table
