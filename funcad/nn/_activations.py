"""Activation functions of funcad.nn, as compositions of funcad.numpy.

Kinks follow JAX: relu'(0) = 0 and relu6'(0) = relu6'(6) = 0 (through
custom_jvp rules, as JAX defines them); the others take whatever branch the
`where` in their definition picks at the kink.
"""
from __future__ import annotations

import numpy as np

from .. import numpy as fnp
from ..core.avals import aval_of
from ..core.errors import FuncadValueError
from ..arrays.dtypes import asarray_or_tracer, to_inexact
from ..primitives import elementwise as E
from ..transforms.custom import custom_jvp

__all__ = ["celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh",
           "identity", "leaky_relu", "log1mexp", "log_sigmoid", "mish", "relu", "relu6", "selu",
           "sigmoid", "silu", "soft_sign", "softplus", "sparse_plus", "sparse_sigmoid",
           "squareplus", "swish", "tanh"]


def identity(x):
    """The identity activation: x unchanged.

    >>> import funcad.nn as nn
    >>> float(nn.identity(2.0))
    2.0
    """
    return asarray_or_tracer(x)


@custom_jvp
def relu(x):
    """max(x, 0), with derivative 0 at x == 0 (as JAX).

    >>> import funcad, funcad.nn as nn
    >>> float(funcad.grad(nn.relu)(0.0))
    0.0
    """
    return fnp.maximum(x, 0)


relu.defjvps(lambda g, ans, x: fnp.where(fnp.greater(x, 0), g, fnp.zeros_like(g)))


@custom_jvp
def relu6(x):
    """min(max(x, 0), 6), with derivative 0 at both kinks (as JAX).

    >>> import funcad.nn as nn
    >>> float(nn.relu6(7.0))
    6.0
    """
    return fnp.minimum(fnp.maximum(x, 0), 6.0)


relu6.defjvps(lambda g, ans, x: fnp.where(fnp.logical_and(fnp.greater(x, 0), fnp.less(x, 6)),
                                           g, fnp.zeros_like(g)))


def squareplus(x, b=4):
    """(x + sqrt(x**2 + b)) / 2, a smooth relu.

    >>> import funcad.nn as nn
    >>> float(nn.squareplus(0.0))
    1.0
    """
    x = to_inexact(asarray_or_tracer(x))
    return fnp.add(x, fnp.sqrt(fnp.add(fnp.square(x), b))) / 2


def softplus(x):
    """log(1 + exp(x)), computed stably as logaddexp(x, 0).

    >>> import funcad.nn as nn
    >>> float(nn.softplus(0.0))
    0.6931471805599453
    """
    return fnp.logaddexp(x, 0.0)


def sparse_plus(x):
    """0 for x <= -1, (x + 1)**2 / 4 on (-1, 1), x for x >= 1.

    >>> import funcad.nn as nn
    >>> float(nn.sparse_plus(0.0))
    0.25
    """
    x = to_inexact(asarray_or_tracer(x))
    return fnp.where(fnp.less_equal(x, -1.0), 0.0,
                     fnp.where(fnp.greater_equal(x, 1.0), x, fnp.square(x + 1.0) / 4))


def soft_sign(x):
    """x / (|x| + 1).

    >>> import funcad.nn as nn
    >>> float(nn.soft_sign(1.0))
    0.5
    """
    x = to_inexact(asarray_or_tracer(x))
    return x / (fnp.abs(x) + 1)


def sigmoid(x):
    """1 / (1 + exp(-x)) (the logistic primitive).

    >>> import funcad.nn as nn
    >>> float(nn.sigmoid(0.0))
    0.5
    """
    return E.logistic(to_inexact(asarray_or_tracer(x)))


def sparse_sigmoid(x):
    """clip((x + 1) / 2, 0, 1), the derivative of sparse_plus.

    >>> import funcad.nn as nn
    >>> float(nn.sparse_sigmoid(0.0))
    0.5
    """
    return 0.5 * fnp.clip(fnp.add(x, 1.0), 0.0, 2.0)


def silu(x):
    """x * sigmoid(x) (also called swish).

    >>> import funcad.nn as nn
    >>> float(nn.silu(0.0))
    0.0
    """
    x = to_inexact(asarray_or_tracer(x))
    return x * sigmoid(x)


swish = silu


def mish(x):
    """x * tanh(softplus(x)).

    >>> import funcad.nn as nn
    >>> round(float(nn.mish(1.0)), 6)
    0.865098
    """
    x = to_inexact(asarray_or_tracer(x))
    return x * fnp.tanh(softplus(x))


def log_sigmoid(x):
    """log(sigmoid(x)) = -softplus(-x), stable for large |x|.

    >>> import funcad.nn as nn
    >>> float(nn.log_sigmoid(-1000.0))
    -1000.0
    """
    return fnp.negative(softplus(fnp.negative(to_inexact(asarray_or_tracer(x)))))


def elu(x, alpha=1.0):
    """x for x > 0, alpha * (exp(x) - 1) otherwise.

    >>> import funcad.nn as nn
    >>> float(nn.elu(2.0))
    2.0
    """
    x = to_inexact(asarray_or_tracer(x))
    pos = fnp.greater(x, 0)
    return fnp.where(pos, x, fnp.multiply(alpha, fnp.expm1(fnp.where(pos, 0.0, x))))


def leaky_relu(x, negative_slope=1e-2):
    """x for x >= 0, negative_slope * x otherwise.

    >>> import funcad.nn as nn
    >>> float(nn.leaky_relu(-1.0))
    -0.01
    """
    x = to_inexact(asarray_or_tracer(x))
    return fnp.where(fnp.greater_equal(x, 0), x, fnp.multiply(negative_slope, x))


def hard_tanh(x):
    """x clipped to [-1, 1]; derivative 1 at the kinks +-1 (as JAX).

    >>> import funcad.nn as nn
    >>> float(nn.hard_tanh(3.0))
    1.0
    """
    x = asarray_or_tracer(x)
    return fnp.where(fnp.greater(x, 1), 1, fnp.where(fnp.less(x, -1), -1, x))


def celu(x, alpha=1.0):
    """max(x, 0) + alpha * expm1(min(x, 0) / alpha), continuously differentiable.

    >>> import funcad.nn as nn
    >>> float(nn.celu(1.0))
    1.0
    """
    x = to_inexact(asarray_or_tracer(x))
    return fnp.maximum(x, 0.0) + fnp.multiply(alpha, fnp.expm1(fnp.divide(fnp.minimum(x, 0.0), alpha)))


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(x):
    """scale * elu(x, alpha) with the self-normalising constants.

    >>> import funcad.nn as nn
    >>> round(float(nn.selu(1.0)), 6)
    1.050701
    """
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def gelu(x, approximate: bool = True):
    """Gaussian error linear unit: x * Phi(x), by default its tanh approximation.

    >>> import funcad.nn as nn
    >>> round(float(nn.gelu(1.0, approximate=False)), 6)
    0.841345
    """
    x = to_inexact(asarray_or_tracer(x))
    dt = aval_of(x).dtype
    if approximate:
        # funcad ops, not NumPy's operators: a 0-d bfloat16 x would become a NumPy scalar,
        # which ml_dtypes widens when multiplied by a Python float
        c = np.asarray(np.sqrt(2 / np.pi), dt)
        inner = fnp.multiply(c, fnp.add(x, fnp.multiply(0.044715, fnp.power(x, 3))))
        return fnp.multiply(x, fnp.multiply(0.5, fnp.add(1.0, fnp.tanh(inner))))
    return 0.5 * x * E.erfc(x * -np.asarray(np.sqrt(0.5), dt))


def glu(x, axis: int = -1):
    """Gated linear unit: the first half of `axis` times sigmoid of the second half.

    >>> import funcad.nn as nn, numpy as np
    >>> nn.glu(np.array([2.0, 0.0])).tolist()
    [1.0]
    """
    x = asarray_or_tracer(x)
    size = aval_of(x).shape[axis]
    if size % 2:
        raise FuncadValueError(f"glu splits axis {axis} in two halves, but its size is {size}; "
                               "give it an even size")
    x1, x2 = fnp.split(x, 2, axis)
    return x1 * sigmoid(x2)


def hard_sigmoid(x):
    """relu6(x + 3) / 6.

    >>> import funcad.nn as nn
    >>> float(nn.hard_sigmoid(0.0))
    0.5
    """
    return relu6(fnp.add(x, 3.0)) / 6.0


def hard_silu(x):
    """x * hard_sigmoid(x) (also called hard_swish).

    >>> import funcad.nn as nn
    >>> float(nn.hard_silu(3.0))
    3.0
    """
    x = to_inexact(asarray_or_tracer(x))
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def tanh(x):
    """Hyperbolic tangent (funcad.numpy.tanh).

    >>> import funcad.nn as nn
    >>> float(nn.tanh(0.0))
    0.0
    """
    return fnp.tanh(x)


@custom_jvp
def log1mexp(x):
    """log(1 - exp(-x)) for x >= 0, accurate near 0 and for large x.

    >>> import funcad.nn as nn
    >>> round(float(nn.log1mexp(1.0)), 6)
    -0.458675
    """
    x = to_inexact(asarray_or_tracer(x))
    return fnp.where(fnp.less(x, np.log(2.0)), fnp.log(-fnp.expm1(-x)), fnp.log1p(-fnp.exp(-x)))


log1mexp.defjvps(lambda g, ans, x: g / fnp.expm1(x))
