"""PRNG building blocks (JAX's `extend.random`)."""
from ._random import (threefry2x32_p, threefry_2x32)

__all__ = ['threefry2x32_p', 'threefry_2x32']
