"""funcad.lax's option types, as in JAX: Precision, RoundingMethod, GatherScatterMode,
the gather/scatter/dot/ragged-dot dimension numbers and the type aliases that name them.

>>> from funcad import lax
>>> lax.GatherScatterMode.from_any("clip")
<GatherScatterMode.CLIP: 1>
>>> lax.Precision("highest")
<Precision.HIGHEST: 2>
"""
from __future__ import annotations

import enum
from typing import NamedTuple, Sequence, Union

from ..core.errors import FuncadValueError
from ..primitives.convolution import ConvDimensionNumbers

__all__ = ["Precision", "PrecisionLike", "RoundingMethod", "GatherScatterMode",
           "GatherDimensionNumbers", "ScatterDimensionNumbers", "DotDimensionNumbers",
           "ConvGeneralDilatedDimensionNumbers", "RaggedDotDimensionNumbers"]


class Precision(enum.Enum):
    """Precision of a dot product or convolution on accelerators (CPU computes every
    level exactly in the operand dtype). Also accepts JAX's aliases as strings."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        names = {"default": cls.DEFAULT, "fastest": cls.DEFAULT, "bfloat16": cls.DEFAULT,
                 "high": cls.HIGH, "bfloat16_3x": cls.HIGH, "tensorfloat32": cls.HIGH,
                 "highest": cls.HIGHEST, "float32": cls.HIGHEST}
        if isinstance(value, str) and value.lower() in names:
            return names[value.lower()]
        return None

    def __str__(self) -> str:
        return self.name


PrecisionLike = Union[None, str, Precision, tuple]


class RoundingMethod(enum.IntEnum):
    """How `lax.round` breaks ties: away from zero (JAX's default) or to the nearest even."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


class GatherScatterMode(enum.Enum):
    """Out-of-bounds handling of gather and scatter windows.

    CLIP clamps each window into the operand; FILL_OR_DROP fills a gathered window that
    is partly out of bounds (with `fill_value`) and drops such a scattered window;
    PROMISE_IN_BOUNDS clamps gathers and drops scatters (what XLA does unchecked).
    """

    CLIP = 1
    FILL_OR_DROP = 2
    PROMISE_IN_BOUNDS = 3
    ONE_HOT = 4

    @staticmethod
    def from_any(s) -> "GatherScatterMode":
        if isinstance(s, GatherScatterMode):
            return s
        name = getattr(s, "name", s)  # JAX's own enum values are accepted too
        if isinstance(name, str) and name in GatherScatterMode.__members__:
            return GatherScatterMode[name]
        table = {"clip": GatherScatterMode.CLIP, None: GatherScatterMode.FILL_OR_DROP,
                 "fill": GatherScatterMode.FILL_OR_DROP, "drop": GatherScatterMode.FILL_OR_DROP,
                 "promise_in_bounds": GatherScatterMode.PROMISE_IN_BOUNDS,
                 "one_hot": GatherScatterMode.ONE_HOT}
        if s in table:
            return table[s]
        raise FuncadValueError(f'Unknown gather mode "{s}": use "clip", "fill", "drop", '
                               '"promise_in_bounds" or a GatherScatterMode')


class GatherDimensionNumbers(NamedTuple):
    """How a gather's index vectors and output axes map onto the operand (XLA's Gather)."""

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """How a scatter's index vectors and update axes map onto the operand (XLA's Scatter)."""

    update_window_dims: Sequence[int]
    inserted_window_dims: Sequence[int]
    scatter_dims_to_operand_dims: Sequence[int]
    operand_batching_dims: Sequence[int] = ()
    scatter_indices_batching_dims: Sequence[int] = ()


DotDimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]], tuple[Sequence[int], Sequence[int]]]
ConvGeneralDilatedDimensionNumbers = Union[tuple[str, str, str], ConvDimensionNumbers, None]


class RaggedDotDimensionNumbers:
    """ragged_dot_general's dimension numbers: the dot's contracting and batch dimensions,
    the lhs's ragged dimensions and the rhs's group dimensions."""

    def __init__(self, dot_dimension_numbers, lhs_ragged_dimensions: Sequence[int],
                 rhs_group_dimensions: Sequence[int]):
        (lc, rc), (lb, rb) = dot_dimension_numbers
        self.dot_dimension_numbers = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))
        self.lhs_ragged_dimensions = tuple(lhs_ragged_dimensions)
        self.rhs_group_dimensions = tuple(rhs_group_dimensions)

    def __repr__(self) -> str:
        return (f"RaggedDotDimensionNumbers(dot_dimension_numbers={self.dot_dimension_numbers}, "
                f"lhs_ragged_dimensions={self.lhs_ragged_dimensions}, "
                f"rhs_group_dimensions={self.rhs_group_dimensions})")

    def __eq__(self, other) -> bool:
        return isinstance(other, RaggedDotDimensionNumbers) and repr(self) == repr(other)

    def __hash__(self) -> int:
        return hash(repr(self))
