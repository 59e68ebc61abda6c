"""numpy.i0, the modified Bessel function of order 0 (as scipy.special.i0)."""
import numpy as np

from ..arrays import ufuncs as U
from ..arrays.dtypes import real_args
from ..core.avals import aval_of
from ..primitives import special as S
from ..transforms.custom import custom_jvp

__all__ = ["i0"]


def i0(x):
    """I0(x) = exp(|x|) i0e(|x|), with I0' = I1 (as jnp.i0).

    >>> import funcad.numpy as fnp
    >>> round(float(fnp.i0(1.0)), 6)
    1.266066
    """
    return _i0(*real_args("i0", x))


@custom_jvp
def _i0(x):
    ax = U.abs(x)
    return U.exp(ax) * S.bessel_i0e(ax)


@custom_jvp
def _i1(x):
    return U.exp(U.abs(x)) * S.bessel_i1e(x)


_i0.defjvp(lambda primals, tangents: (_i0(primals[0]), tangents[0] * _i1(primals[0])))


def _i1_prime(x):
    # I1'(x) = I0(x) - I1(x)/x; near 0, where that is 0/0, its Maclaurin series.
    cutoff = float(np.sqrt(np.finfo(aval_of(x).dtype).eps))
    near = U.less_equal(U.abs(x), cutoff)
    safe = U.where(near, 1.0, x)
    x2 = U.square(x)
    return U.where(near, 0.5 + x2 * (3.0 / 16.0 + x2 * (5.0 / 384.0)), _i0(safe) - _i1(safe) / safe)


_i1.defjvp(lambda primals, tangents: (_i1(primals[0]), tangents[0] * _i1_prime(primals[0])))
