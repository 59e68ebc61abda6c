"""softmax, log_softmax, logsumexp, logmeanexp, standardize and one_hot of funcad.nn."""
from __future__ import annotations

import operator

import numpy as np

from .. import numpy as fnp
from ..core import options as _options
from ..core import x64
from ..core.avals import aval_of
from ..core.errors import FuncadTypeError, FuncadValueError
from ..core.trace import Tracer, bind_custom_jvp
from ..arrays.dtypes import asarray_or_tracer, to_inexact
from ..arrays.reductions import _norm_axes, logsumexp, max_or_identity
from ..primitives import elementwise as E
from ..core.errors import ShardingTypeError
from ..core.sharding import PartitionSpec
from ..core.typed_sharding import axes_of, explicit_out_sharding, spec_of
from ..primitives.sharding import out_sharded
from ..core.errors import ConcretizationError
from ..core.errors import AxisError
from ..transforms.eager_xla import jitted_like_jax

__all__ = ["log_softmax", "logmeanexp", "logsumexp", "one_hot", "softmax", "standardize"]


def _masked_max(x, axis, where):
    """max over `axis` (kept) of the entries `where` selects; -inf where none is."""
    return max_or_identity(x if where is None else fnp.where(where, x, -np.inf), axis)


def _masked_sum(x, axis, where):
    return fnp.sum(x if where is None else fnp.where(where, x, 0), axis, keepdims=True)


def softmax(x, axis=-1, where=None):
    """exp(x) / sum(exp(x)) along `axis`; entries masked out by `where` get 0.

    Its derivatives are JAX's: by default (`softmax_custom_jvp` False) those of the
    formula with the max held constant (stop_gradient); with
    `funcad.softmax_custom_jvp(True)` the rule y * (dx - sum(y * dx)).

    >>> import funcad.nn as nn, numpy as np
    >>> nn.softmax(np.array([0.0, 0.0])).tolist()
    [0.5, 0.5]
    """
    x = to_inexact(asarray_or_tracer(x))
    w = None if where is None else fnp.asarray(where, dtype=bool)
    if not _options.softmax_custom_jvp:
        return _softmax_formula(x, axis, w, E.stop_gradient)
    return _softmax_custom(x, axis, w)


def _softmax_custom(x, axis, w):
    """The softmax formula under the custom derivative rule (its own tangent's
    derivative uses the rule again, as JAX's custom_jvp)."""
    def value(x, *w):
        return [_softmax_formula(x, axis, w[0] if w else None, lambda m: m)]

    def jvp(primals, tangents):
        w = None if len(primals) == 1 else primals[1]
        y = _softmax_custom(primals[0], axis, w)
        t = tangents[0]
        if t is None:
            return [y], [None]
        return [y], [y * (t - _masked_sum(y * t, axis, w))]

    return bind_custom_jvp(value, jvp, [x] if w is None else [x, w])[0]


def _softmax_formula(x, axis, w, hold):
    """The softmax formula; `hold` is applied to the max it subtracts (JAX's default
    mode holds it constant for differentiation)."""
    unnormalized = fnp.exp(fnp.subtract(x if w is None else fnp.where(w, x, -np.inf),
                                        hold(_masked_max(x, axis, w))))
    out = unnormalized / _masked_sum(unnormalized, axis, w)
    return out if w is None else fnp.where(w, out, 0.0)


@jitted_like_jax(static_argnames=('axis',))
def log_softmax(x, axis=-1, where=None):
    """x - logsumexp(x) along `axis`; entries masked out by `where` get -inf.

    >>> import funcad.nn as nn, numpy as np
    >>> round(float(nn.log_softmax(np.array([0.0, 0.0]))[0]), 6)
    -0.693147
    """
    x = to_inexact(asarray_or_tracer(x))
    x_max = E.stop_gradient(_masked_max(x, axis, where))
    shifted = fnp.subtract(x if where is None else fnp.where(where, x, -np.inf), x_max)
    result = shifted - fnp.log(_masked_sum(fnp.exp(shifted), axis, where))
    return result if where is None else fnp.where(where, result, -np.inf)


def _count(x, axis, where, keepdims, dtype):
    shape = aval_of(x).shape
    if where is None:
        n = int(np.prod([shape[i] for i in _norm_axes(len(shape), axis)], dtype=np.int64))
        return np.asarray(n, dtype)
    w = fnp.broadcast_to(fnp.asarray(where, dtype=bool), shape)
    return fnp.sum(w, axis, dtype=dtype, keepdims=keepdims)


def logmeanexp(x, axis=None, where=None, keepdims: bool = False):
    """log(mean(exp(x))) along `axis`: logsumexp minus the log of the count.

    >>> import funcad.nn as nn, numpy as np
    >>> float(nn.logmeanexp(np.array([1.0, 1.0])))
    1.0
    """
    x = asarray_or_tracer(x)
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    return lse - fnp.log(_count(x, axis, where, keepdims, aval_of(lse).dtype))


@jitted_like_jax(static_argnames=('axis', 'epsilon'))
def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *,
                algorithm: str = "fast"):
    """(x - mean) / sqrt(variance + epsilon), the statistics taken along `axis`.

    `algorithm="fast"` takes the variance as mean(x**2) - mean(x)**2 (clipped at
    0), `"stable"` as mean((x - mean)**2); both as JAX.

    >>> import funcad.nn as nn, numpy as np
    >>> nn.standardize(np.array([1.0, 3.0]), epsilon=0.0).tolist()
    [-1.0, 1.0]
    """
    if algorithm not in ("fast", "stable"):
        raise FuncadValueError(f"Unknown algorithm {algorithm!r}. Expected 'fast' or 'stable'.")
    x = to_inexact(asarray_or_tracer(x))

    def masked_mean(v):
        if where is None:
            return fnp.mean(v, axis, keepdims=True)
        return _masked_sum(v, axis, where) / _count(v, axis, where, True, aval_of(v).dtype)

    if mean is None:
        mean = masked_mean(x)
    if variance is None:
        if algorithm == "stable":
            variance = masked_mean(fnp.square(fnp.subtract(x, mean)))
        else:
            variance = fnp.maximum(masked_mean(fnp.square(x)) - fnp.square(mean), 0)
    return fnp.subtract(x, mean) * E.rsqrt(to_inexact(fnp.add(variance, epsilon)))


def one_hot(x, num_classes: int, *, dtype=None, axis: int = -1, out_sharding=None):
    """A one-hot encoding of the integer array x: a new axis of size num_classes (laid
    out as `out_sharding` if given).

    Indices outside [0, num_classes) give all-zero rows, as in JAX.

    >>> import funcad.nn as nn, numpy as np
    >>> nn.one_hot(np.array([1, 0]), 3).tolist()
    [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]
    """
    if isinstance(num_classes, Tracer):
        raise ConcretizationError("one_hot needs a concrete num_classes (the size of the new axis); "
                                  "pass a Python int, or mark it static under jit")
    try:
        num_classes = operator.index(num_classes)
    except TypeError:
        raise FuncadTypeError(f"one_hot: num_classes must be an integer, got {num_classes!r}") from None
    x = asarray_or_tracer(x)
    nd = aval_of(x).ndim
    if not -(nd + 1) <= axis <= nd:
        raise AxisError(f"one_hot: axis {axis} is out of bounds for the {nd + 1}-d result")
    out_axis = axis % (nd + 1)
    typed = explicit_out_sharding(out_sharding, "one_hot")
    if typed is not None:  # JAX's rule: the spec's entries other than the new axis are x's
        entries = tuple(typed.spec) + (None,) * (nd + 1 - len(typed.spec))
        want, got = entries[:out_axis] + entries[out_axis + 1:], spec_of(aval_of(x))
        if tuple(map(axes_of, want)) != tuple(map(axes_of, got)):
            raise ShardingTypeError(
                f"The input part of spec in out_sharding should match the spec of `x`. Got "
                f"typeof(x).spec={PartitionSpec(*got)} and out_sharding.spec={PartitionSpec(*want)}; "
                f"reshard x (funcad.sharding.reshard) or change out_sharding")
    shape = [1] * nd
    shape.insert(out_axis, num_classes)
    classes = np.arange(num_classes, dtype=aval_of(x).dtype).reshape(shape)
    hot = fnp.equal(fnp.expand_dims(x, out_axis), classes)
    # JAX's default is the default float (float32 with x64 off), with no truncation warning
    return out_sharded(fnp.astype(hot, x64.default_float() if dtype is None else dtype), out_sharding)
