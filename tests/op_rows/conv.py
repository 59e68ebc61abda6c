"""Op-table rows of the convolution primitive (funcad.lax.conv_general_dilated and its
wrappers), funcad.numpy.convolve/correlate and funcad.scipy.signal."""
import numpy as np

import funcad.lax as lax
import funcad.scipy.signal as fsig
from tests.op_table import U, op


def _jlax():
    import jax.lax as jl
    return jl


def _jsig():
    import jax.scipy.signal as js
    return js


def _np_conv(x, k, strides, padding, lhs_dil=None, rhs_dil=None, groups=1):
    """A direct NCHW/OIHW reference: dilate, pad, then one loop over kernel taps."""
    nsp = x.ndim - 2
    lhs_dil, rhs_dil = lhs_dil or (1,) * nsp, rhs_dil or (1,) * nsp
    shape = x.shape[:2] + tuple((n - 1) * d + 1 for n, d in zip(x.shape[2:], lhs_dil))
    xd = np.zeros(shape, x.dtype)
    xd[(slice(None),) * 2 + tuple(slice(None, None, d) for d in lhs_dil)] = x
    xp = np.pad(xd, [(0, 0), (0, 0)] + [(max(lo, 0), max(hi, 0)) for lo, hi in padding])
    xp = xp[(slice(None),) * 2 + tuple(slice(max(-lo, 0), n - max(-hi, 0))
                                       for n, (lo, hi) in zip(xp.shape[2:], padding))]
    eff = [(k_ - 1) * d + 1 for k_, d in zip(k.shape[2:], rhs_dil)]
    out_sp = [(n - e) // s + 1 for n, e, s in zip(xp.shape[2:], eff, strides)]
    cg, og = x.shape[1] // groups, k.shape[0] // groups
    out = np.zeros((x.shape[0], k.shape[0], *out_sp), np.float64)
    for tap in np.ndindex(*k.shape[2:]):
        sl = tuple(slice(t * d, t * d + (o - 1) * s + 1, s) for t, d, o, s in zip(tap, rhs_dil, out_sp, strides))
        patch = xp[(slice(None), slice(None)) + sl]
        for g in range(groups):
            w = k[(slice(g * og, (g + 1) * og), slice(None)) + tap]
            out[:, g * og:(g + 1) * og] += np.einsum("nc...,oc->no...", patch[:, g * cg:(g + 1) * cg], w)
    return out.astype(x.dtype)


_NHWC = ("NHWC", "HWIO", "NHWC")

op("conv_valid", lambda x, k: lax.conv(x, k, (1, 1), "VALID"),
   lambda x, k: _np_conv(x, k, (1, 1), [(0, 0)] * 2), U((2, 3, 5, 4), (4, 3, 3, 2)),
   lambda x, k: _jlax().conv(x, k, (1, 1), "VALID"), rtol=1e-5)
op("conv_same_strided_dilated", lambda x, k: lax.conv_general_dilated(x, k, (2, 1), "SAME", rhs_dilation=(1, 2)),
   lambda x, k: _np_conv(x, k, (2, 1), [(1, 1), (2, 2)], rhs_dil=(1, 2)), U((2, 2, 5, 6), (3, 2, 3, 3)),
   lambda x, k: _jlax().conv_general_dilated(x, k, (2, 1), "SAME", rhs_dilation=(1, 2)), rtol=1e-5)
op("conv_lhs_dilation_negative_pad",
   lambda x, k: lax.conv_general_dilated(x, k, (1, 2), [(2, -1), (-1, 1)], lhs_dilation=(2, 1)),
   lambda x, k: _np_conv(x, k, (1, 2), [(2, -1), (-1, 1)], lhs_dil=(2, 1)), U((1, 2, 4, 5), (2, 2, 2, 3)),
   lambda x, k: _jlax().conv_general_dilated(x, k, (1, 2), [(2, -1), (-1, 1)], lhs_dilation=(2, 1)), rtol=1e-5)
op("conv_feature_groups", lambda x, k: lax.conv_general_dilated(x, k, (1,), [(1, 0)], feature_group_count=2),
   lambda x, k: _np_conv(x, k, (1,), [(1, 0)], groups=2), U((2, 4, 6), (6, 2, 3)),
   lambda x, k: _jlax().conv_general_dilated(x, k, (1,), [(1, 0)], feature_group_count=2), rtol=1e-5)
op("conv_batch_groups", lambda x, k: lax.conv_general_dilated(x, k, (1,), "VALID", batch_group_count=2),
   lambda x, k: np.concatenate([_np_conv(x[:2], k[:2], (1,), [(0, 0)]), _np_conv(x[2:], k[2:], (1,), [(0, 0)])], 1),
   U((4, 3, 5), (4, 3, 2)),
   lambda x, k: _jlax().conv_general_dilated(x, k, (1,), "VALID", batch_group_count=2), rtol=1e-5)
op("conv_nhwc", lambda x, k: lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=_NHWC),
   lambda x, k: _np_conv(x.transpose(0, 3, 1, 2), k.transpose(3, 2, 0, 1), (1, 1), [(1, 1), (1, 1)]).transpose(0, 2, 3, 1),
   U((2, 4, 5, 3), (3, 3, 3, 2)),
   lambda x, k: _jlax().conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=_NHWC), rtol=1e-5)
op("conv_transpose", lambda x, k: lax.conv_transpose(x, k, (2, 2), "SAME"),
   lambda x, k: _np_conv(x.transpose(0, 3, 1, 2), k.transpose(3, 2, 0, 1), (1, 1), [(2, 1), (2, 1)],
                         lhs_dil=(2, 2)).transpose(0, 2, 3, 1),
   U((1, 3, 3, 2), (3, 3, 2, 2)),
   lambda x, k: _jlax().conv_transpose(x, k, (2, 2), "SAME"), rtol=1e-5)


def _sp(name):
    import scipy.signal as ss
    return lambda a, b, mode: getattr(ss, name)(a, b, mode).astype(a.dtype)


for _name, _mode, _shapes in [("convolve", "full", ((3, 4), (2, 3))), ("convolve", "same", ((5,), (4,))),
                              ("correlate", "valid", ((4, 5), (2, 2))), ("correlate", "same", ((3,), (5,))),
                              ("convolve2d", "same", ((4, 4), (3, 2))), ("correlate2d", "full", ((2, 3), (3, 4))),
                              ("correlate2d", "same", ((4, 3), (2, 2))), ("correlate2d", "valid", ((2, 2), (3, 4)))]:
    op(f"signal_{_name}_{_mode}_{len(_shapes[0])}d",
       (lambda n, m: lambda a, b: getattr(fsig, n)(a, b, m))(_name, _mode),
       (lambda n, m: lambda a, b: _sp(n)(a, b, m))(_name, _mode), U(*_shapes),
       (lambda n, m: lambda a, b: getattr(_jsig(), n)(a, b, m))(_name, _mode), rtol=1e-5)

for _mode, _shapes in [("full", ((3, 4), (2, 3))), ("same", ((6,), (4,))), ("valid", ((2, 3), (4, 5)))]:
    op(f"signal_fftconvolve_{_mode}",
       (lambda m: lambda a, b: fsig.fftconvolve(a, b, m))(_mode),
       (lambda m: lambda a, b: _sp("fftconvolve")(a, b, m))(_mode), U(*_shapes),
       (lambda m: lambda a, b: _jsig().fftconvolve(a, b, m))(_mode), rtol=1e-5)
