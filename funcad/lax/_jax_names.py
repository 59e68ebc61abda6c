"""funcad.lax functions under JAX's own signatures: its keyword names (`operand`,
`operands`, `array`, `min`/`max`, ...) and the parameters it adds on top of the
primitives (`out_sharding`, `allow_negative_indices`, `is_stable`, `out_dtype`,
`accuracy`, `dimensions`, `axis_index_groups`, `to`). Positional calls are
unchanged; each wrapper calls the primitive module's function, and lax/__init__
type-checks it eagerly as it does the others.
"""
from __future__ import annotations

import numpy as np

from ..core.avals import aval_of
from ..primitives import collectives as C, elementwise as E, indexing as I, reductions as R
from ..primitives import structural as S
from ..primitives.dot_algorithm import AccuracyMode, check_accuracy
from ..primitives.sharding import out_sharded
from . import _arithmetic, _construction, _conv, _dot, _reduce, _scans, _slicing, _sorting, _staging

# (the names lax/__init__ wraps with its eager type check)
CHECKED = """argmax argmin broadcast_in_dim clamp concatenate convert_element_type cummax cummin
    cumprod cumsum dynamic_slice dynamic_update_slice erfc expand_dims iota mul pad reduce_max
    reduce_min reduce_prod reduce_sum reshape rev slice sort squeeze transpose""".split()
PLAIN = """all_gather all_to_all broadcast broadcasted_iota conv_general_dilated dot empty pswapaxes
    reduce""".split()


def argmax(operand, axis, index_dtype=np.int64):
    return R.argmax(operand, axis, index_dtype)


def argmin(operand, axis, index_dtype=np.int64):
    return R.argmin(operand, axis, index_dtype)


def broadcast_in_dim(operand, shape, broadcast_dimensions, *, out_sharding=None):
    return out_sharded(S.broadcast_in_dim(operand, shape, broadcast_dimensions), out_sharding)


def clamp(min, x, max):  # noqa: A002  (JAX's names)
    return E.clamp(min, x, max)


def concatenate(operands, dimension):
    return S.concatenate(operands, dimension)


def convert_element_type(operand, new_dtype, weak_type: bool = False):
    return E.convert_element_type(operand, new_dtype, weak_type)


def cummax(operand, axis=0, reverse=False):
    return R.cummax(operand, axis, reverse)


def cummin(operand, axis=0, reverse=False):
    return R.cummin(operand, axis, reverse)


def cumprod(operand, axis=0, reverse=False):
    return R.cumprod(operand, axis, reverse)


def cumsum(operand, axis=0, reverse=False):
    return R.cumsum(operand, axis, reverse)


def _starts(operand, start_indices, allow_negative_indices, what):
    """JAX's index rule: with allow_negative_indices (per dimension, default True) an
    index below zero counts from the end of its dimension; without, a static negative
    index is an error (a traced one is clamped, as XLA does)."""
    shape = aval_of(operand).shape
    starts = [start_indices[k] for k in range(len(shape))]  # a sequence or a 1-d array
    if isinstance(allow_negative_indices, (bool, np.bool_)):
        allow = [bool(allow_negative_indices)] * len(shape)
    else:
        allow = [bool(a) for a in allow_negative_indices]
        if len(allow) != len(shape):
            raise ValueError(f"{what}: allow_negative_indices has {len(allow)} entries but the "
                             f"operand has rank {len(shape)}")
    out = []
    for i, d, ok in zip(starts, shape, allow):
        if isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_)):
            if i < 0 and not ok:
                raise ValueError(f"Index {i} is out of bounds for dimension {d} if "
                                 "allow_negative_indices=False")
            out.append(i + d if i < 0 and ok else i)
        elif ok:
            dt = aval_of(i).dtype
            out.append(E.select_n(E.lt(i, np.zeros((), dt)), i, E.add(i, np.asarray(d, dt))))
        else:
            out.append(i)
    return out


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    starts = _starts(operand, start_indices, allow_negative_indices, "dynamic_slice")
    return I.dynamic_slice(operand, starts, slice_sizes)


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    starts = _starts(operand, start_indices, allow_negative_indices, "dynamic_update_slice")
    return I.dynamic_update_slice(operand, update, starts)


def erfc(x, *, accuracy=None):
    """erfc; `accuracy` (lax.AccuracyMode or lax.Tolerance) is checked as JAX's:
    DEFAULT or a Tolerance give the one implementation funcad has (JAX's too, on CPU);
    HIGHEST asks for JAX's separate high-accuracy algorithm, which funcad lacks."""
    if accuracy is not None:
        check_accuracy(accuracy, "erfc")
        if accuracy is AccuracyMode.HIGHEST:
            raise NotImplementedError("erfc: accuracy=AccuracyMode.HIGHEST needs JAX's separate "
                                      "high-accuracy erfc algorithm, which funcad lacks; leave "
                                      "accuracy=None (funcad's erfc is accurate in the tails)")
    return E.erfc(x)


def expand_dims(array, dimensions):
    return S.expand_dims(array, dimensions)


def iota(dtype, size, dimension=0):
    """0, 1, ..., size - 1 (funcad also takes a shape for `size`, counting along `dimension`)."""
    return S.iota(dtype, size, dimension)


def mul(x, y, *, out_dtype=None):
    """x * y; with `out_dtype` the inputs are cast to it first, as JAX does."""
    if out_dtype is not None:
        x, y = E.convert_element_type(x, out_dtype), E.convert_element_type(y, out_dtype)
    return E.mul(x, y)


def pad(operand, padding_value, padding_config):
    return S.pad(operand, padding_value, padding_config)


def reduce_max(operand, axes=None, *, out_sharding=None):
    return out_sharded(R.reduce_max(operand, axes), out_sharding)


def reduce_min(operand, axes=None, *, out_sharding=None):
    return out_sharded(R.reduce_min(operand, axes), out_sharding)


def reduce_prod(operand, axes=None):
    return R.reduce_prod(operand, axes)


def reduce_sum(operand, axes=None, *, out_sharding=None):
    return out_sharded(R.reduce_sum(operand, axes), out_sharding)


def reshape(operand, new_sizes, dimensions=None, *, out_sharding=None):
    """operand reshaped to new_sizes; `dimensions` (a permutation) transposes it first,
    as JAX's."""
    if dimensions is not None:
        dims = tuple(int(d) for d in dimensions)
        if sorted(dims) != list(range(len(aval_of(operand).shape))):
            raise TypeError(f"reshape dimensions must be a permutation of operand dimensions, "
                            f"got dimensions {dims} for shape {aval_of(operand).shape}")
        if dims != tuple(range(len(dims))):
            operand = S.transpose(operand, dims)
    return S.reshape(operand, new_sizes, out_sharding)


def rev(operand, dimensions):
    return S.rev(operand, dimensions)


def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001
    return S.slice(operand, start_indices, limit_indices, strides)


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """Sort an array, or a sequence of them by the first `num_keys`. funcad's sort is
    always stable, which is what is_stable=True asks for and what False allows."""
    if not isinstance(is_stable, (bool, np.bool_)):
        raise TypeError(f"sort: is_stable must be a bool, got {is_stable!r}")
    if isinstance(operand, (list, tuple)):
        return tuple(I.sort(operand, dimension, num_keys))
    if num_keys != 1:
        raise ValueError(f"sort: num_keys={num_keys} needs a sequence of at least that many operands")
    return I.sort([operand], dimension, 1)[0]


def squeeze(array, dimensions):
    return S.squeeze(array, dimensions)


def transpose(operand, permutation):
    return S.transpose(operand, permutation)


# ---- compositions (lax's topic modules, _conv.py) and collectives ----

def broadcast(operand, sizes, *, out_sharding=None):
    return out_sharded(_construction.broadcast(operand, sizes), out_sharding)


def broadcasted_iota(dtype, shape, dimension: int, *, out_sharding=None):
    return out_sharded(_construction.broadcasted_iota(dtype, shape, dimension), out_sharding)


def dot(lhs, rhs, *, dimension_numbers=None, precision=None, preferred_element_type=None,
        out_sharding=None):
    return out_sharded(_dot.dot(lhs, rhs, dimension_numbers=dimension_numbers, precision=precision,
                                 preferred_element_type=preferred_element_type), out_sharding)


def empty(shape, dtype, *, out_sharding=None):
    return out_sharded(_construction.empty(shape, dtype), out_sharding)


def reduce(operands, init_values, computation, dimensions, out_sharding=None):
    return out_sharded(_reduce.reduce(operands, init_values, computation, dimensions), out_sharding)


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                         dimension_numbers=None, feature_group_count: int = 1,
                         batch_group_count: int = 1, precision=None, preferred_element_type=None,
                         out_sharding=None):
    return _conv.conv_general_dilated(
        lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
        feature_group_count, batch_group_count, precision, preferred_element_type, out_sharding)


def all_gather(x, axis_name, *, axis_index_groups=None, axis: int = 0, tiled: bool = False,
               to: str = "varying"):
    """all_gather; `to="varying"` (the default) is what funcad's gather gives. JAX's
    "invariant" (the result typed device-invariant under shard_map's check_vma) needs
    all_gather_invariant, which funcad lacks."""
    if to != "varying":
        if to == "invariant":
            raise NotImplementedError("all_gather: to='invariant' needs an all_gather whose result "
                                      "is typed device-invariant, which funcad lacks; use the "
                                      "default to='varying'")
        raise ValueError(f"all_gather: to must be 'varying' or 'invariant', got {to!r}")
    return C.all_gather(x, axis_name, axis_index_groups=axis_index_groups, axis=axis, tiled=tiled)


def _no_groups(axis_index_groups, what):
    if axis_index_groups is not None:
        raise NotImplementedError(f"{what}: axis_index_groups needs a grouped all_to_all, which funcad "
                                  "lacks; leave it None (all devices of the axis exchange blocks)")


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None, tiled=False):
    _no_groups(axis_index_groups, "all_to_all")
    return C.all_to_all(x, axis_name, split_axis, concat_axis, tiled=tiled)


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    _no_groups(axis_index_groups, "pswapaxes")
    return C.pswapaxes(x, axis_name, axis)


for _name in CHECKED + PLAIN:  # the wrapped function's docstring where the wrapper has none
    _f = globals()[_name]
    _src = next((getattr(m, _name) for m in (E, S, R, I, C, _arithmetic, _construction, _dot, _reduce, _scans, _slicing,
                                                   _sorting, _staging, _conv) if hasattr(m, _name)), None)
    _f.__doc__ = _f.__doc__ or getattr(_src, "__doc__", None) or f"JAX's lax.{_name}."
    _f.__module__ = "funcad.lax"
