"""Public pytree API, as in `jax.tree_util`."""
from .core.pytree import (PyTreeDef, PyTreeError, register_dataclass, register_pytree_node,
                          register_pytree_node_class, tree_all, tree_flatten, tree_leaves,
                          tree_map, tree_reduce, tree_structure, tree_transpose, tree_unflatten)

__all__ = ["PyTreeDef", "PyTreeError", "register_dataclass", "register_pytree_node",
           "register_pytree_node_class", "tree_all", "tree_flatten", "tree_leaves", "tree_map",
           "tree_reduce", "tree_structure", "tree_transpose", "tree_unflatten"]
