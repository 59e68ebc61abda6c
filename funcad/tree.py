"""`funcad.tree`: the pytree functions under JAX's short names (`jax.tree`).

>>> import funcad
>>> funcad.tree.map(lambda x: x + 1, {"a": 1, "b": (2, None)})
{'a': 2, 'b': (3, None)}
>>> funcad.tree.leaves({"a": 1, "b": (2, None)})
[1, 2]
"""
from .core.pytree import (tree_flatten as flatten, tree_flatten_with_path as flatten_with_path,
                          tree_leaves as leaves, tree_leaves_with_path as leaves_with_path,
                          tree_map as map, tree_map_with_path as map_with_path,
                          tree_structure as structure, tree_unflatten as unflatten)
from .core.tree_util import (static, tree_all as all, tree_broadcast as broadcast,
                             tree_reduce as reduce, tree_reduce_associative as reduce_associative,
                             tree_transpose as transpose)

__all__ = ["all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path", "map",
           "map_with_path", "reduce", "reduce_associative", "static", "structure", "transpose",
           "unflatten"]
