"""Op-table rows of funcad.nn, on domains where each function is smooth."""
import numpy as np

import funcad.nn as nn
from tests.op_table import AWAY, U, op

S23 = (2, 3)


def _jnn():
    import jax.nn as jnn
    return jnn


def _sp_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis, keepdims=True))
    return (e / e.sum(axis, keepdims=True)).astype(x.dtype)


def _np_gelu_tanh(x):
    return (0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))).astype(x.dtype)


_ALPHA, _SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
_sig = lambda x: 1 / (1 + np.exp(-x))  # noqa: E731

# (name, funcad, numpy reference, generator); the JAX oracle is jax.nn's function of that name.
_ROWS = [
    ("relu", nn.relu, lambda x: np.maximum(x, 0), AWAY(S23)),
    ("relu6", nn.relu6, lambda x: np.clip(x, 0, 6), AWAY(S23, lo=0.3, hi=5.5)),
    ("elu", nn.elu, lambda x: np.where(x > 0, x, np.expm1(x)), AWAY(S23)),
    ("selu", nn.selu, lambda x: _SCALE * np.where(x > 0, x, _ALPHA * np.expm1(x)), AWAY(S23)),
    ("celu", nn.celu, lambda x: np.maximum(x, 0) + np.expm1(np.minimum(x, 0)), AWAY(S23)),
    ("gelu", nn.gelu, _np_gelu_tanh, U(S23)),
    ("silu", nn.silu, lambda x: x * _sig(x), U(S23)),
    ("sigmoid", nn.sigmoid, _sig, U(S23)),
    ("log_sigmoid", nn.log_sigmoid, lambda x: -np.logaddexp(0, -x), U(S23, lo=-6, hi=6)),
    ("softplus", nn.softplus, lambda x: np.logaddexp(x, 0), U(S23, lo=-6, hi=6)),
    ("soft_sign", nn.soft_sign, lambda x: x / (np.abs(x) + 1), AWAY(S23)),
    ("hard_tanh", nn.hard_tanh, lambda x: np.clip(x, -1, 1), AWAY(S23, lo=0.2, hi=2.0)),
    ("hard_sigmoid", nn.hard_sigmoid, lambda x: np.clip(x + 3, 0, 6) / 6, U(S23)),
    ("hard_silu", nn.hard_silu, lambda x: x * np.clip(x + 3, 0, 6) / 6, U(S23)),
    ("leaky_relu", nn.leaky_relu, lambda x: np.where(x >= 0, x, 0.01 * x), AWAY(S23)),
    ("sparse_plus", nn.sparse_plus, lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)),
     U(S23, lo=-0.9, hi=0.9)),
    ("sparse_sigmoid", nn.sparse_sigmoid, lambda x: np.clip((x + 1) / 2, 0, 1), U(S23, lo=-0.9, hi=0.9)),
    ("squareplus", nn.squareplus, lambda x: (x + np.sqrt(x * x + 4)) / 2, U(S23)),
    ("mish", nn.mish, lambda x: x * np.tanh(np.logaddexp(x, 0)), U(S23)),
    ("tanh", nn.tanh, np.tanh, U(S23)),
    ("identity", nn.identity, lambda x: x, U(S23)),
    ("log1mexp", nn.log1mexp, lambda x: np.log(-np.expm1(-x)), U(S23, lo=0.2, hi=3.0)),
    ("softmax", nn.softmax, _sp_softmax, U((2, 3, 4))),
    ("log_softmax", nn.log_softmax, lambda x: np.log(_sp_softmax(x)), U((2, 3, 4))),
    ("logsumexp", nn.logsumexp, lambda x: np.log(np.exp(x).sum()).astype(x.dtype), U((2, 3))),
    ("glu", nn.glu, lambda x: x[..., :2] * _sig(x[..., 2:]), U((3, 4))),
]
for _n, _f, _r, _g in _ROWS:
    op(f"nn_{_n}", _f, _r, _g, (lambda n: lambda *a: getattr(_jnn(), n)(*a))(_n))

op("nn_gelu_exact", lambda x: nn.gelu(x, approximate=False),
   lambda x: (0.5 * x * (1 + __import__("scipy.special").special.erf(x / np.sqrt(2)))).astype(x.dtype), U(S23),
   lambda x: _jnn().gelu(x, approximate=False))
op("nn_elu_alpha", lambda x: nn.elu(x, 0.5), lambda x: np.where(x > 0, x, 0.5 * np.expm1(x)), AWAY(S23),
   lambda x: _jnn().elu(x, 0.5))
op("nn_softmax_axis0", lambda x: nn.softmax(x, axis=0), lambda x: _sp_softmax(x, 0), U((3, 2)),
   lambda x: _jnn().softmax(x, axis=0))
op("nn_log_softmax_axes", lambda x: nn.log_softmax(x, axis=(0, 2)),
   lambda x: (x - np.log(np.exp(x).sum((0, 2), keepdims=True))).astype(x.dtype), U((2, 2, 3)),
   lambda x: _jnn().log_softmax(x, axis=(0, 2)))
op("nn_logmeanexp_axis", lambda x: nn.logmeanexp(x, axis=1),
   lambda x: np.log(np.exp(x).mean(1)).astype(x.dtype), U((2, 3)), lambda x: _jnn().logmeanexp(x, axis=1))
op("nn_standardize", nn.standardize,
   lambda x: ((x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)).astype(x.dtype),
   U((2, 4)), lambda x: _jnn().standardize(x), rtol=1e-4)
# dot_product_attention runs its softmax in float32 whatever the input dtype (as JAX), so
# it is compared with JAX at float32 tolerance in tests/nn/test_nn.py rather than here.
