"""funcad.example_libraries: JAX's minimal optimizers and neural-network layers
(`optimizers` and `stax`), with the same signatures and numbers.

>>> from funcad.example_libraries import optimizers, stax
>>> init, update, get_params = optimizers.sgd(0.1)
>>> float(get_params(update(0, 1.0, init(1.0))))
0.9
"""
from . import optimizers, stax

__all__ = ["optimizers", "stax"]
