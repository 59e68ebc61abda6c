"""One host-to-device transfer for all of a call's small NumPy arguments.

Each transfer through jaxlib costs about 3 µs of fixed overhead whatever its
size, so a jitted call with ten NumPy arguments spent most of its time in
ten transfers. Instead, the bytes of the small host arguments are joined into
one uint8 buffer (`pack`), sent once, and the program's first operations cut
it back into typed arrays (`emit_unpack`: slice, bitcast, reshape; XLA fuses
these into the consumers). Host memory is copied, so a caller may mutate its
NumPy input right after the call.

>>> from funcad.core.avals import ShapedArray
>>> layout = plan([ShapedArray((2,), np.float32), ShapedArray((), np.int64)], [True, True])
>>> layout.nbytes, [s.offset for s in layout.slots]
(16, [0, 8])
>>> np.frombuffer(pack(layout, [np.ones(2, np.float32), 3]), np.uint8).size
16
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from ..core.avals import ShapedArray

MAX_ARG_BYTES = 1 << 16  # larger arrays go alone: the extra host copy would cost more than it saves
_KINDS = "fiub"          # complex and float0 are sent alone (no bitcast to complex in StableHLO)


class Slot(NamedTuple):
    index: int           # position among the program's inputs
    offset: int          # byte offset in the packed buffer
    aval: ShapedArray


class Layout(NamedTuple):
    slots: tuple         # Slot per packed input, in input order
    nbytes: int
    dtypes: tuple        # each slot's NumPy dtype, for `pack`


def packable(aval, donated: bool = False) -> bool:
    dtype = np.dtype(aval.dtype)
    return (not donated and dtype.kind in _KINDS and dtype.name != "float0"
            and 0 < aval.size * dtype.itemsize <= MAX_ARG_BYTES)


def plan(avals: Sequence, host: Sequence[bool]) -> Layout | None:
    """Where each packable host input goes in the buffer; None if packing saves nothing."""
    slots, offset = [], 0
    for i, (a, h) in enumerate(zip(avals, host)):
        if h:
            slots.append(Slot(i, offset, a))
            offset += a.size * np.dtype(a.dtype).itemsize
    if len(slots) < 2:
        return None
    return Layout(tuple(slots), offset, tuple(np.dtype(s.aval.dtype) for s in slots))


def pack(layout: Layout, values: Sequence) -> np.ndarray:
    """The packed bytes of the host values for `layout` (each converted to its slot's dtype)."""
    data = b"".join([np.asarray(x, dt).tobytes() for x, dt in zip(values, layout.dtypes)])
    return np.frombuffer(data, np.uint8)


