"""The annotations of array arguments (`funcad.typing`): `ArrayLike` and `DTypeLike`.

>>> import numpy as np
>>> isinstance(np.float32(1), ArrayLike), isinstance([1.0], ArrayLike)
(True, False)
"""
import typing as _typing
from typing import Any as _Any, Protocol as _Protocol

import numpy as _np

from ..lowering.array import Array as _Array

__all__ = ["ArrayLike", "DTypeLike"]


@_typing.runtime_checkable
class _SupportsDType(_Protocol):
    @property
    def dtype(self, /) -> _np.dtype: ...


# Arrays (funcad's, NumPy's, tracers: isinstance(tracer, funcad.Array) holds), NumPy
# scalars and Python numbers; not sequences or strings, as in JAX.
ArrayLike = _Array | _np.ndarray | _np.bool_ | _np.number | bool | int | float | complex

# What _np.dtype accepts and funcad supports: 'float32', _np.float32, float, _np.dtype(...),
# or anything with a .dtype (funcad.numpy.float32); None excluded, as in JAX.
DTypeLike = str | type[_Any] | _np.dtype | _SupportsDType
