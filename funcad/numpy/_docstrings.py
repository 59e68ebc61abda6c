"""Docstrings of the funcad.numpy functions defined without one.

They are made by factories (the ufuncs), wrapped for eager speed (the creation functions),
or written before a docstring was required. As NumPy keeps its ufuncs' docstrings in one
module, they are kept here and attached when funcad.numpy loads. A function that gains a
docstring where it is defined keeps it, and tests/docs/test_docs.py then asks for its entry
here to be removed.
"""
from __future__ import annotations

DOCSTRINGS = {
    "abs": """\
    Absolute value, elementwise (the modulus for complex input); absolute is another name
    for it.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.abs(np.array([-1.5, 0.0, 2.0]))
    Array([1.5, 0. , 2. ], dtype=float64)
    """,
    "all": """\
    Whether every element along the given axes is true.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.all(np.array([[True, False], [True, True]]), axis=1)
    Array([False,  True], dtype=bool)
    """,
    "any": """\
    Whether any element along the given axes is true.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.any(np.array([[True, False], [False, False]]), axis=1)
    Array([ True, False], dtype=bool)
    """,
    "arange": """\
    Evenly spaced values in [start, stop) with step; the shape must be static, as in JAX.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.arange(5)
    Array([0, 1, 2, 3, 4], dtype=int64)
    >>> fnp.arange(0.0, 1.0, 0.25)
    Array([0.  , 0.25, 0.5 , 0.75], dtype=float64)
    """,
    "argmax": """\
    Index of the maximum along an axis (of the flattened array by default).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.argmax(np.array([[1.0, 2.0], [3.0, 4.0]]), axis=1)
    Array([1, 1], dtype=int64)
    """,
    "argmin": """\
    Index of the minimum along an axis (of the flattened array by default).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.argmin(np.array([[1.0, 2.0], [3.0, 4.0]]), axis=1)
    Array([0, 0], dtype=int64)
    """,
    "array_repr": """\
    The repr string of an array, as NumPy's.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.array_repr(np.array([1.0, 2.0]))
    'array([1., 2.])'
    """,
    "array_split": """\
    Split an array into sections along an axis; the sections may differ in size.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.array_split(np.arange(5), 2)
    [Array([0, 1, 2], dtype=int64), Array([3, 4], dtype=int64)]
    """,
    "array_str": """\
    The str of an array's values, as NumPy's.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.array_str(np.array([1.0, 2.0]))
    '[1. 2.]'
    """,
    "atleast_1d": """\
    Each input as an array with at least one dimension.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.atleast_1d(3.0)
    Array([3.], dtype=float64, weak_type=True)
    """,
    "atleast_2d": """\
    Each input as an array with at least two dimensions.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.atleast_2d(np.array([1, 2]))
    Array([[1, 2]], dtype=int64)
    """,
    "bitwise_not": """\
    Bitwise NOT of an integer or boolean array, elementwise; invert is another name for it.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.bitwise_not(np.array([0, 5], dtype=np.uint8))
    Array([255, 250], dtype=uint8)
    """,
    "broadcast_arrays": """\
    The arrays broadcast against each other to one shape.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.broadcast_arrays(np.array([1, 2]), np.array([[1], [2]]))
    [Array([[1, 2],
           [1, 2]], dtype=int64), Array([[1, 1],
           [2, 2]], dtype=int64)]
    """,
    "broadcast_to": """\
    An array broadcast to a shape.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.broadcast_to(np.array([1, 2]), (2, 2))
    Array([[1, 2],
           [1, 2]], dtype=int64)
    """,
    "column_stack": """\
    Stack 1-d arrays as the columns of a 2-d array (2-d inputs are joined on axis 1).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.column_stack([np.array([1, 2]), np.array([3, 4])])
    Array([[1, 3],
           [2, 4]], dtype=int64)
    """,
    "concatenate": """\
    Join arrays along an existing axis (axis=None flattens them first).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.concatenate([np.array([1, 2]), np.array([3])])
    Array([1, 2, 3], dtype=int64)
    """,
    "copysign": """\
    x1 with the sign of x2, elementwise.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.copysign(np.array([1.0, 2.0]), np.array([-1.0, 1.0]))
    Array([-1.,  2.], dtype=float64)
    """,
    "cumprod": """\
    Cumulative product along an axis (of the flattened array by default).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.cumprod(np.array([1, 2, 3, 4]))
    Array([ 1,  2,  6, 24], dtype=int64)
    """,
    "cumsum": """\
    Cumulative sum along an axis (of the flattened array by default).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.cumsum(np.array([1, 2, 3, 4]))
    Array([ 1,  3,  6, 10], dtype=int64)
    """,
    "cumulative_prod": """\
    Cumulative product along an axis (the array API's name), optionally starting with 1.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.cumulative_prod(np.array([1, 2, 3]), include_initial=True)
    Array([1, 1, 2, 6], dtype=int64)
    """,
    "deg2rad": """\
    Degrees to radians, elementwise; radians is another name for it.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.deg2rad(np.array([180.0, 90.0]))
    Array([3.14159265, 1.57079633], dtype=float64)
    """,
    "degrees": """\
    Radians to degrees, elementwise; rad2deg is another name for it.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.degrees(np.array([np.pi, np.pi / 2]))
    Array([180.,  90.], dtype=float64)
    """,
    "diag": """\
    The k-th diagonal of a 2-d array, or a 2-d array with a 1-d array on its k-th diagonal.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.diag(np.array([1, 2]))
    Array([[1, 0],
           [0, 2]], dtype=int64)
    >>> fnp.diag(np.array([[1.0, 2.0], [3.0, 4.0]]))
    Array([1., 4.], dtype=float64)
    """,
    "diag_indices": """\
    The indices of the main diagonal of an n x n (x n ...) array.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.diag_indices(3)
    (Array([0, 1, 2], dtype=int64), Array([0, 1, 2], dtype=int64))
    """,
    "diag_indices_from": """\
    The indices of the main diagonal of an array whose axes all have one length.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.diag_indices_from(np.zeros((2, 2)))
    (Array([0, 1], dtype=int64), Array([0, 1], dtype=int64))
    """,
    "diagonal": """\
    The diagonal given by offset and two axes.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.diagonal(np.array([[1.0, 2.0], [3.0, 4.0]]))
    Array([1., 4.], dtype=float64)
    """,
    "divmod": """\
    (x1 // x2, x1 % x2), elementwise, with NumPy's floor conventions.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.divmod(np.array([7, -7]), 2)
    (Array([ 3, -4], dtype=int64), Array([1, 1], dtype=int64))
    """,
    "empty": """\
    An array of the given shape and dtype; JAX's and funcad's are zero-filled (arrays are
    immutable).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.empty((2, 2))
    Array([[0., 0.],
           [0., 0.]], dtype=float64)
    """,
    "empty_like": """\
    An array of a's shape and dtype (zero-filled, as in JAX).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.empty_like(np.array([1, 2, 3]))
    Array([0, 0, 0], dtype=int64)
    """,
    "expand_dims": """\
    The array with a new axis of length 1 at each position in axis.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.expand_dims(np.array([1, 2]), 0).shape
    (1, 2)
    """,
    "eye": """\
    A 2-d array with ones on the k-th diagonal and zeros elsewhere.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.eye(2, 3, k=1)
    Array([[0., 1., 0.],
           [0., 0., 1.]], dtype=float64)
    """,
    "flip": """\
    Reverse the order of elements along the given axes (all by default).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.flip(np.array([[1.0, 2.0], [3.0, 4.0]]), axis=0)
    Array([[3., 4.],
           [1., 2.]], dtype=float64)
    """,
    "fliplr": """\
    Reverse the order of the columns (axis 1).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.fliplr(np.array([[1.0, 2.0], [3.0, 4.0]]))
    Array([[2., 1.],
           [4., 3.]], dtype=float64)
    """,
    "flipud": """\
    Reverse the order of the rows (axis 0).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.flipud(np.array([[1.0, 2.0], [3.0, 4.0]]))
    Array([[3., 4.],
           [1., 2.]], dtype=float64)
    """,
    "floor_divide": """\
    x1 // x2, elementwise: the quotient rounded toward minus infinity.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.floor_divide(np.array([7, -7]), 2)
    Array([ 3, -4], dtype=int64)
    """,
    "fmod": """\
    Remainder of x1 / x2 with the sign of x1 (C's fmod), elementwise.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.fmod(np.array([7, -7]), 3)
    Array([ 1, -1], dtype=int64)
    """,
    "fromiter": """\
    A 1-d array from an iterable, as NumPy's (eager only: the values must be concrete).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.fromiter(range(4), dtype=float)
    Array([0., 1., 2., 3.], dtype=float64)
    """,
    "full": """\
    An array of the given shape filled with fill_value (in its dtype unless dtype is given).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.full((2, 2), 7)
    Array([[7, 7],
           [7, 7]], dtype=int64, weak_type=True)
    """,
    "full_like": """\
    An array of a's shape and dtype filled with fill_value.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.full_like(np.zeros(3), 2.5)
    Array([2.5, 2.5, 2.5], dtype=float64)
    """,
    "heaviside": """\
    The Heaviside step function: 0 for x1 < 0, x2 at 0, 1 for x1 > 0.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.heaviside(np.array([-1.0, 0.0, 2.0]), 0.5)
    Array([0. , 0.5, 1. ], dtype=float64)
    """,
    "hsplit": """\
    Split an array into sub-arrays along axis 1 (axis 0 for a 1-d array).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.hsplit(np.arange(4), 2)
    [Array([0, 1], dtype=int64), Array([2, 3], dtype=int64)]
    """,
    "hstack": """\
    Stack arrays in sequence horizontally (along axis 1; axis 0 for 1-d arrays).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.hstack([np.array([1, 2]), np.array([3])])
    Array([1, 2, 3], dtype=int64)
    """,
    "identity": """\
    The n x n identity matrix.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.identity(2)
    Array([[1., 0.],
           [0., 1.]], dtype=float64)
    """,
    "isclose": """\
    Elementwise whether a and b are equal within rtol * |b| + atol (NaNs equal only with
    equal_nan).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.isclose(np.array([1.0, 1.1]), np.array([1.0 + 1e-9, 1.0]))
    Array([ True, False], dtype=bool)
    """,
    "isfinite": """\
    Whether each element is finite (not inf, -inf or NaN).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.isfinite(np.array([1.0, np.inf, np.nan]))
    Array([ True, False, False], dtype=bool)
    """,
    "isinf": """\
    Whether each element is positive or negative infinity.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.isinf(np.array([1.0, np.inf, -np.inf]))
    Array([False,  True,  True], dtype=bool)
    """,
    "isnan": """\
    Whether each element is NaN.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.isnan(np.array([1.0, np.nan]))
    Array([False,  True], dtype=bool)
    """,
    "isneginf": """\
    Whether each element is negative infinity.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.isneginf(np.array([np.inf, -np.inf]))
    Array([False,  True], dtype=bool)
    """,
    "isposinf": """\
    Whether each element is positive infinity.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.isposinf(np.array([np.inf, -np.inf]))
    Array([ True, False], dtype=bool)
    """,
    "isrealobj": """\
    Whether x's dtype is not complex (a property of the dtype, not the values).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.isrealobj(np.array([1.0])), fnp.isrealobj(np.array([1j]))
    (True, False)
    """,
    "linspace": """\
    num evenly spaced values from start to stop (stop included unless endpoint=False).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.linspace(0.0, 1.0, 5)
    Array([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float64)
    """,
    "log10": """\
    Base-10 logarithm, elementwise.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.log10(np.array([1.0, 100.0]))
    Array([0., 2.], dtype=float64)
    """,
    "log2": """\
    Base-2 logarithm, elementwise.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.log2(np.array([1.0, 8.0]))
    Array([0., 3.], dtype=float64)
    """,
    "logical_and": """\
    Elementwise logical AND of the truth values of x1 and x2.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.logical_and(np.array([True, True]), np.array([True, False]))
    Array([ True, False], dtype=bool)
    """,
    "logical_not": """\
    Elementwise logical NOT of the truth value of x.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.logical_not(np.array([0, 2]))
    Array([ True, False], dtype=bool)
    """,
    "logical_or": """\
    Elementwise logical OR of the truth values of x1 and x2.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.logical_or(np.array([True, False]), np.array([False, False]))
    Array([ True, False], dtype=bool)
    """,
    "logical_xor": """\
    Elementwise logical XOR of the truth values of x1 and x2.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.logical_xor(np.array([True, True]), np.array([True, False]))
    Array([False,  True], dtype=bool)
    """,
    "matrix_transpose": """\
    Swap the last two axes of an array of matrices.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.matrix_transpose(np.zeros((5, 2, 3))).shape
    (5, 3, 2)
    """,
    "max": """\
    The maximum along the given axes (of all elements by default); initial and where as
    NumPy's; amax is another name for it.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.max(np.array([[1.0, 2.0], [3.0, 4.0]]))
    Array(4., dtype=float64)
    >>> fnp.max(np.array([[1.0, 2.0], [3.0, 4.0]]), axis=1)
    Array([2., 4.], dtype=float64)
    """,
    "mean": """\
    The arithmetic mean along the given axes.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.mean(np.array([[1.0, 2.0], [3.0, 4.0]]))
    Array(2.5, dtype=float64)
    >>> fnp.mean(np.array([[1.0, 2.0], [3.0, 4.0]]), axis=0)
    Array([2., 3.], dtype=float64)
    """,
    "min": """\
    The minimum along the given axes (of all elements by default); initial and where as
    NumPy's; amin is another name for it.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.min(np.array([[1.0, 2.0], [3.0, 4.0]]))
    Array(1., dtype=float64)
    >>> fnp.min(np.array([[1.0, 2.0], [3.0, 4.0]]), axis=1)
    Array([1., 3.], dtype=float64)
    """,
    "moveaxis": """\
    Move axes of an array to new positions, keeping the order of the others.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.moveaxis(np.zeros((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """,
    "nanargmin": """\
    Index of the minimum along an axis, ignoring NaNs.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.nanargmin(np.array([np.nan, 2.0, 1.0]))
    Array(2, dtype=int64)
    """,
    "nanmedian": """\
    The median along the given axes, ignoring NaNs.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.nanmedian(np.array([1.0, np.nan, 3.0, 2.0]))
    Array(2., dtype=float64)
    """,
    "nanpercentile": """\
    The q-th percentile along the given axes, ignoring NaNs.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.nanpercentile(np.array([1.0, np.nan, 3.0, 2.0]), 50)
    Array(2., dtype=float64)
    """,
    "nanstd": """\
    The standard deviation along the given axes, ignoring NaNs.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.nanstd(np.array([1.0, np.nan, 3.0]))
    Array(1., dtype=float64)
    """,
    "ndim": """\
    The number of dimensions of an array (or array-like).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.ndim(np.array([[1.0, 2.0], [3.0, 4.0]]))
    2
    """,
    "negative": """\
    Numerical negative -x, elementwise.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.negative(np.array([1.0, -2.0]))
    Array([-1.,  2.], dtype=float64)
    """,
    "ones": """\
    An array of the given shape filled with ones (float64, or float32 in 32-bit mode, by
    default).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.ones((2, 3))
    Array([[1., 1., 1.],
           [1., 1., 1.]], dtype=float64)
    """,
    "ones_like": """\
    An array of ones with a's shape and dtype.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.ones_like(np.array([1, 2, 3]))
    Array([1, 1, 1], dtype=int64)
    """,
    "outer": """\
    The outer product of two vectors (inputs are flattened).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.outer(np.array([1, 2]), np.array([1, 10, 100]))
    Array([[  1,  10, 100],
           [  2,  20, 200]], dtype=int64)
    """,
    "positive": """\
    Numerical positive +x, elementwise (a copy).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.positive(np.array([1.0, -2.0])).tolist()
    [1.0, -2.0]
    """,
    "prod": """\
    The product of elements along the given axes; integer inputs are promoted as JAX's
    promote_integers says.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.prod(np.array([[1.0, 2.0], [3.0, 4.0]]))
    Array(24., dtype=float64)
    >>> fnp.prod(np.array([[1.0, 2.0], [3.0, 4.0]]), axis=1)
    Array([ 2., 12.], dtype=float64)
    """,
    "ravel": """\
    The array flattened to one dimension (C order by default).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.ravel(np.array([[1.0, 2.0], [3.0, 4.0]]))
    Array([1., 2., 3., 4.], dtype=float64)
    """,
    "reciprocal": """\
    1 / x, elementwise.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.reciprocal(np.array([2.0, 4.0]))
    Array([0.5 , 0.25], dtype=float64)
    """,
    "roll": """\
    Roll elements along the given axes; those shifted past the end come back at the start.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.roll(np.arange(5), 2)
    Array([3, 4, 0, 1, 2], dtype=int64)
    """,
    "round": """\
    Round to the given number of decimals, halves to even; around is another name for it.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.round(np.array([0.5, 1.5, 2.5]))
    Array([0., 2., 2.], dtype=float64)
    >>> fnp.round(np.array([3.14159]), 2)
    Array([3.14], dtype=float64)
    """,
    "shape": """\
    The shape of an array (or array-like).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.shape(np.array([[1.0, 2.0], [3.0, 4.0]]))
    (2, 2)
    """,
    "sign": """\
    Sign of each element: -1, 0 or 1 (x / |x| for complex x, as in JAX).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.sign(np.array([-2.0, 0.0, 3.0]))
    Array([-1.,  0.,  1.], dtype=float64)
    """,
    "sinc": """\
    The normalized sinc function sin(pi x) / (pi x), 1 at 0.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.sinc(np.array([0.0, 0.5]))
    Array([1.        , 0.63661977], dtype=float64)
    """,
    "split": """\
    Split an array into equal sections, or at the given indices, along an axis.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.split(np.arange(6), 3)
    [Array([0, 1], dtype=int64), Array([2, 3], dtype=int64), Array([4, 5], dtype=int64)]
    >>> fnp.split(np.arange(6), [1, 4])
    [Array([0], dtype=int64), Array([1, 2, 3], dtype=int64), Array([4, 5], dtype=int64)]
    """,
    "square": """\
    x * x, elementwise.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.square(np.array([3.0, -0.5]))
    Array([9.  , 0.25], dtype=float64)
    """,
    "squeeze": """\
    Remove axes of length 1 (all of them, or those in axis).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.squeeze(np.zeros((1, 3, 1))).shape
    (3,)
    """,
    "stack": """\
    Join arrays of one shape along a new axis.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.stack([np.array([1, 2]), np.array([3, 4])], axis=1)
    Array([[1, 3],
           [2, 4]], dtype=int64)
    """,
    "std": """\
    The standard deviation along the given axes (ddof=0 by default; correction= as the array
    API).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.std(np.array([[1.0, 2.0], [3.0, 4.0]]))
    Array(1.11803399, dtype=float64)
    >>> fnp.std(np.array([[1.0, 2.0], [3.0, 4.0]]), ddof=1)
    Array(1.29099445, dtype=float64)
    """,
    "sum": """\
    The sum of elements along the given axes; integer inputs are promoted as JAX's
    promote_integers says.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.sum(np.array([[1.0, 2.0], [3.0, 4.0]]))
    Array(10., dtype=float64)
    >>> fnp.sum(np.array([[1.0, 2.0], [3.0, 4.0]]), axis=0)
    Array([4., 6.], dtype=float64)
    """,
    "swapaxes": """\
    Interchange two axes of an array.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.swapaxes(np.zeros((2, 3, 4)), 0, 2).shape
    (4, 3, 2)
    """,
    "tile": """\
    Repeat an array the number of times given by reps along each axis.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.tile(np.array([1, 2]), 2)
    Array([1, 2, 1, 2], dtype=int64)
    >>> fnp.tile(np.array([1, 2]), (2, 1))
    Array([[1, 2],
           [1, 2]], dtype=int64)
    """,
    "trace": """\
    The sum along a diagonal (given by offset, axis1, axis2).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.trace(np.array([[1.0, 2.0], [3.0, 4.0]]))
    Array(5., dtype=float64)
    """,
    "transpose": """\
    Permute the axes of an array (reverse them by default).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.transpose(np.zeros((2, 3, 4))).shape
    (4, 3, 2)
    >>> fnp.transpose(np.zeros((2, 3, 4)), (1, 0, 2)).shape
    (3, 2, 4)
    """,
    "tri": """\
    An N x M array with ones at and below the k-th diagonal, zeros elsewhere.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.tri(3, k=-1)
    Array([[0., 0., 0.],
           [1., 0., 0.],
           [1., 1., 0.]], dtype=float64)
    """,
    "tril": """\
    The lower triangle of an array of matrices (at and below the k-th diagonal), zeros
    above.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.tril(np.array([[1.0, 2.0], [3.0, 4.0]]))
    Array([[1., 0.],
           [3., 4.]], dtype=float64)
    """,
    "tril_indices": """\
    The row and column indices of the lower triangle of an n x m array.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.tril_indices(3)
    (Array([0, 1, 1, 2, 2, 2], dtype=int64), Array([0, 0, 1, 0, 1, 2], dtype=int64))
    """,
    "tril_indices_from": """\
    The indices of the lower triangle of a 2-d array.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.tril_indices_from(np.zeros((2, 2)))
    (Array([0, 1, 1], dtype=int64), Array([0, 0, 1], dtype=int64))
    """,
    "triu": """\
    The upper triangle of an array of matrices (at and above the k-th diagonal), zeros
    below.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.triu(np.array([[1.0, 2.0], [3.0, 4.0]]))
    Array([[1., 2.],
           [0., 4.]], dtype=float64)
    """,
    "triu_indices": """\
    The row and column indices of the upper triangle of an n x m array.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.triu_indices(3)
    (Array([0, 0, 0, 1, 1, 2], dtype=int64), Array([0, 1, 2, 1, 2, 2], dtype=int64))
    """,
    "triu_indices_from": """\
    The indices of the upper triangle of a 2-d array.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.triu_indices_from(np.zeros((2, 2)))
    (Array([0, 0, 1], dtype=int64), Array([0, 1, 1], dtype=int64))
    """,
    "trunc": """\
    Round toward zero, elementwise; fix is another name for it.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.trunc(np.array([-1.7, 1.7]))
    Array([-1.,  1.], dtype=float64)
    """,
    "unique_counts": """\
    The unique values of x and how often each occurs (the array API's function; size= under
    jit).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.unique_counts(np.array([3, 1, 3, 3]))
    UniqueCountsResult(values=Array([1, 3], dtype=int64), counts=Array([1, 3], dtype=int64))
    """,
    "unique_inverse": """\
    The unique values of x and, for each element, the index of its value among them.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.unique_inverse(np.array([3, 1, 3]))
    UniqueInverseResult(values=Array([1, 3], dtype=int64), inverse_indices=Array([1, 0, 1], dtype=int64))
    """,
    "unique_values": """\
    The sorted unique values of x (the array API's function; size= under jit).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.unique_values(np.array([3, 1, 3, 2]))
    Array([1, 2, 3], dtype=int64)
    """,
    "var": """\
    The variance along the given axes (ddof=0 by default; correction= as the array API).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.var(np.array([[1.0, 2.0], [3.0, 4.0]]))
    Array(1.25, dtype=float64)
    >>> fnp.var(np.array([[1.0, 2.0], [3.0, 4.0]]), axis=0)
    Array([1., 1.], dtype=float64)
    """,
    "vsplit": """\
    Split an array into sub-arrays along axis 0.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.vsplit(np.arange(4).reshape(2, 2), 2)
    [Array([[0, 1]], dtype=int64), Array([[2, 3]], dtype=int64)]
    """,
    "vstack": """\
    Stack arrays in sequence vertically (1-d arrays become rows).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.vstack([np.array([1, 2]), np.array([3, 4])])
    Array([[1, 2],
           [3, 4]], dtype=int64)
    """,
    "zeros": """\
    An array of the given shape filled with zeros (float64, or float32 in 32-bit mode, by
    default).

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.zeros((2, 3))
    Array([[0., 0., 0.],
           [0., 0., 0.]], dtype=float64)
    """,
    "zeros_like": """\
    An array of zeros with a's shape and dtype.

    >>> import numpy as np
    >>> import funcad.numpy as fnp
    >>> fnp.zeros_like(np.array([1.5, 2.5]))
    Array([0., 0.], dtype=float64)
    """,
}


def attach(namespace: dict) -> None:
    """Give each function named in DOCSTRINGS that has no docstring its entry."""
    for name, doc in DOCSTRINGS.items():
        if not namespace[name].__doc__:
            namespace[name].__doc__ = doc
