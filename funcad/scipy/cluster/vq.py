"""funcad.scipy.cluster.vq: assign observations to their nearest code, as JAX's
scipy.cluster.vq namespace does.

>>> import numpy as np
>>> vq(np.array([[0.0, 0.1], [0.9, 1.0]]), np.array([[1.0, 1.0], [0.0, 0.0]]))[0]
Array([1, 0], dtype=int64)
"""
from ... import numpy as _fnp
from ...core.avals import aval_of as _aval_of
from ...core.errors import FuncadValueError as _FuncadValueError
from ...arrays.dtypes import promote as _promote, to_inexact as _to_inexact

__all__ = ["vq"]


def vq(obs, code_book, check_finite: bool = True):
    """(code, dist): for each row of `obs` (an M x N array, or M values), the index of the
    nearest row of `code_book` (K x N, or K values) in Euclidean distance and that
    distance. `check_finite` is accepted for SciPy's signature and ignored, as in JAX.

    >>> import numpy as np
    >>> vq(np.array([0.2, 2.9]), np.array([0.0, 3.0]))[1]
    Array([0.2, 0.1], dtype=float64)
    """
    del check_finite  # no data-dependent check under tracing, as JAX's
    obs, code_book = (_to_inexact(a) for a in _promote(obs, code_book))
    ndim, cb_ndim = _aval_of(obs).ndim, _aval_of(code_book).ndim
    if ndim != cb_ndim:
        raise _FuncadValueError(f"Observation and code_book should have the same rank, got {ndim} and {cb_ndim}")
    if ndim == 1:
        obs, code_book = obs[:, None], code_book[:, None]
    elif ndim != 2:
        raise _FuncadValueError(f"vq takes 1-D or 2-D observations and code_book, got ndim {ndim}")
    dist = _fnp.linalg.norm(obs[:, None, :] - code_book[None, :, :], axis=-1)
    code = _fnp.argmin(dist, axis=-1)
    return code, _fnp.take_along_axis(dist, code[:, None], axis=-1)[:, 0]
