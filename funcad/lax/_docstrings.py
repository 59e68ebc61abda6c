"""Docstrings of the funcad.lax functions defined without one.

They are made by one factory per primitive family (the elementwise ops take their function
from `_bind1`/`_bind2` in funcad/primitives/elementwise.py), or written before a docstring
was required. As NumPy keeps its ufuncs' docstrings in one module, they are kept here and
attached when funcad.lax loads. A function that gains a docstring where it is defined
keeps it, and tests/docs/test_docs.py then asks for its entry here to be removed.
"""
from __future__ import annotations

DOCSTRINGS = {
    "abs": """\
    Elementwise absolute value |x| (the modulus for complex x).

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.abs(np.array([-1.5, 2.0]))
    Array([1.5, 2. ], dtype=float64)
    """,
    "acos": """\
    Elementwise inverse cosine, in radians.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.acos(np.array([0.5, 1.0]))
    Array([1.04719755, 0.        ], dtype=float64)
    """,
    "acosh": """\
    Elementwise inverse hyperbolic cosine (x >= 1 for real x).

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.acosh(np.array([1.0, 2.0]))
    Array([0.       , 1.3169579], dtype=float64)
    """,
    "add": """\
    Elementwise x + y; both operands have one shape and dtype (no promotion or broadcasting,
    as in JAX's lax).

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.add(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    Array([4., 6.], dtype=float64)
    """,
    "asin": """\
    Elementwise inverse sine, in radians.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.asin(np.array([0.5, 1.0]))
    Array([0.52359878, 1.57079633], dtype=float64)
    """,
    "asinh": """\
    Elementwise inverse hyperbolic sine.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.asinh(np.array([0.5, 1.0]))
    Array([0.48121183, 0.88137359], dtype=float64)
    """,
    "atan": """\
    Elementwise inverse tangent, in radians.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.atan(np.array([0.5, 1.0]))
    Array([0.46364761, 0.78539816], dtype=float64)
    """,
    "atan2": """\
    Elementwise arctangent of x / y, with the quadrant taken from the signs of both.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.atan2(np.array([1.0, -1.0]), np.array([-1.0, -1.0]))
    Array([ 2.35619449, -2.35619449], dtype=float64)
    """,
    "atanh": """\
    Elementwise inverse hyperbolic tangent (|x| < 1 for real x).

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.atanh(np.array([0.0, 0.5]))
    Array([0.        , 0.54930614], dtype=float64)
    """,
    "bitwise_and": """\
    Elementwise bitwise AND of integer or boolean operands of one dtype.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.bitwise_and(np.array([12, 10]), np.array([10, 6]))
    Array([8, 2], dtype=int64)
    """,
    "bitwise_not": """\
    Elementwise bitwise NOT of an integer or boolean operand.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.bitwise_not(np.array([0, 5], dtype=np.uint8))
    Array([255, 250], dtype=uint8)
    """,
    "bitwise_or": """\
    Elementwise bitwise OR of integer or boolean operands of one dtype.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.bitwise_or(np.array([12, 10]), np.array([10, 6]))
    Array([14, 14], dtype=int64)
    """,
    "bitwise_xor": """\
    Elementwise bitwise XOR of integer or boolean operands of one dtype.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.bitwise_xor(np.array([12, 10]), np.array([10, 6]))
    Array([ 6, 12], dtype=int64)
    """,
    "cbrt": """\
    Elementwise real cube root.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.cbrt(np.array([-8.0, 27.0]))
    Array([-2.,  3.], dtype=float64)
    """,
    "ceil": """\
    Elementwise ceiling: the smallest integer value >= x, in x's float dtype.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.ceil(np.array([-1.5, 0.2]))
    Array([-1.,  1.], dtype=float64)
    """,
    "conj": """\
    Elementwise complex conjugate; a real operand gives a complex result, as in JAX.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.conj(np.array([1 + 2j, 3 - 1j]))
    Array([1.-2.j, 3.+1.j], dtype=complex128)
    """,
    "cos": """\
    Elementwise cosine (radians).

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.cos(np.array([0.5, 1.0]))
    Array([0.87758256, 0.54030231], dtype=float64)
    """,
    "cosh": """\
    Elementwise hyperbolic cosine.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.cosh(np.array([0.5, 1.0]))
    Array([1.12762597, 1.54308063], dtype=float64)
    """,
    "digamma": """\
    Elementwise digamma function, the derivative of lgamma.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.digamma(np.array([1.0, 2.0]))
    Array([-0.57721566,  0.42278434], dtype=float64)
    """,
    "div": """\
    Elementwise x / y; integer division rounds toward zero, as XLA's (not NumPy's floor).

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.div(np.array([7, -7]), np.array([2, 2]))
    Array([ 3, -3], dtype=int64)
    """,
    "eq": """\
    Elementwise x == y, a boolean array.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.eq(np.array([1.0, 2.0]), np.array([1.0, 3.0]))
    Array([ True, False], dtype=bool)
    """,
    "erf": """\
    Elementwise error function.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.erf(np.array([0.5, 1.0]))
    Array([0.52049988, 0.84270079], dtype=float64)
    """,
    "erf_inv": """\
    Elementwise inverse error function (-1 < x < 1).

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.erf_inv(np.array([0.0, 0.5]))
    Array([0.        , 0.47693628], dtype=float64)
    """,
    "exp": """\
    Elementwise exponential e**x.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.exp(np.array([0.0, 1.0]))
    Array([1.        , 2.71828183], dtype=float64)
    """,
    "exp2": """\
    Elementwise 2**x (exact at integers, as NumPy's).

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.exp2(np.array([3.0, 0.5]))
    Array([8.        , 1.41421356], dtype=float64)
    """,
    "expm1": """\
    Elementwise exp(x) - 1, accurate for small x.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.expm1(np.array([1e-10, 1.0]))
    Array([1.00000000e-10, 1.71828183e+00], dtype=float64)
    """,
    "floor": """\
    Elementwise floor: the largest integer value <= x, in x's float dtype.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.floor(np.array([-1.5, 0.2]))
    Array([-2.,  0.], dtype=float64)
    """,
    "full_like": """\
    An array of x's shape filled with fill_value, in dtype (x's by default); shape=
    overrides the shape.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.full_like(np.zeros((2, 2)), 7.0).tolist()
    [[7.0, 7.0], [7.0, 7.0]]
    """,
    "ge": """\
    Elementwise x >= y, a boolean array.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.ge(np.array([1.0, 2.0]), np.array([1.0, 3.0]))
    Array([ True, False], dtype=bool)
    """,
    "gt": """\
    Elementwise x > y, a boolean array.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.gt(np.array([1.0, 4.0]), np.array([1.0, 3.0]))
    Array([False,  True], dtype=bool)
    """,
    "imag": """\
    Elementwise imaginary part of a complex operand.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.imag(np.array([1 + 2j, 3 - 1j]))
    Array([ 2., -1.], dtype=float64)
    """,
    "integer_pow": """\
    Elementwise x ** y for a static Python integer y (a multiplication chain).

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.integer_pow(np.array([2.0, 3.0]), 3)
    Array([ 8., 27.], dtype=float64)
    """,
    "is_finite": """\
    Elementwise test for finite values (not inf, -inf or NaN) of a float operand.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.is_finite(np.array([1.0, np.inf, np.nan]))
    Array([ True, False, False], dtype=bool)
    """,
    "le": """\
    Elementwise x <= y, a boolean array.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.le(np.array([1.0, 4.0]), np.array([1.0, 3.0]))
    Array([ True, False], dtype=bool)
    """,
    "lgamma": """\
    Elementwise log of the absolute value of the gamma function.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.lgamma(np.array([1.0, 5.0]))
    Array([0.        , 3.17805383], dtype=float64)
    """,
    "log": """\
    Elementwise natural logarithm.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.log(np.array([1.0, np.e]))
    Array([0., 1.], dtype=float64)
    """,
    "log1p": """\
    Elementwise log(1 + x), accurate for small x.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.log1p(np.array([1e-10, 1.0]))
    Array([1.00000000e-10, 6.93147181e-01], dtype=float64)
    """,
    "log2": """\
    Elementwise base-2 logarithm, written as log(x) / log(2).

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.log2(np.array([1.0, 8.0]))
    Array([0., 3.], dtype=float64)
    """,
    "logistic": """\
    Elementwise logistic sigmoid 1 / (1 + exp(-x)).

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.logistic(np.array([0.0, 2.0]))
    Array([0.5       , 0.88079708], dtype=float64)
    """,
    "lt": """\
    Elementwise x < y, a boolean array.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.lt(np.array([1.0, 2.0]), np.array([1.0, 3.0]))
    Array([False,  True], dtype=bool)
    """,
    "max": """\
    Elementwise maximum of two operands of one shape and dtype (NaN if either is NaN).

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.max(np.array([1.0, 5.0]), np.array([3.0, 2.0]))
    Array([3., 5.], dtype=float64)
    """,
    "min": """\
    Elementwise minimum of two operands of one shape and dtype (NaN if either is NaN).

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.min(np.array([1.0, 5.0]), np.array([3.0, 2.0]))
    Array([1., 2.], dtype=float64)
    """,
    "ne": """\
    Elementwise x != y, a boolean array.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.ne(np.array([1.0, 2.0]), np.array([1.0, 3.0]))
    Array([False,  True], dtype=bool)
    """,
    "neg": """\
    Elementwise negation -x.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.neg(np.array([1.0, -2.0]))
    Array([-1.,  2.], dtype=float64)
    """,
    "pow": """\
    Elementwise x ** y for operands of one dtype. JAX's also takes an integer y with a float
    or complex x; funcad's does not yet (cast y with .astype).

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.pow(np.array([2.0, 9.0]), np.array([3.0, 0.5]))
    Array([8., 3.], dtype=float64)
    """,
    "real": """\
    Elementwise real part of a complex operand.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.real(np.array([1 + 2j, 3 - 1j]))
    Array([1., 3.], dtype=float64)
    """,
    "reciprocal": """\
    Elementwise 1 / x, written as integer_pow(x, -1).

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.reciprocal(np.array([2.0, 4.0]))
    Array([0.5 , 0.25], dtype=float64)
    """,
    "reduce_and": """\
    Logical AND of a boolean operand over the given axes.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.reduce_and(np.array([[True, False], [True, True]]), axes=(1,))
    Array([False,  True], dtype=bool)
    """,
    "reduce_or": """\
    Logical OR of a boolean operand over the given axes.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.reduce_or(np.array([[True, False], [False, False]]), axes=(1,))
    Array([ True, False], dtype=bool)
    """,
    "reduce_xor": """\
    Logical XOR (parity) of a boolean operand over the given axes.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.reduce_xor(np.array([[True, True], [True, False]]), axes=(1,)).tolist()
    [False, True]
    """,
    "rem": """\
    Elementwise remainder of x / y with the sign of x (C's fmod, not NumPy's mod).

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.rem(np.array([7.0, -7.0]), np.array([3.0, 3.0]))
    Array([ 1., -1.], dtype=float64)
    """,
    "rsqrt": """\
    Elementwise reciprocal square root 1 / sqrt(x).

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.rsqrt(np.array([4.0, 16.0]))
    Array([0.5 , 0.25], dtype=float64)
    """,
    "sign": """\
    Elementwise sign: -1, 0 or 1 (x / |x| for complex x).

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.sign(np.array([-2.0, 0.0, 3.0]))
    Array([-1.,  0.,  1.], dtype=float64)
    """,
    "sin": """\
    Elementwise sine (radians).

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.sin(np.array([0.5, 1.0]))
    Array([0.47942554, 0.84147098], dtype=float64)
    """,
    "sinh": """\
    Elementwise hyperbolic sine.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.sinh(np.array([0.5, 1.0]))
    Array([0.52109531, 1.17520119], dtype=float64)
    """,
    "sqrt": """\
    Elementwise square root.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.sqrt(np.array([4.0, 2.0]))
    Array([2.        , 1.41421356], dtype=float64)
    """,
    "square": """\
    Elementwise x * x.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.square(np.array([3.0, -0.5]))
    Array([9.  , 0.25], dtype=float64)
    """,
    "stack": """\
    Stack operands of one shape and dtype along a new axis (JAX's lax.stack).

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.stack([np.array([1.0, 2.0]), np.array([3.0, 4.0])], axis=1)
    Array([[1., 3.],
           [2., 4.]], dtype=float64)
    """,
    "sub": """\
    Elementwise x - y; both operands have one shape and dtype.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.sub(np.array([5.0, 2.0]), np.array([3.0, 4.0]))
    Array([ 2., -2.], dtype=float64)
    """,
    "tan": """\
    Elementwise tangent (radians).

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.tan(np.array([0.5, 1.0]))
    Array([0.54630249, 1.55740772], dtype=float64)
    """,
    "tanh": """\
    Elementwise hyperbolic tangent.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.tanh(np.array([0.5, 1.0]))
    Array([0.46211716, 0.76159416], dtype=float64)
    """,
    "tile": """\
    Repeat an operand reps[i] times along each axis i (reps has one entry per axis).

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.tile(np.array([[1, 2]]), (2, 2))
    Array([[1, 2, 1, 2],
           [1, 2, 1, 2]], dtype=int64)
    """,
    "unstack": """\
    Split an operand into a tuple of arrays along an axis (JAX's lax.unstack), the inverse
    of stack.

    >>> import numpy as np
    >>> from funcad import lax
    >>> lax.unstack(np.array([[1, 2], [3, 4]]), axis=1)
    (Array([1, 3], dtype=int64), Array([2, 4], dtype=int64))
    """,
}


def attach(namespace: dict) -> None:
    """Give each function named in DOCSTRINGS that has no docstring its entry."""
    for name, doc in DOCSTRINGS.items():
        if not namespace[name].__doc__:
            namespace[name].__doc__ = doc
