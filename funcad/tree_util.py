"""Public pytree API, as in `jax.tree_util` (the same functions without the
`tree_` prefix are in `funcad.tree`).

>>> from funcad.tree_util import tree_map, tree_flatten_with_path, keystr
>>> tree_map(lambda x: x * 2, {"w": [1, 2], "b": 3})
{'b': 6, 'w': [2, 4]}
>>> [keystr(p) for p, _ in tree_flatten_with_path({"w": [1, 2], "b": 3})[0]]
["['b']", "['w'][0]", "['w'][1]"]
"""

from .core.pytree import (DictKey, FlattenedIndexKey, GetAttrKey, PyTreeDef, PyTreeError,
                          SequenceKey, flatten_one_level, flatten_one_level_with_keys, is_tree_node,
                          keystr, register_dataclass, register_pytree_node,
                          register_pytree_node_class, register_pytree_with_keys,
                          register_pytree_with_keys_class, register_static, tree_flatten,
                          tree_flatten_with_path, tree_leaves, tree_leaves_with_path, tree_map,
                          tree_map_with_path, tree_structure, tree_unflatten, treedef_children,
                          treedef_is_leaf, treedef_tuple)
from .core.tree_util import (KeyEntry, KeyPath, Partial, all_leaves, default_registry, tree_all,
                             tree_broadcast, tree_reduce, tree_reduce_associative, tree_transpose)

__all__ = ["DictKey", "FlattenedIndexKey", "GetAttrKey", "KeyEntry", "KeyPath", "Partial",
           "PyTreeDef", "PyTreeError", "SequenceKey", "all_leaves", "default_registry",
           "flatten_one_level", "flatten_one_level_with_keys", "is_tree_node", "keystr",
           "register_dataclass", "register_pytree_node", "register_pytree_node_class",
           "register_pytree_with_keys", "register_pytree_with_keys_class", "register_static",
           "tree_all", "tree_broadcast", "tree_flatten", "tree_flatten_with_path", "tree_leaves",
           "tree_leaves_with_path", "tree_map", "tree_map_with_path", "tree_reduce",
           "tree_reduce_associative", "tree_structure", "tree_transpose", "tree_unflatten",
           "treedef_children", "treedef_is_leaf", "treedef_tuple"]
