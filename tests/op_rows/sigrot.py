"""Op-table rows of funcad.scipy.signal's spectral functions and funcad.scipy.spatial.transform.

A few rows only (each runs eager/jit/vmap/order-2/JAX checks); the option grid, the errors and
the pytree behaviour are in tests/scipy/test_signal_spectral.py and tests/scipy/test_rotation.py. The NumPy
references are SciPy's own (cast back to the input dtype: SciPy's rotations compute in float64) (scipy.signal, scipy.spatial.transform), which JAX follows."""
import numpy as np
import scipy.signal as ss
from scipy.spatial.transform import Rotation as SR

from funcad.scipy import signal as fsig
from funcad.scipy.spatial.transform import Rotation
from tests.op_table import AWAY, U, op


def _jsig():
    import jax.scipy.signal as js
    return js


def _jrot():
    from jax.scipy.spatial.transform import Rotation as JR
    return JR


def _power(z):
    return z.real ** 2 + z.imag ** 2


op("signal_welch_linear", lambda x: fsig.welch(x, nperseg=8, detrend="linear")[1],
   lambda x: ss.welch(x, nperseg=8, detrend="linear")[1].astype(x.dtype), U((2, 20)),
   jax_fun=lambda x: _jsig().welch(x, nperseg=8, detrend="linear")[1])
op("signal_stft_power", lambda x: _power(fsig.stft(x, nperseg=6, boundary="odd")[2]),
   lambda x: _power(ss.stft(x, nperseg=6, boundary="odd")[2]).astype(x.dtype), U((13,)),
   jax_fun=lambda x: _power(_jsig().stft(x, nperseg=6, boundary="odd")[2]))
op("rotation_quat_rotvec", lambda q: Rotation.from_quat(q).as_rotvec(),
   lambda q: SR.from_quat(q).as_rotvec().astype(q.dtype), AWAY((3, 4)),
   jax_fun=lambda q: _jrot().from_quat(q).as_rotvec())
op("rotation_rotvec_apply", lambda r, v: Rotation.from_rotvec(r).apply(v),
   lambda r, v: SR.from_rotvec(r).apply(v).astype(r.dtype), U((2, 3), (2, 3), lo=-1.0, hi=1.0),
   jax_fun=lambda r, v: _jrot().from_rotvec(r).apply(v))
