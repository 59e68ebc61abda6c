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


def rosenbrock(np_):
    """The Rosenbrock function of a vector (jit(hessian) benchmarks)."""
    return lambda v: np_.sum(100.0 * (v[1:] - v[:-1] ** 2) ** 2 + (1 - v[:-1]) ** 2)


def logistic(np_):
    """One example's logistic loss; vmap(grad) of it gives per-example gradients."""
    return lambda w, xi, yi: np_.log1p(np_.exp(-yi * (xi @ w)))


def logistic_data(n=1000, d=100, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(d).astype(np.float32), rng.standard_normal((n, d)).astype(np.float32),
            np.sign(rng.standard_normal(n)).astype(np.float32))


def scan_loss(np_, scan):
    """A long scan of a small carry: 4-vector h_{t+1} = tanh(w * h_t + x_t), summed."""
    def loss(w, xs):
        def step(h, x):
            h = np_.tanh(w * h + x)
            return h, None
        h, _ = scan(step, np_.zeros(4, xs.dtype), xs)
        return np_.sum(h)
    return loss
