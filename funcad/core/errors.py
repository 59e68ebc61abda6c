"""funcad's exception types. Each message names the problem and the fix."""


class FuncadError(Exception):
    """Base class of every error funcad raises on purpose."""


class FuncadTypeError(FuncadError, TypeError):
    """A value of the wrong kind, shape or dtype."""


class ConcretizationError(FuncadError, TypeError):
    """A staged value was used where Python needs a concrete one (if, bool, int...)."""


class TracerLeakError(FuncadError, RuntimeError):
    """A tracer escaped the transformation that created it."""


class MissingRuleError(FuncadError, NotImplementedError):
    """A primitive has no rule for a transformation."""


class JaxprTypeError(FuncadError, TypeError):
    """A jaxpr does not type-check."""


class NaNError(FuncadError, FloatingPointError):
    """With `debug_nans` on, a primitive produced a NaN (names it and the user's line)."""


class UnsupportedError(FuncadError, AttributeError):
    """A NumPy function or feature that funcad does not provide (names the nearest ones)."""


def _numpy_axis_error():
    import numpy as np
    return np.exceptions.AxisError


class AxisError(FuncadError, _numpy_axis_error()):
    """An axis out of range for an array's rank (also a numpy AxisError, ValueError, IndexError)."""

    def __init__(self, message: str):
        super().__init__(message)


class FuncadValueError(FuncadError, ValueError):
    """A bad argument value: a shape that does not fit, an uneven split..."""


class FuncadIndexError(FuncadError, IndexError):
    """An index that does not fit the array (too many indices, out of bounds, wrong type)."""
