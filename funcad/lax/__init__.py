"""funcad.lax: the primitives' own functions (no promotion, no broadcasting help)."""
from ..primitives.elementwise import (abs, acos, acosh, add, asin, asinh, atan, atan2, atanh,
                                      bitwise_and, bitwise_not, bitwise_or, bitwise_xor, cbrt,
                                      ceil, clamp, convert_element_type, cos, cosh, digamma, div,
                                      eq, erf, erf_inv, erfc, exp, exp2, expm1, floor, ge, gt,
                                      integer_pow, is_finite, le, lgamma, log, log1p, logistic, lt,
                                      max, min, mul, ne, neg, polygamma, pow, rem, round, rsqrt,
                                      select_n, sign, sin, sinh, sqrt, square, stop_gradient, sub,
                                      tanh)
from ..primitives.structural import (broadcast_in_dim, concatenate, expand_dims, iota, pad, reshape,
                                     rev, slice, squeeze, transpose)
from ..primitives.reductions import (argmax, argmin, cummax, cummin, cumprod, cumsum, reduce_max,
                                     reduce_min, reduce_prod, reduce_sum)
from ..primitives.linalg import dot_general
from ..primitives.indexing import (dynamic_slice, dynamic_update_slice, gather, scatter_add, sort)
from .control_flow import cond, fori_loop, map, scan, switch, while_loop  # noqa: F401
import builtins as _builtins

from ._checked import checked as _checked

# The user-facing functions check operand types eagerly too (see _checked.py).
(abs, acos, acosh, add, asin, asinh, atan, atan2, atanh, bitwise_and, bitwise_not, bitwise_or,
 bitwise_xor, cbrt, ceil, clamp, convert_element_type, cos, cosh, digamma, div, eq, erf, erf_inv,
 erfc, exp, exp2, expm1, floor, ge, gt, integer_pow, is_finite, le, lgamma, log, log1p, logistic, lt, max,
 min, mul, ne, neg, polygamma, pow, rem, round, rsqrt, select_n, sign, sin, sinh, sqrt, square,
 stop_gradient, sub, tanh, broadcast_in_dim, concatenate, expand_dims, iota, pad, reshape, rev, slice,
 squeeze, transpose, argmax, argmin, cummax, cummin, cumprod, cumsum, reduce_max, reduce_min,
 reduce_prod, reduce_sum, dot_general, dynamic_slice, dynamic_update_slice, gather, scatter_add,
 sort) = _builtins.map(_checked, (
    abs, acos, acosh, add, asin, asinh, atan, atan2, atanh, bitwise_and, bitwise_not, bitwise_or,
    bitwise_xor, cbrt, ceil, clamp, convert_element_type, cos, cosh, digamma, div, eq, erf, erf_inv,
    erfc, exp, exp2, expm1, floor, ge, gt, integer_pow, is_finite, le, lgamma, log, log1p, logistic, lt, max,
    min, mul, ne, neg, polygamma, pow, rem, round, rsqrt, select_n, sign, sin, sinh, sqrt, square,
    stop_gradient, sub, tanh, broadcast_in_dim, concatenate, expand_dims, iota, pad, reshape, rev,
    slice, squeeze, transpose, argmax, argmin, cummax, cummin, cumprod, cumsum, reduce_max, reduce_min,
    reduce_prod, reduce_sum, dot_general, dynamic_slice, dynamic_update_slice, gather, scatter_add,
    sort))


def tan(x):
    return div(sin(x), cos(x))


def select(pred, on_true, on_false):
    """on_true where pred else on_false (select_n with the cases swapped)."""
    return select_n(pred, on_false, on_true)


def __getattr__(name):
    from ..core.errors import unsupported_name
    raise unsupported_name(__name__, name, globals(), None)


from ..primitives.bits import (bitcast_convert_type, clz, population_count,  # noqa: E402
                               shift_left, shift_right_arithmetic, shift_right_logical)
(bitcast_convert_type, clz, population_count, shift_left, shift_right_arithmetic,
 shift_right_logical) = _builtins.map(_checked, (bitcast_convert_type, clz, population_count,
                                                 shift_left, shift_right_arithmetic,
                                                 shift_right_logical))
from ._more import *  # noqa: E402,F401,F403  (compositions: *_in_dim, reduce, reduce_window, ...)
