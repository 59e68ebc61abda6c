"""funcad.test_util: derivative checks against finite differences, as `jax.test_util`.

>>> import funcad.numpy as fnp
>>> from funcad.test_util import check_grads
>>> check_grads(lambda x: fnp.sin(x) * x, (0.7,), order=2)
"""
from .transforms.testing import check_grads, check_jvp, check_vjp, default_tolerance, numerical_jvp

__all__ = ["check_grads", "check_jvp", "check_vjp", "numerical_jvp", "default_tolerance"]
