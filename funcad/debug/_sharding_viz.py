"""Text pictures of shardings: which devices hold which block of an array.

`visualize_sharding(shape, sharding)` draws a 1-d or 2-d array as a table of
its blocks, each cell naming the devices that hold it ("CPU 0,1"), sized as
JAX's `jax.debug.visualize_sharding` sizes them. JAX draws with `rich`; funcad
draws the same table with box-drawing characters (colour backgrounds when the
output is a terminal), so it needs nothing beyond the standard library.
"""
from __future__ import annotations

import sys
from typing import Callable, Sequence

import numpy as np

from ..core.errors import FuncadTypeError, FuncadValueError
from ..core.pytree import tree_leaves
from ..core.sharding import Sharding
from ..core.trace import Tracer
from ..transforms.inspect_sharding import inspect_sharding_p, sharding_of

__all__ = ["visualize_sharding", "visualize_array_sharding", "inspect_array_sharding"]


def _chunk(size: int, s: slice) -> tuple[int, int]:
    """(index of the block, its length) for the slice `s` of a dimension of `size`."""
    if s.start is None and s.stop is None:
        return 0, size
    n = s.stop - s.start
    return s.start // n, n


def _cells(shape, sharding):
    """{(row, col): (device ids, height fraction or None, width fraction)}."""
    cells: dict = {}
    for dev, slices in sharding.devices_indices_map(tuple(shape)).items():
        if len(shape) == 2:
            (r, h), (c, w) = _chunk(shape[0], slices[0]), _chunk(shape[1], slices[1])
            key, frac_h, frac_w = (r, c), h / shape[0], w / shape[1]
        else:
            (c, w), = [_chunk(shape[0], slices[0])]
            key, frac_h, frac_w = (0, c), None, w / shape[0]
        ids, _, _ = cells.setdefault(key, (set(), frac_h, frac_w))
        ids.add(dev.id)
    return cells


def render_sharding(shape: Sequence[int], sharding: Sharding, *, scale: float = 1.,
                    min_width: int = 9, max_width: int = 80, colors=None) -> str:
    """The picture `visualize_sharding` prints, as a string (`colors`: one ANSI
    background escape per cell in row-major order, or None)."""
    shape = tuple(int(s) for s in shape)
    if not 1 <= len(shape) <= 2:
        raise FuncadValueError("visualize_sharding only works for shapes with 1 and 2 dimensions, "
                               f"got the shape {shape}")
    if not isinstance(sharding, Sharding):
        raise FuncadTypeError(f"visualize_sharding needs a funcad.sharding.Sharding, got "
                              f"{sharding!r}")
    kind = next(iter(sharding.device_set)).platform.upper()
    base_h = int(10 * scale)
    base_w = int(base_h * (shape[1] if len(shape) == 2 else 1) / shape[0])
    cells = _cells(shape, sharding)
    rows = max(k[0] for k in cells) + 1
    cols = max(k[1] for k in cells) + 1
    # Each cell: its text padded as JAX pads it (height and width from the block's size).
    boxes = {}
    for (i, j), (ids, fh, fw) in cells.items():
        text = f"{kind} " + ",".join(str(d) for d in sorted(ids))
        width = min(max(int(fw * base_w * 2.5), min_width), max_width)
        height = 1 if fh is None else int(fh * base_h)
        left, rem = divmod(width - len(text) - 2, 2)
        top, vrem = divmod(height - 2, 2)
        pads = [max(top, 0), max(left + rem, 0), max(top + vrem, 0), max(left, 0)]
        if colors is not None:
            pads = [p + 1 for p in pads]
        boxes[i, j] = (text, pads)
    col_w = [max(len(boxes[i, j][0]) + boxes[i, j][1][1] + boxes[i, j][1][3] for i in range(rows))
             for j in range(cols)]
    row_h = [max(1 + boxes[i, j][1][0] + boxes[i, j][1][2] for j in range(cols))
             for i in range(rows)]
    colour = iter(colors or [])
    grid = []
    for i in range(rows):
        lines = [[] for _ in range(row_h[i])]
        for j in range(cols):
            text, (top, _, bottom, _) = boxes[i, j]
            mid = top + (row_h[i] - (1 + top + bottom)) // 2
            esc = next(colour, "")
            for k in range(row_h[i]):
                cell = (text if k == mid else "").center(col_w[j])
                lines[k].append(f"{esc}{cell}\x1b[0m" if esc else cell)
        grid.append(lines)
    if colors is not None:  # colour blocks need no lines between them, as in JAX
        return "\n".join("".join(line) for lines in grid for line in lines)
    bar = lambda a, b, c: a + b.join("─" * w for w in col_w) + c  # noqa: E731
    out = [bar("┌", "┬", "┐")]
    for i, lines in enumerate(grid):
        out += ["│" + "│".join(line) + "│" for line in lines]
        out.append(bar("├", "┼", "┤") if i < rows - 1 else bar("└", "┴", "┘"))
    return "\n".join(out)


def _ansi_colors(n: int, color_map) -> list:
    """n background escapes from `color_map` (values in [0, 1] -> RGB(A) floats), in
    the order JAX takes them (a step coprime to n visits every colour once)."""
    values = np.linspace(0, 1, n)
    step = n // 2 + (n % 2 == 0) + (n % 4 == 2)
    out, idx = [], 0
    for _ in range(n):
        r, g, b = (int(v * 255) for v in color_map(values[idx])[:3])
        fg = "30" if r * 0.299 + g * 0.587 + b * 0.114 > 186 else "97"
        out.append(f"\x1b[{fg};48;2;{r};{g};{b}m")
        idx = (idx + step) % n
    return out


def visualize_sharding(shape: Sequence[int], sharding: Sharding, *, use_color: bool = True,
                       scale: float = 1., min_width: int = 9, max_width: int = 80,
                       color_map: Callable | None = None) -> None:
    """Print a picture of how an array of `shape` (1-d or 2-d) is laid out by
    `sharding`: one cell per block, naming the devices that hold it.

    Colours (`use_color`, `color_map`: a function from [0, 1] to RGB floats,
    by default matplotlib's "tab20b" when installed) are used when standard
    output is a terminal; otherwise the blocks are drawn with lines.

    >>> import funcad
    >>> from funcad.sharding import NamedSharding, PartitionSpec as P
    >>> mesh = funcad.make_mesh((1,), ("x",))
    >>> visualize_sharding((8,), NamedSharding(mesh, P("x")), use_color=False)
    ┌───────┐
    │ CPU 0 │
    └───────┘
    <BLANKLINE>
    """
    colors = None
    if use_color and getattr(sys.stdout, "isatty", lambda: False)():
        if color_map is None:
            try:
                import matplotlib as mpl  # optional and heavy: only the colour map needs it
                color_map = mpl.colormaps["tab20b"]
            except ImportError:
                color_map = None
        if color_map is not None:
            n = len(_cells(tuple(shape), sharding))
            colors = _ansi_colors(n, color_map)
    print(render_sharding(shape, sharding, scale=scale, min_width=min_width, max_width=max_width,
                          colors=colors), end="\n\n")


def _check_leaf(x) -> None:
    if not isinstance(x, (Tracer, np.ndarray, np.generic, int, float, complex, bool)) and \
            not isinstance(getattr(x, "sharding", None), Sharding):
        raise FuncadTypeError(f"inspect_array_sharding expects arrays, got {type(x).__name__}")


def inspect_array_sharding(value, *, callback: Callable[[Sharding], None]) -> None:
    """Call `callback` with the sharding of each array in the pytree `value`, as
    `jax.debug.inspect_array_sharding`: at once for concrete arrays (NumPy values:
    the default device's `SingleDeviceSharding`); inside `jit`, once, when the
    program is compiled, with the layout XLA's partitioner chose for the value
    (a `NamedSharding` on the program's mesh; a one-device program's device as a
    `SingleDeviceSharding`). Under vmap the batched value is inspected.

    >>> import funcad, numpy as np
    >>> inspect_array_sharding(funcad.device_put(np.ones(2)), callback=lambda s: print(s.num_devices))
    1
    >>> f = funcad.jit(lambda x: inspect_array_sharding(x * 2.0, callback=print) or x)
    >>> _ = f(np.ones(2))  # doctest: +ELLIPSIS
    SingleDeviceSharding(...)
    """
    for leaf in tree_leaves(value):
        _check_leaf(leaf)
        if isinstance(leaf, Tracer):
            inspect_sharding_p.bind(leaf, callback=callback)
        else:
            callback(sharding_of(leaf))


def visualize_array_sharding(arr, **kwargs) -> None:
    """Print how the array `arr` (1-d or 2-d) is laid out over devices; the keyword
    arguments are `visualize_sharding`'s. Inside `jit` it prints when the program
    is compiled, as JAX's does (it is `inspect_array_sharding` with a picture).

    >>> import funcad, numpy as np
    >>> visualize_array_sharding(funcad.device_put(np.ones(3)), use_color=False)
    ┌───────┐
    │ CPU 0 │
    └───────┘
    <BLANKLINE>
    """
    shape = tuple(arr.aval.shape) if isinstance(arr, Tracer) else np.shape(arr)
    inspect_array_sharding(arr, callback=lambda s: visualize_sharding(shape, s, **kwargs))
