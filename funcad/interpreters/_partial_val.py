"""JAX's `partial_eval.PartialVal`: a value that is either known (a constant) or
unknown (only its abstract value). Libraries (flax's lifted transforms) build
these to describe which inputs of a traced function are known.

>>> import numpy as np
>>> from funcad.core.avals import ShapedArray
>>> u = PartialVal.unknown(ShapedArray((2,), np.float32))
>>> u.is_known(), u.get_aval().str_short()
(False, 'f32[2]')
>>> k = PartialVal.known(3.0)
>>> k.is_known(), k.get_known()
(True, 3.0)
"""
from __future__ import annotations

from typing import Any

from ..core.avals import AbstractValue
from ..extend._api_util import shaped_abstractify

__all__ = ["PartialVal"]


class PartialVal(tuple):
    """A pair `(aval, const)`: `aval` is None when the value is known to be `const`."""

    def __new__(cls, xs: tuple[AbstractValue | None, Any]):
        pv, const = xs
        if pv is not None and not isinstance(pv, AbstractValue):
            raise TypeError(f"PartialVal: the first item must be an abstract value or None, got "
                            f"{type(pv).__name__}; use PartialVal.known(x) for a known value")
        if pv is not None and const is not None:
            raise ValueError("PartialVal: an unknown value (aval given) carries no constant; pass None")
        return tuple.__new__(cls, xs)

    @classmethod
    def known(cls, const: Any) -> "PartialVal":
        return cls((None, const))

    @classmethod
    def unknown(cls, aval: AbstractValue) -> "PartialVal":
        return cls((aval, None))

    def is_known(self) -> bool:
        return self[0] is None

    def get_known(self) -> Any:
        """The constant of a known value, else None."""
        return self[1] if self[0] is None else None

    def get_aval(self) -> AbstractValue:
        """The abstract value: the known constant's, or the one given."""
        if self[0] is not None:
            return self[0]
        return shaped_abstractify(self[1])
