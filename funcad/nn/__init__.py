"""funcad.nn: the activation functions and helpers of JAX's nn namespace.

>>> import funcad, funcad.nn as nn
>>> float(funcad.grad(nn.relu)(0.0))   # JAX's convention at the kink
0.0
"""
from ._activations import (celu, elu, gelu, glu, hard_sigmoid, hard_silu, hard_swish, hard_tanh,
                           identity, leaky_relu, log1mexp, log_sigmoid, mish, relu, relu6, selu,
                           sigmoid, silu, soft_sign, softplus, sparse_plus, sparse_sigmoid,
                           squareplus, swish, tanh)
from ._attention import dot_product_attention
from ._functions import log_softmax, logmeanexp, logsumexp, one_hot, softmax, standardize
from ._scaled import scaled_matmul
from ._scaled_dot import get_scaled_dot_general_config, scaled_dot_general
from . import initializers
from ..core.errors import unsupported_name as _unsupported_name

__all__ = ["celu", "dot_product_attention", "elu", "gelu", "get_scaled_dot_general_config", "glu", "hard_sigmoid", "hard_silu",
           "hard_swish", "hard_tanh", "identity", "leaky_relu", "log1mexp", "log_sigmoid",
           "log_softmax", "logmeanexp", "logsumexp", "mish", "one_hot", "relu", "relu6", "scaled_dot_general", "scaled_matmul",
           "selu",
           "sigmoid", "silu", "soft_sign", "softmax", "softplus", "sparse_plus", "sparse_sigmoid",
           "squareplus", "standardize", "swish", "tanh"]


def __getattr__(name):
    raise _unsupported_name(__name__, name, globals(), None)
