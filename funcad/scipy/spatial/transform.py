"""funcad.scipy.spatial.transform: `Rotation` (quaternions, matrices, rotation vectors, MRPs,
Euler angles; composition, inverse, mean) and `Slerp`, as JAX's; both are pytrees.

>>> r = Rotation.from_rotvec([0.0, 0.0, 1.0])
>>> float(r.magnitude())
1.0
"""
from ._rotation import Rotation, Slerp

__all__ = ["Rotation", "Slerp"]
