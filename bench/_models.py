"""The models the benchmarks share, written once for any NumPy-like namespace."""
from __future__ import annotations

import numpy as np


def mlp_loss(np_):
    """Softmax cross-entropy of a tanh MLP, with np_ = funcad.numpy, jax.numpy or autograd.numpy."""
    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = np_.tanh(h @ w + b)
        w, b = params[-1]
        logits = h @ w + b
        m = np_.max(logits, axis=1, keepdims=True)
        lse = np_.log(np_.sum(np_.exp(logits - m), axis=1, keepdims=True)) + m
        return -np_.mean(np_.sum((logits - lse) * y, axis=1))
    return loss


def mlp_data(sizes=(784, 512, 512, 10), batch=128, dtype=np.float32, seed=0):
    """Parameters, inputs and one-hot labels for the issue's 784-512-512-10 MLP at batch 128."""
    rng = np.random.default_rng(seed)
    params = [((rng.standard_normal((m, n)) / np.sqrt(m)).astype(dtype), np.zeros(n, dtype))
              for m, n in zip(sizes[:-1], sizes[1:])]
    x = rng.standard_normal((batch, sizes[0])).astype(dtype)
    y = np.eye(sizes[-1], dtype=dtype)[rng.integers(0, sizes[-1], batch)]
    return params, x, y
