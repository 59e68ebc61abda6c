"""Memory layouts of arrays (JAX's `jax.experimental.layout`): `Layout` says in which
order an array's dimensions lie in memory (and its tiling), `Format` pairs a layout
with a sharding.

funcad's arrays, on host and on device, lie in row-major order without tiling:
`Layout.for_array(x)` is that layout. A `Format` whose layout is None, `Layout.AUTO`
or that row-major layout is honoured wherever a sharding is taken (its sharding is
applied); any other layout needs XLA layout assignment, which funcad does not drive,
and is refused by name.

>>> import numpy as np
>>> Layout.for_array(np.ones((2, 3)))
Layout(major_to_minor=(0, 1), tiling=(), sub_byte_element_size_in_bits=0)
>>> Format(Layout.AUTO).layout
AutoLayout
"""
from __future__ import annotations

from .errors import FuncadTypeError, UnsupportedError
from .sharding import Sharding

__all__ = ["AutoLayout", "Format", "Layout", "sharding_of_format"]


class _AutoLayout:
    """`Layout.AUTO`: the compiler chooses the layout."""

    def __repr__(self):
        return "AutoLayout"


AutoLayout = _AutoLayout()


class Layout:
    """The order of an array's dimensions in memory, most major first, with XLA's
    tiling (None: the backend's default) and the bits per element of sub-byte types."""

    AUTO = AutoLayout

    def __init__(self, major_to_minor: tuple[int, ...],
                 tiling: tuple[tuple[int, ...], ...] | None = None,
                 sub_byte_element_size_in_bits: int = 0):
        self.major_to_minor = tuple(major_to_minor)
        self.tiling = None if tiling is None else tuple(map(tuple, tiling))
        self.sub_byte_element_size_in_bits = sub_byte_element_size_in_bits

    @staticmethod
    def for_array(x) -> "Layout":
        """The layout of `x`: funcad's arrays are row-major and untiled."""
        return Layout(tuple(range(len(x.shape))), tiling=(), sub_byte_element_size_in_bits=0)

    def update(self, **kwargs) -> "Layout":
        """A copy with the given fields (major_to_minor, tiling, sub_byte_element_size_in_bits) replaced."""
        fields = dict(major_to_minor=self.major_to_minor, tiling=self.tiling,
                      sub_byte_element_size_in_bits=self.sub_byte_element_size_in_bits)
        unknown = set(kwargs) - set(fields)
        if unknown:
            raise TypeError(f"Layout.update: unknown fields {sorted(unknown)}; use {sorted(fields)}")
        fields.update(kwargs)
        return Layout(**fields)

    def check_compatible_aval(self, aval_shape: tuple[int, ...]) -> None:
        """Raise unless the layout has one entry per dimension of `aval_shape`."""
        if len(self.major_to_minor) != len(aval_shape):
            raise ValueError("Length of major_to_minor and the rank of the value should match. Got "
                             f"major_to_minor={self.major_to_minor} and shape={tuple(aval_shape)}")

    def is_row_major(self, ndim: int) -> bool:
        """Whether this is the layout funcad's arrays have at rank `ndim`."""
        return (self.major_to_minor == tuple(range(ndim)) and not self.tiling
                and self.sub_byte_element_size_in_bits == 0)

    def __repr__(self):
        return (f"Layout(major_to_minor={self.major_to_minor}, tiling={self.tiling}, "
                f"sub_byte_element_size_in_bits={self.sub_byte_element_size_in_bits})")

    def __eq__(self, other):
        return isinstance(other, Layout) and (
            (self.major_to_minor, self.tiling, self.sub_byte_element_size_in_bits)
            == (other.major_to_minor, other.tiling, other.sub_byte_element_size_in_bits))

    def __hash__(self):
        return hash((self.major_to_minor, self.tiling, self.sub_byte_element_size_in_bits))


class Format:
    """A layout (None, `Layout.AUTO` or a Layout) and a sharding (None or a Sharding);
    a concrete Layout needs a concrete sharding."""

    __slots__ = ("layout", "sharding")

    def __init__(self, layout: Layout | _AutoLayout | None = None, sharding: Sharding | None = None):
        if isinstance(layout, Layout) and sharding is None:
            raise ValueError(f"Sharding has to be concrete when layout is of type {type(layout)}. "
                             "Please pass a `NamedSharding` or `SingleDeviceSharding` to the "
                             f"sharding argument. Got sharding {sharding}")
        if not isinstance(layout, (Layout, _AutoLayout, type(None))):
            raise TypeError("Invalid value received for the layout argument. Expected values are "
                            f"`None`, `Layout.AUTO` or an instance of `Layout`. Got {layout} of "
                            f"type {type(layout)}")
        if not isinstance(sharding, (Sharding, type(None))):
            raise TypeError("Invalid value received for the sharding argument. Expected values are "
                            f"`None` or an instance of `Sharding`. Got {sharding} of type {type(sharding)}")
        self.layout, self.sharding = layout, sharding

    def __repr__(self):
        return f"Format(layout={self.layout}, sharding={self.sharding})"

    def __eq__(self, other):
        return isinstance(other, Format) and (self.layout, self.sharding) == (other.layout, other.sharding)

    def __hash__(self):
        return hash((self.layout, self.sharding))


def sharding_of_format(fmt: Format, ndim: int, who: str) -> Sharding:
    """The sharding a Format asks for, where its layout is one funcad's arrays have."""
    if isinstance(fmt.layout, Layout) and not fmt.layout.is_row_major(ndim):
        raise UnsupportedError(
            f"{who}: the layout {fmt.layout} needs XLA's layout assignment, which funcad does not "
            "drive; funcad's arrays are row-major and untiled. Pass Layout.AUTO, None or "
            f"Layout(major_to_minor={tuple(range(ndim))}) as the layout.")
    if fmt.sharding is None:
        raise FuncadTypeError(f"{who}: the Format {fmt} has no sharding; give it one")
    return fmt.sharding
