"""The sparse base class and the efficiency errors, as `jax.experimental.sparse` has them."""
from __future__ import annotations

import abc
import math
from typing import Sequence

__all__ = ["JAXSparse", "SparseEfficiencyError", "SparseEfficiencyWarning"]


class SparseEfficiencyError(ValueError):
    """A layout change would store many explicit zeros (raised with on_inefficient='error')."""


class SparseEfficiencyWarning(UserWarning):
    """A layout change stores many explicit zeros (on_inefficient='warn')."""


class JAXSparse(abc.ABC):
    """Base class of funcad's sparse arrays: a `data` buffer, index buffers and a static `shape`.

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> isinstance(sparse.BCOO.fromdense(np.eye(2)), sparse.JAXSparse)
    True
    """
    data: object
    shape: tuple

    __hash__ = None  # mutable-looking containers of arrays, as in JAX
    # NumPy operands defer to our reflected operators (ndarray @ BCOO calls __rmatmul__)
    __array_ufunc__ = None

    def __init__(self, args, *, shape: Sequence[int]):
        self.shape = tuple(int(s) for s in shape)

    @property
    @abc.abstractmethod
    def dtype(self): ...

    @property
    @abc.abstractmethod
    def nse(self) -> int: ...

    def __len__(self) -> int:
        return self.shape[0]

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        name = type(self).__name__
        try:
            text = f"{name}({self.dtype}{list(self.shape)}, nse={self.nse})"
        except Exception:
            text = f"{name}(<invalid>)"
        return text

    @abc.abstractmethod
    def tree_flatten(self): ...

    @classmethod
    @abc.abstractmethod
    def tree_unflatten(cls, aux_data, children): ...

    @abc.abstractmethod
    def transpose(self, axes=None): ...

    @abc.abstractmethod
    def todense(self): ...

    @property
    def T(self):
        return self.transpose()

    def block_until_ready(self):
        for leaf in self.tree_flatten()[0]:
            if hasattr(leaf, "block_until_ready"):
                leaf.block_until_ready()
        return self
