"""NumPy indexing on traced arrays: basic slicing with static slices and
dynamic_slice, advanced integer/boolean indexing with gather, and `.at[]` updates."""
from __future__ import annotations

import numpy as np

from ..core.avals import aval_of
from ..core.errors import ConcretizationError, FuncadIndexError, FuncadTypeError
from ..core.trace import Tracer, set_trace
from ..primitives import elementwise as E
from ..primitives import indexing as I
from ..primitives import structural as S
from ..primitives._base import canonical_axis
from ._dtypes import asarray_or_tracer, cast


def _is_int_scalar(i):
    if isinstance(i, (bool, np.bool_)):
        return False
    if isinstance(i, (int, np.integer)):
        return True
    return isinstance(i, Tracer) and i.ndim == 0 and i.dtype.kind in "iu"


def _is_array_index(i):
    if isinstance(i, Tracer):  # a traced integer scalar is a basic index (dynamic_slice)
        return not _is_int_scalar(i)
    return isinstance(i, (list, np.ndarray)) or hasattr(i, "__funcad_array__")


def _expand(x, idx):
    """Normalise an index into one entry per dimension of x (None inserted as new axes)."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    # Boolean masks become integer index arrays (their shape must be static).
    out = []
    for i in idx:
        if _is_array_index(i) and not isinstance(i, Tracer):
            i = np.asarray(i.__funcad_array__() if hasattr(i, "__funcad_array__") else i)
        if isinstance(i, np.ndarray) and i.dtype == np.bool_:
            if i.ndim == 0:
                raise FuncadIndexError("0-d boolean indices are not supported; use funcad.numpy.where")
            out.extend(np.nonzero(i))
            continue
        if isinstance(i, Tracer) and i.dtype == np.bool_:
            raise ConcretizationError(
                "boolean mask indexing with a traced mask has a data-dependent shape. "
                "Use funcad.numpy.where(mask, x, 0) instead, or pass the mask as a NumPy array.")
        out.append(i)
    idx = tuple(out)
    consumed = sum(1 for i in idx if i is not None and i is not Ellipsis)
    if sum(1 for i in idx if i is Ellipsis) > 1:
        raise FuncadIndexError("an index can only have a single ellipsis ('...')")
    nd = aval_of(x).ndim
    if consumed > nd:
        raise FuncadIndexError(f"too many indices for {aval_of(x).str_short()}: it has {nd} dimensions, but "
                               f"{consumed} were indexed")
    full = []
    for i in idx:
        if i is Ellipsis:
            full.extend([slice(None)] * (nd - consumed))
        else:
            full.append(i)
    if not any(i is Ellipsis for i in idx):  # `in` would compare arrays elementwise
        full.extend([slice(None)] * (nd - consumed))
    # Insert the new axes into x itself, indexed by full slices.
    shape, k, entries = [], 0, []
    for i in full:
        if i is None:
            shape.append(1)
            entries.append(slice(None))
        else:
            shape.append(aval_of(x).shape[k])
            entries.append(i)
            k += 1
    if len(shape) != nd:
        x = S.reshape(x, shape)
    return x, entries


def _normalize_int(i, n, dim):
    if isinstance(i, Tracer):
        i = cast(i, np.int64) if i.dtype != np.int64 else i
        return E.select_n(E.lt(i, np.int64(0)), i, E.add(i, np.int64(n)))
    i = int(i)
    if not -n <= i < n:
        raise FuncadIndexError(f"index {i} is out of bounds for axis {dim} with size {n}")
    return i % n


def getitem(x, idx):
    x = asarray_or_tracer(x)
    x, entries = _expand(x, idx)
    shape = aval_of(x).shape
    advanced = [d for d, i in enumerate(entries) if _is_array_index(i)]
    if not advanced:
        return _basic(x, entries)
    # Integer scalars join the advanced indices, as in NumPy.
    adv_dims = [d for d, i in enumerate(entries) if _is_array_index(i) or _is_int_scalar(i)]
    # Apply the slices first, keeping the advanced dimensions whole.
    x = _basic(x, [slice(None) if d in adv_dims else i for d, i in enumerate(entries)])
    shape = aval_of(x).shape
    arrays = []
    for d in adv_dims:
        i = entries[d]
        a = i if isinstance(i, Tracer) else np.asarray(i)
        if aval_of(a).dtype.kind not in "iu":
            raise FuncadIndexError(f"arrays used as indices must be of integer or boolean type, got {aval_of(a).dtype}")
        if isinstance(a, Tracer):
            a = _normalize_int(a, shape[d], d)
        else:
            if a.size and (a.min() < -shape[d] or a.max() >= shape[d]):
                raise FuncadIndexError(f"index out of bounds for axis {d} with size {shape[d]}")
            a = np.where(a < 0, a + shape[d], a).astype(np.int64)
        arrays.append(a)
    bshape = np.broadcast_shapes(*[aval_of(a).shape for a in arrays])
    from ._shape import broadcast_to, moveaxis, stack
    idx = stack([broadcast_to(cast(a, np.int64), bshape) for a in arrays], -1)
    rest = [d for d in range(len(shape)) if d not in adv_dims]
    xt = S.transpose(x, adv_dims + rest) if adv_dims + rest != list(range(len(shape))) else x
    out = I.gather(xt, idx)
    contiguous = adv_dims == list(range(adv_dims[0], adv_dims[0] + len(adv_dims)))
    if contiguous and adv_dims[0] > 0:
        nb = len(bshape)
        out = moveaxis(out, tuple(range(nb)), tuple(range(adv_dims[0], adv_dims[0] + nb)))
    return out


def _basic(x, entries):
    shape = aval_of(x).shape
    start, stop, step, flip, squeeze = [], [], [], [], []
    dyn = {}
    for d, (i, n) in enumerate(zip(entries, shape)):
        if isinstance(i, slice):
            s, e, st = i.indices(n)
            if st > 0:
                start.append(s); stop.append(max(e, s)); step.append(st)
            else:
                # Reverse, then slice forwards.
                cnt = len(range(s, e, st))
                flip.append(d)
                s2 = n - 1 - s
                start.append(s2); stop.append(s2 + (cnt - 1) * (-st) + 1 if cnt else s2); step.append(-st)
        elif _is_int_scalar(i):
            if isinstance(i, Tracer):
                dyn[d] = _normalize_int(i, n, d)
                start.append(0); stop.append(n); step.append(1)
            else:
                j = _normalize_int(i, n, d)
                start.append(j); stop.append(j + 1); step.append(1)
            squeeze.append(d)
        else:
            raise FuncadIndexError(f"only integers, slices (`:`), ellipsis (`...`), None and integer or "
                             f"boolean arrays are valid indices, got {type(i).__name__}")
    if flip:
        x = S.rev(x, flip)
    if (start, stop, step) != ([0] * len(shape), list(shape), [1] * len(shape)):
        x = S.slice(x, start, stop, step)
    if dyn:
        cur = aval_of(x).shape
        starts = [dyn.get(d, np.int64(0)) for d in range(len(cur))]
        sizes = [1 if d in dyn else cur[d] for d in range(len(cur))]
        x = I.dynamic_slice(x, [cast(s, np.int64) if isinstance(s, Tracer) else np.int64(s) for s in starts], sizes)
    if squeeze:
        x = S.squeeze(x, squeeze)
    return x


def take(a, indices, axis=None):
    from ._shape import ravel
    a = asarray_or_tracer(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = canonical_axis(axis, aval_of(a).ndim, 'take', a)
    return getitem(a, (slice(None),) * axis + (indices,))


def take_along_axis(arr, indices, axis):
    arr = asarray_or_tracer(arr)
    nd = aval_of(arr).ndim
    axis = canonical_axis(axis, nd, 'take_along_axis', arr)
    idx = indices if isinstance(indices, Tracer) else np.asarray(indices)
    n = aval_of(arr).shape[axis]
    idx = _normalize_int(idx, n, axis) if isinstance(idx, Tracer) else np.where(idx < 0, idx + n, idx)
    shape = np.broadcast_shapes(aval_of(idx).shape, tuple(1 if d == axis else s for d, s in enumerate(aval_of(arr).shape)))
    entries = []
    for d in range(nd):
        if d == axis:
            entries.append(idx)
        else:
            entries.append(np.arange(aval_of(arr).shape[d]).reshape([-1 if k == d else 1 for k in range(nd)]))
    return getitem(arr, tuple(entries))


class _IndexUpdateHelper:
    """`x.at[idx].set(v)`, `.add(v)`, `.get()`: functional updates, as in JAX."""

    __slots__ = ("x",)

    def __init__(self, x):
        self.x = x

    def __getitem__(self, idx):
        return _IndexUpdateRef(self.x, idx)


class _IndexUpdateRef:
    __slots__ = ("x", "idx")

    def __init__(self, x, idx):
        self.x, self.idx = x, idx

    def get(self):
        return getitem(self.x, self.idx)

    def _positions(self):
        """x and the flat positions of the indexed entries (NumPy ints unless an index is traced)."""
        x = asarray_or_tracer(self.x)
        flat = np.arange(aval_of(x).size).reshape(aval_of(x).shape)
        entries = self.idx if isinstance(self.idx, tuple) else (self.idx,)
        if any(isinstance(i, Tracer) for i in entries):
            return x, getitem(flat, self.idx)
        with set_trace(None):  # static indices: compute the positions now, never stage them
            pos = np.asarray(getitem(flat, self.idx))
        return x, pos

    def add(self, v):
        from ._shape import broadcast_to, ravel, reshape
        x, pos = self._positions()
        v = broadcast_to(cast(asarray_or_tracer(v), aval_of(x).dtype), pos.shape)
        out = I.scatter_add(ravel(x), pos.reshape(-1, 1), ravel(v))
        return reshape(out, aval_of(x).shape)

    def set(self, v):
        """Set entries; with repeated indices the last one wins, as in NumPy."""
        from ._shape import broadcast_to, ravel, reshape
        x, pos = self._positions()
        v = broadcast_to(cast(asarray_or_tracer(v), aval_of(x).dtype), pos.shape)
        if isinstance(pos, Tracer):
            # Traced indices: add the difference (repeated indices are unspecified, as in JAX).
            flat_x, p = ravel(x), pos.reshape(-1, 1)
            out = I.scatter_add(flat_x, p, E.sub(ravel(v), I.gather(flat_x, p)))
            return reshape(out, aval_of(x).shape)
        flat_pos, flat_v = pos.reshape(-1), ravel(v)
        # Keep only the last write to each position, so the scatter-add below is a set.
        last = {p: k for k, p in enumerate(flat_pos.tolist())}
        keep = np.array(sorted(last.values()), dtype=np.int64)
        n = aval_of(x).size
        mask = np.zeros(n, bool)
        mask[flat_pos[keep]] = True
        kept_v = getitem(flat_v, keep) if len(keep) != len(flat_pos) else flat_v
        base = E.select_n(mask, ravel(x), np.zeros((), aval_of(x).dtype))
        out = I.scatter_add(base, flat_pos[keep].reshape(-1, 1), kept_v)
        return reshape(out, aval_of(x).shape)

    def multiply(self, v):
        from ._shape import broadcast_to
        return self.set(E.mul(self.get(), broadcast_to(cast(asarray_or_tracer(v), aval_of(self.x).dtype), aval_of(self.get()).shape)))
