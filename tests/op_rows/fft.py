"""Op-table rows of funcad.numpy.fft: every transform, with n/s, axis/axes, norm,
odd lengths, padding and cropping, more than three axes, and the helpers.

The table's rows take and return real arrays, so a complex input is given as
two real arrays (real and imaginary parts) and a complex output is returned
as the pair (real part, imaginary part); the derivative checks then cover
every real direction of the complex values.
"""
import numpy as np

import funcad.lax as lax
import funcad.numpy as fnp
from tests.op_table import U, op

_COMPLEX_OUT = {"fft", "ifft", "rfft", "ihfft", "fft2", "ifft2", "rfft2", "fftn", "ifftn", "rfftn"}


def _jnp():
    import jax.numpy as jnp
    return jnp


def _jlax():
    import jax.lax as jl
    return jl


def _row(name, fn, shape, complex_in, rtol=None, **kw):
    """A row for funcad.numpy.fft.`fn`(x, **kw), checked against numpy.fft and jax.numpy.fft."""
    split = fn in _COMPLEX_OUT

    def wrap(mod, make, real, imag):
        def call(*xs):
            x = make(*xs) if complex_in else xs[0]
            y = getattr(mod.fft, fn)(x, **kw)
            return (real(y), imag(y)) if split else y
        return call

    fun = wrap(fnp, lax.complex, fnp.real, fnp.imag)
    ref = wrap(np, lambda a, b: a + 1j * b, np.real, np.imag)

    def jax_fun(*xs):
        jnp = _jnp()
        return wrap(jnp, _jlax().complex, jnp.real, jnp.imag)(*xs)

    op(name, fun, ref, U(shape, shape) if complex_in else U(shape), jax_fun, rtol=rtol)


# ---------------------------------------------------------------- 1-D ----
_row("fft_complex", "fft", (2, 5), True)
_row("fft_real_pad_n8", "fft", (3, 5), False, n=8)
_row("fft_crop_axis0_ortho", "fft", (4, 3), True, n=3, axis=0, norm="ortho")
_row("ifft_forward", "ifft", (2, 6), True, norm="forward")
_row("ifft_pad_n7", "ifft", (2, 4), True, n=7, axis=1)
_row("rfft_odd", "rfft", (2, 7), False)
_row("rfft_crop_axis0_ortho", "rfft", (5, 3), False, n=4, axis=0, norm="ortho")
_row("irfft_default_n", "irfft", (2, 5), True)
_row("irfft_pad_odd_n9", "irfft", (3, 4), True, n=9)
_row("irfft_crop_n5_forward", "irfft", (2, 4), True, n=5, norm="forward")
_row("hfft_default_n", "hfft", (2, 4), True)
_row("hfft_n5_ortho_axis0", "hfft", (4, 2), True, n=5, axis=0, norm="ortho")
_row("ihfft_even", "ihfft", (2, 6), False)
_row("ihfft_n5_forward", "ihfft", (2, 4), False, n=5, norm="forward")

# ------------------------------------------------------------- 2-D, N-D ----
_row("fft2_complex", "fft2", (2, 3, 4), True)
_row("ifft2_s_axes", "ifft2", (3, 2, 4), True, s=(4, 3), axes=(0, 2))
_row("rfft2_odd", "rfft2", (3, 5), False, norm="ortho")
_row("irfft2_s", "irfft2", (3, 4), True, s=(3, 5), axes=(0, 1))
_row("fftn_axes02", "fftn", (2, 3, 4), True, axes=(0, 2))
_row("ifftn_all_forward", "ifftn", (2, 3, 2), True, norm="forward")
_row("rfftn_s_pad", "rfftn", (2, 3, 3), False, s=(2, 4, 5), axes=(0, 1, 2))
_row("irfftn_axes_reordered", "irfftn", (3, 2, 3), True, axes=(2, 0), s=(4, 3))
_row("fftn_four_axes", "fftn", (2, 2, 3, 2), True)
_row("rfftn_four_axes", "rfftn", (2, 2, 2, 3), False, axes=(3, 1, 0, 2))
_row("irfftn_four_axes", "irfftn", (2, 2, 2, 3), True, s=(2, 2, 2, 4), axes=(0, 1, 2, 3))

# ------------------------------------------------------------ compositions ----
_FILTER = np.array([1.0 - 0.5j, 0.3 + 0.2j, -0.7j, 0.9, 0.2 - 0.1j, -0.4 + 0.6j])


def _filter_power(mod):
    def f(x):
        return mod.abs(mod.fft.ifft(mod.fft.fft(x) * _FILTER.astype(np.result_type(x.dtype, np.complex64)))) ** 2
    return f


op("fft_filter_power", _filter_power(fnp), _filter_power(np), U((2, 6)), lambda x: _filter_power(_jnp())(x))
op("rfft_power_spectrum", lambda x: fnp.abs(fnp.fft.rfft(x, norm="ortho")) ** 2,
   lambda x: np.abs(np.fft.rfft(x, norm="ortho")) ** 2, U((3, 5)),
   lambda x: _jnp().abs(_jnp().fft.rfft(x, norm="ortho")) ** 2)

# ------------------------------------------------------------------ helpers ----
op("fftshift", fnp.fft.fftshift, np.fft.fftshift, U((3, 4)), lambda x: _jnp().fft.fftshift(x))
op("ifftshift_axis", lambda x: fnp.fft.ifftshift(x, axes=1), lambda x: np.fft.ifftshift(x, axes=1), U((3, 5)),
   lambda x: _jnp().fft.ifftshift(x, axes=1))
op("fftfreq_d", lambda d: fnp.fft.fftfreq(7, d), lambda d: np.fft.fftfreq(7, d), U((), lo=0.5, hi=2.0),
   lambda d: _jnp().fft.fftfreq(7, d), dtypes=(np.float64,))
op("rfftfreq_d", lambda d: fnp.fft.rfftfreq(6, d), lambda d: np.fft.rfftfreq(6, d), U((), lo=0.5, hi=2.0),
   lambda d: _jnp().fft.rfftfreq(6, d), dtypes=(np.float64,))
