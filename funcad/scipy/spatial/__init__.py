"""funcad.scipy.spatial: JAX's scipy.spatial (3-d rotations in `transform`).

>>> from funcad.scipy.spatial import transform
>>> transform.Rotation.identity().as_matrix().tolist()
[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
"""
from . import transform  # noqa: F401

__all__ = ["transform"]
