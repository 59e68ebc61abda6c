"""Operators and array methods for tracers (and for jit's device arrays)."""
from __future__ import annotations

from ..core.eager import eager_result
from ..arrays import complex as Cx
from ..arrays import creation as C
from ..arrays import indexing as X
from ..arrays import linalg as L
from ..arrays import manip as Mp
from ..arrays import reductions as R
from ..arrays import shape as Sh
from ..arrays import ufuncs as U
from ._bits import left_shift, right_shift


def _binop(f, swap=False):
    """An operator method that defers (NotImplemented) to an operand it does not know,
    as JAX's do; the lane's own (ufuncs.OPERATORS) where `f` has them."""
    if f in U.OPERATORS:
        return U.OPERATORS[f][swap]
    if swap:
        def op(self, other):
            return f(other, self) if U.accepted_operand(other) else NotImplemented
    else:
        def op(self, other):
            return f(self, other) if U.accepted_operand(other) else NotImplemented
    op.__name__ = getattr(f, "__name__", "op")
    return op


def _swap(f):
    return _binop(f, swap=True)


def _reshape_method(self, *shape, order="C"):
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = shape[0]
    return Sh.reshape(self, shape, order)


def _transpose_method(self, *axes):
    if len(axes) == 1 and not isinstance(axes[0], int):
        axes = axes[0]
    return Sh.transpose(self, axes or None)


def _left_shift(x, y):
    return left_shift(x, y)


def _right_shift(x, y):
    return right_shift(x, y)


def _round_method(x, ndigits=None):
    # Python's round(x): an integer array without ndigits, as JAX's (not a Python int)
    y = U.round(x, ndigits or 0)
    return y if ndigits is not None else C.astype(y, int)


ARRAY_METHODS = {
    "__add__": _binop(U.add), "__radd__": _swap(U.add),
    "__sub__": _binop(U.subtract), "__rsub__": _swap(U.subtract),
    "__mul__": _binop(U.multiply), "__rmul__": _swap(U.multiply),
    "__truediv__": _binop(U.true_divide), "__rtruediv__": _swap(U.true_divide),
    "__floordiv__": _binop(U.floor_divide), "__rfloordiv__": _swap(U.floor_divide),
    "__mod__": _binop(U.remainder), "__rmod__": _swap(U.remainder),
    "__divmod__": _binop(U.divmod), "__rdivmod__": _swap(U.divmod),
    "__pow__": _binop(U.power), "__rpow__": _swap(U.power),
    "__matmul__": _binop(L.matmul), "__rmatmul__": _swap(L.matmul),
    "__and__": _binop(U.bitwise_and), "__rand__": _swap(U.bitwise_and),
    "__or__": _binop(U.bitwise_or), "__ror__": _swap(U.bitwise_or),
    "__xor__": _binop(U.bitwise_xor), "__rxor__": _swap(U.bitwise_xor),
    "__lshift__": _binop(_left_shift), "__rlshift__": _swap(_left_shift),
    "__rshift__": _binop(_right_shift), "__rrshift__": _swap(_right_shift),
    "__neg__": U.neg_operator, "__pos__": U.positive, "__abs__": U.absolute, "__invert__": U.invert,
    "__round__": _round_method,
    "__eq__": _binop(U.equal), "__ne__": _binop(U.not_equal), "__lt__": _binop(U.less),
    "__le__": _binop(U.less_equal), "__gt__": _binop(U.greater), "__ge__": _binop(U.greater_equal),
    "__getitem__": X.getitem,
    "sum": R.sum, "mean": R.mean, "var": R.var, "std": R.std, "prod": R.prod,
    "max": R.max, "min": R.min, "all": R.all, "any": R.any,
    "argmax": R.argmax, "argmin": R.argmin, "cumsum": R.cumsum, "cumprod": R.cumprod,
    "reshape": _reshape_method, "transpose": _transpose_method, "ravel": Sh.ravel,
    "flatten": Sh.ravel, "squeeze": Sh.squeeze, "swapaxes": Sh.swapaxes,
    "astype": C.astype, "dot": L.dot, "clip": U.clip, "round": U.round,
    "diagonal": Sh.diagonal, "trace": Sh.trace, "sort": Sh.sort, "argsort": Sh.argsort,
    "take": X.take, "repeat": Mp.repeat,
    "T": property(lambda self: Sh.transpose(self)),
    "mT": property(Sh.matrix_transpose),
    "at": property(X._IndexUpdateHelper),
    "real": property(Cx.real), "imag": property(Cx.imag), "conj": Cx.conj, "conjugate": Cx.conj,
}


def install(cls) -> None:
    """Give `cls` NumPy's operators and methods, implemented with funcad ops."""
    for name, fn in ARRAY_METHODS.items():
        # A named method that changes nothing (x.astype(x.dtype), x.reshape(x.shape) of a
        # device Array) hands back its host value: that too is an immutable funcad array.
        if callable(fn) and not name.startswith("__"):
            fn = eager_result(fn)
        setattr(cls, name, fn)
    cls.__hash__ = None


_INPLACE = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
            "lshift", "rshift")


def install_eager(cls) -> None:
    """`install` for an ndarray subclass: also replace NumPy's in-place operators, so that
    `b += 1` rebinds `b` to a new array (as in JAX) instead of writing into it."""
    install(cls)
    for op in _INPLACE:
        setattr(cls, f"__i{op}__", ARRAY_METHODS[f"__{op}__"])
