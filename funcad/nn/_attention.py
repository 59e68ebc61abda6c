"""dot_product_attention: JAX's reference ("xla") implementation, with grouped heads."""
from __future__ import annotations

import numpy as np

from .. import numpy as fnp
from ..core.avals import aval_of
from ..core.errors import FuncadValueError
from ..arrays.dtypes import asarray_or_tracer
from ..arrays.reductions import logsumexp
from ..primitives import elementwise as E
from ._functions import softmax

__all__ = ["dot_product_attention"]


def _ensure_4d(t):
    t = asarray_or_tracer(t)
    nd = aval_of(t).ndim
    return fnp.reshape(t, (1,) * (4 - nd) + aval_of(t).shape) if nd < 4 else t


def _check(t, shape, dtype, name):
    a = aval_of(t)
    if a.ndim != len(shape):
        raise FuncadValueError(f"dot_product_attention: {name} ndim should be {len(shape)}, but got {a.ndim}")
    if dtype is not None and a.dtype != dtype:
        raise FuncadValueError(f"dot_product_attention: {name} dtype should be {np.dtype(dtype)}, "
                               f"but got {a.dtype}")
    if any(s != -1 and d != s for s, d in zip(shape, a.shape)):
        raise FuncadValueError(f"dot_product_attention: {name} shape should be {list(shape)} "
                               f"(-1: any), but got {a.shape}")


def _grouped(t, K, G):
    """A (B|1, N|1, T|1, S|1) bias or mask, laid out as (B, K, G, T, S) for grouped heads."""
    tb, tn, tt, ts = aval_of(t).shape
    return fnp.reshape(t, (tb, 1, 1, tt, ts) if tn == 1 else (tb, K, G, tt, ts))


def _large_negative(dtype):
    return np.asarray(-0.7 * min(np.finfo(dtype).max, np.finfo(np.float32).max), dtype)


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale: float | None = None,
                          is_causal: bool = False, query_seq_lengths=None,
                          key_value_seq_lengths=None, local_window_size=None,
                          implementation: str | None = None, return_residual: bool = False):
    """softmax(Q Kᵀ * scale + bias, masked) V for each head, as JAX's nn.dot_product_attention.

    Shapes: query (B, T, N, H) or (T, N, H); key and value (B, S, K, H) or
    (S, K, H), where N is a multiple of K (grouped-query attention; K == 1 is
    multi-query). `bias` and `mask` (boolean, True = attend) broadcast to
    (B, N, T, S). `scale` defaults to 1/sqrt(H). The softmax runs in float32,
    as in JAX. Only the reference implementation exists (`implementation`
    None or "xla").

    >>> import funcad.nn as nn, numpy as np
    >>> q = k = v = np.ones((2, 1, 4))
    >>> nn.dot_product_attention(q, k, v).shape
    (2, 1, 4)
    """
    if implementation not in (None, "xla"):
        raise FuncadValueError(f"dot_product_attention: implementation {implementation!r} is not "
                               "available in funcad; use None or 'xla' (the reference implementation)")
    out_shape = aval_of(asarray_or_tracer(query)).shape
    q, k, v = _ensure_4d(query), _ensure_4d(key), _ensure_4d(value)
    bias = None if bias is None else _ensure_4d(bias)
    mask = None if mask is None else _ensure_4d(mask)
    B, S, K, H = aval_of(k).shape
    _check(v, [B, S, K, H], aval_of(k).dtype, "value")
    _check(q, [B, -1, -1, H], aval_of(k).dtype, "query")
    if mask is not None:
        _check(mask, [-1] * 4, np.dtype(bool), "mask")
    if bias is not None:
        _check(bias, [-1] * 4, None, "bias")
    q_len = None if query_seq_lengths is None else asarray_or_tracer(query_seq_lengths)
    kv_len = None if key_value_seq_lengths is None else asarray_or_tracer(key_value_seq_lengths)
    for t, name in ((q_len, "query_seq_lengths"), (kv_len, "key_value_seq_lengths")):
        if t is not None:
            _check(t, [B], np.dtype(np.int32), name)
    T, N = aval_of(q).shape[1:3]
    if N % K:
        raise FuncadValueError(f"The number of query heads must be a multiple of key/value heads, "
                               f"but got {N} vs {K}")
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)
    G = N // K
    scale = 1.0 / np.sqrt(H) if scale is None else scale

    q5 = fnp.reshape(q, (B, T, K, G, H))
    logits_dtype = np.promote_types(aval_of(q).dtype, np.float32)
    logits = fnp.astype(fnp.einsum("btkgh,bskh->bkgts", q5, k), logits_dtype)
    logits = logits * np.asarray(scale, logits_dtype)
    if bias is not None:
        logits = fnp.astype(logits + _grouped(bias, K, G), logits_dtype)

    keep = None
    if mask is not None:
        keep = _grouped(mask, K, G)
    static = np.ones((T, S), bool)
    if is_causal:
        static &= np.tri(T, S, dtype=bool)
    if local_window_size is not None:
        left, right = local_window_size
        qi, ki = np.arange(T)[:, None], np.arange(S)[None, :]
        static &= (qi <= ki + left) & (qi >= ki - right)
    if is_causal or local_window_size is not None:
        keep = static if keep is None else fnp.logical_and(keep, static)
    if q_len is not None or kv_len is not None:
        pad = np.ones((1, T, S), bool)
        if q_len is not None:
            pad = fnp.logical_and(pad, fnp.less(np.arange(T)[None, :, None], q_len[:, None, None]))
        if kv_len is not None:
            pad = fnp.logical_and(pad, fnp.less(np.arange(S)[None, None, :], kv_len[:, None, None]))
        pad = fnp.reshape(pad, (aval_of(pad).shape[0], 1, 1, T, S))
        keep = pad if keep is None else fnp.logical_and(keep, pad)
    if keep is not None:
        logits = fnp.where(keep, logits, _large_negative(logits_dtype))

    logits32 = fnp.astype(logits, np.float32)
    probs = fnp.astype(softmax(logits32, axis=-1), aval_of(k).dtype)
    encoded = fnp.einsum("bkgts,bskh->btkgh", probs, v)
    if q_len is not None:
        keep_q = fnp.less(np.arange(T)[None, :], q_len[:, None])
        encoded = encoded * fnp.astype(fnp.reshape(keep_q, (B, T, 1, 1, 1)), aval_of(encoded).dtype)
    out = fnp.reshape(encoded, out_shape)
    if not return_residual:
        return out
    lse = fnp.astype(logsumexp(logits32, axis=-1), aval_of(k).dtype)  # (B, K, G, T)
    lse = fnp.reshape(fnp.transpose(lse, (0, 3, 1, 2)), out_shape[:-1])
    return out, E.stop_gradient(lse)
