"""numpy.i0, the modified Bessel function of order 0 (as scipy.special.i0)."""
__all__ = ["i0"]


def i0(x):
    """I0(x) = exp(|x|) i0e(|x|), with I0' = I1 (as jnp.i0).

    >>> import funcad.numpy as fnp
    >>> round(float(fnp.i0(1.0)), 6)
    1.266066
    """
    from ..scipy.special._incomplete import i0 as _i0  # funcad.scipy.special imports funcad.numpy
    return _i0(x)
