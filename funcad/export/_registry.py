"""Which pytree node types serialize, and under which names (JAX's
`register_pytree_node_serialization`, `register_namedtuple_serialization`)."""
from __future__ import annotations

import collections
import json
from typing import Any, Callable, Sequence

from ..core import pytree as _pt

__all__ = ["register_pytree_node_serialization", "register_namedtuple_serialization"]

# node type -> (serialized name, serialize_auxdata)
serialization_registry: dict[type, tuple[str, Callable[[Any], bytes]]] = {}
# serialized name -> (node type, deserialize_auxdata, from_children)
deserialization_registry: dict[str, tuple[type, Callable[[bytes], Any], Callable]] = {}


def _is_namedtuple(nodetype) -> bool:
    return (isinstance(nodetype, type) and issubclass(nodetype, tuple)
            and isinstance(getattr(nodetype, "_fields", None), Sequence)
            and all(isinstance(f, str) for f in nodetype._fields))


def register_pytree_node_serialization(nodetype: type, *, serialized_name: str,
                                       serialize_auxdata: Callable[[Any], bytes],
                                       deserialize_auxdata: Callable[[bytes], Any],
                                       from_children: Callable | None = None) -> type:
    """Let `nodetype` (a registered pytree node) appear in an exported function's
    argument or result structure: its aux data is written with `serialize_auxdata` under
    `serialized_name`. Returns `nodetype` (usable as a class decorator).

    >>> import funcad
    >>> class Box:
    ...     def __init__(self, v): self.v = v
    >>> funcad.tree_util.register_pytree_node(Box, lambda b: ((b.v,), None), lambda a, c: Box(*c))
    >>> register_pytree_node_serialization(Box, serialized_name="doc.Box",
    ...     serialize_auxdata=lambda a: b"", deserialize_auxdata=lambda b: None) is Box
    True
    """
    if nodetype in serialization_registry:
        raise ValueError(f"Duplicate serialization registration for type `{nodetype}`. Previous "
                         f"registration was with serialized_name `{serialization_registry[nodetype][0]}`.")
    if serialized_name in deserialization_registry:
        raise ValueError(f"Duplicate serialization registration for serialized_name `{serialized_name}`. "
                         f"Previous registration was for type `{deserialization_registry[serialized_name][0]}`.")
    if from_children is None:
        node = _pt._registry.get(nodetype)
        if node is None:
            raise ValueError("If `from_children` is not present, you must call first "
                             f"`funcad.tree_util.register_pytree_node` for `{nodetype}`")
        from_children = node.unflatten
    serialization_registry[nodetype] = (serialized_name, serialize_auxdata)
    deserialization_registry[serialized_name] = (nodetype, deserialize_auxdata, from_children)
    return nodetype


def register_namedtuple_serialization(nodetype: type, *, serialized_name: str) -> type:
    """Let the namedtuple class `nodetype` appear in an exported function's argument or
    result structure, under `serialized_name` (its field names travel with it).

    >>> import collections
    >>> Point = collections.namedtuple("Point", "x y")
    >>> register_namedtuple_serialization(Point, serialized_name="doc.Point") is Point
    True
    """
    if not _is_namedtuple(nodetype):
        raise ValueError("Use `funcad.export.register_pytree_node_serialization` for types other "
                         "than `collections.namedtuple`.")

    def from_children(fields, children):
        return nodetype(**dict(zip(fields, children)))

    return register_pytree_node_serialization(
        nodetype, serialized_name=serialized_name,
        serialize_auxdata=lambda _: json.dumps(nodetype._fields).encode("utf-8"),
        deserialize_auxdata=lambda b: json.loads(b.decode("utf-8")),
        from_children=from_children)


def _ordereddict_keys(keys) -> bytes:
    if isinstance(keys, Sequence) and all(isinstance(k, str) for k in keys):
        return json.dumps(list(keys)).encode("utf-8")
    raise ValueError("Serialization of collections.OrderedDict is supported only when the keys "
                     f"are strings. Found keys: {keys}.")


register_pytree_node_serialization(
    collections.OrderedDict, serialized_name="collections.OrderedDict",
    serialize_auxdata=_ordereddict_keys,
    deserialize_auxdata=lambda b: tuple(json.loads(b.decode("utf-8"))))
