"""JAX's `jax.ad_checkpoint`: checkpoint policies, `checkpoint_name` and
`print_saved_residuals`.

A policy is `policy(prim, *avals, **params) -> bool` (or `Saveable` /
`Recompute`): given one primitive application whose inputs are all known in
reverse mode, whether its outputs may be saved for the backward pass rather
than recomputed there. `funcad.checkpoint(f, policy=...)` asks it of every
such equation of f (funcad/transforms/checkpoint.py).

>>> import funcad, funcad.numpy as fnp
>>> from funcad.ad_checkpoint import checkpoint_name, print_saved_residuals
>>> def f(x):
...     return fnp.sum(fnp.sin(checkpoint_name(fnp.cos(x), "c")))
>>> policy = funcad.checkpoint_policies.save_only_these_names("c")
>>> print_saved_residuals(funcad.checkpoint(f, policy=policy), fnp.ones(3))
f64[3] from the argument x
f64[3] named 'c'
"""

from .transforms.checkpoint_policies import checkpoint_policies
from .transforms.checkpoint import Recompute, Saveable, checkpoint_name, name_p
from .transforms.saved_residuals import print_saved_residuals

__all__ = ["Recompute", "Saveable", "checkpoint_name", "checkpoint_name_fwd", "checkpoint_policies",
           "name_p", "print_saved_residuals"]

checkpoint_name_fwd = checkpoint_name  # JAX's alias (the same outside its experimental remat3)
