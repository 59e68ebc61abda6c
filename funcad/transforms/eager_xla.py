"""Eager primitives run through XLA (the option `eager_backend="xla"`).

JAX applies each eager primitive as a compiled one-operation XLA program; funcad applies
it with its NumPy impl rule. Both are correct, but where the operation is not exactly
rounded they differ in the last bit: NumPy's float32 `exp`/`log`/`tanh` are not XLA's,
NumPy sums pairwise and XLA in its own order, BLAS and XLA's dot accumulate differently.
A chaotic computation (NUTS, a long optimisation) turns one ulp into other numbers, so
the drop-in (`funcad.as_jax`), whose promise is JAX's printed numbers, sets
`eager_backend="xla"`: the primitives of `ROUTED` then run funcad's own lowering of that
one operation through XLA, compiled once per (primitive, params, operand types) and
cached. The others are exactly rounded (add, mul, compare, sqrt, indexing, shapes) and
give XLA's bits on NumPy, so they stay there, where they are faster; so does a division
of equal shapes (XLA turns a division by a broadcast divisor into a product with its
reciprocal, so that one runs on XLA).

The option swaps the impl rules of the routed primitives (and empties the eager lane's
transcendental set), so `import funcad`'s NumPy path pays nothing for it. jit's constant
folding then leaves the routed primitives to XLA, whose folder computes them as it does
in JAX's programs (with its evaluator, not its compiled kernels).

>>> import funcad, funcad.numpy as fnp, numpy as np
>>> x = np.float32([0.1, 0.7, 3.3])
>>> with funcad.eager_backend("xla"):
...     y = fnp.exp(x)
>>> y.dtype, type(y).__name__
(dtype('float32'), 'EagerArray')
"""
from __future__ import annotations

import functools

import numpy as np

from ..core import eager as _eager, options as _options
from ..core.avals import ShapedArray, aval_of
from ..core.staging import trace_to_jaxpr
from ..core.eager import to_eager
from ..core.errors import FuncadTypeError
from ..core.pytree import tree_map
from ..core.trace import Primitive, ctx, impl_rules, lowering_rules
from ..lowering import xla
from .jit_primitive import executable_for

__all__ = ["ROUTED", "jitted_like_jax", "set_backend"]

# Primitives whose NumPy result can differ from XLA's: transcendental and special
# functions (not correctly rounded), sums, products and dots (summation order), and the
# linear algebra and FFT that XLA runs with its own kernels.
ROUTED = frozenset("""
    exp exp2 expm1 log log1p logistic tanh sin cos tan asin acos atan atan2 sinh cosh asinh
    acosh atanh pow integer_pow rsqrt cbrt div erf erfc erf_inv lgamma digamma polygamma zeta
    igamma igammac igamma_grad_a random_gamma_grad regularized_incomplete_beta bessel_i0e
    bessel_i1e reduce_sum reduce_prod cumsum cumprod dot_general
    conv_general_dilated fft cholesky lu qr eigh svd triangular_solve tridiagonal_solve
""".split())

# Routed primitives that NumPy rounds as XLA does for some operands: there the NumPy
# impl runs. XLA divides by a broadcast divisor (a scalar, or a size-1 axis) as a product
# with the reciprocal; a real division of equal shapes is exactly rounded on both
# (complex division is another algorithm in each).
EXACT_WHEN = {"div": lambda x, y: np.shape(y) == np.broadcast_shapes(np.shape(x), np.shape(y))
              and np.result_type(x, y).kind != "c"}

_numpy_impls: dict = {}   # the routed primitives' NumPy impl rules while XLA runs them
_compiled: dict = {}      # (prim, operand types, params) -> the compiled one-op program


def _operand_key(a):
    if type(a) is np.ndarray:
        return a.shape, a.dtype
    return aval_of(a)


def _compile(prim: Primitive, args, params):
    avals = [ShapedArray(a.shape, a.dtype) if type(a) is np.ndarray else aval_of(a) for a in args]
    closed = trace_to_jaxpr(lambda *xs: [prim.bind(*xs, **params)] if not prim.multiple_results
                            else list(prim.bind(*xs, **params)), avals, name=prim.name)
    exe = executable_for(closed, prim.name, None)
    if not hasattr(exe, "fast_call"):  # an SPMD program (an out_sharding= over a mesh): NumPy's rule
        return None
    run = exe.fast_call()
    if prim.multiple_results:
        return lambda xs: [o._value(False) for o in run(xs)]
    return lambda xs: run(xs)[0]._value(False)


def _xla_impl(prim: Primitive, numpy_impl):
    exact = EXACT_WHEN.get(prim.name)

    def impl(*args, **params):
        if exact is not None and exact(*args):
            return numpy_impl(*args, **params)
        try:
            key = (prim, tuple(map(_operand_key, args)), tuple(params.items()))
            run = _compiled.get(key, _compile)
        except TypeError:  # a param that is no hashable value (an array): NumPy's rule
            return numpy_impl(*args, **params)
        if run is _compile:
            run = _compiled[key] = _compile(prim, args, params)
        return numpy_impl(*args, **params) if run is None else run(args)
    impl.numpy_impl = numpy_impl
    impl.leave_to_xla = True  # jit's constant folding leaves it to XLA's (passes/fold.py)
    return impl


def _routed_primitives():
    return [p for p in impl_rules if type(p) is Primitive and p.name in ROUTED and p in lowering_rules]


def set_backend(value: str) -> None:
    """Run the routed primitives' eager applications on XLA ("xla") or NumPy ("numpy")."""
    if value == "xla":
        xla._load()
        # the linear-algebra primitives are registered on first use elsewhere (SciPy is
        # heavy); routed here, they must exist now
        from ..primitives import decompositions, triangular, tridiagonal  # noqa: F401
        for p in _routed_primitives():
            if p not in _numpy_impls:
                _numpy_impls[p] = impl_rules[p]
                impl_rules[p] = _xla_impl(p, impl_rules[p])
    else:
        for p, rule in _numpy_impls.items():
            impl_rules[p] = rule
        _numpy_impls.clear()
    _eager.set_transcendental_lane(value == "numpy")


_options.bind("eager_backend", on_set=set_backend)


def jitted_like_jax(*, static_argnames: tuple = ()):
    """Decorator for a funcad function that JAX defines jitted (`jnp.mean`, `jnp.log10`,
    `nn.log_softmax` ...): with eager_backend="xla", an eager call runs it as one compiled
    program, as JAX's, because XLA rounds the fused program otherwise than its operations
    one by one (it turns a division by a constant into a product with the reciprocal and
    fuses reductions). Traced, or with eager_backend="numpy", it is `fn` itself.

    >>> import funcad, funcad.numpy as fnp, numpy as np
    >>> with funcad.eager_backend("xla"):  # 7 * (1/3), as JAX's; NumPy's is 7 / 3
    ...     m = fnp.mean(np.float32([1, 2, 4]))
    >>> m, np.mean(np.float32([1, 2, 4]))
    (Array(2.3333335, dtype=float32), np.float32(2.3333333))
    """
    def decorate(fn):
        compiled = []

        @functools.wraps(fn)
        def run(*args, **kwargs):
            if ctx.trace is not None or _options.eager_backend != "xla":
                return fn(*args, **kwargs)
            if not compiled:
                from .jit import jit  # jit's module imports funcad.numpy, whose functions use this
                compiled.append(jit(fn, static_argnames=static_argnames))
            try:
                out = compiled[0](*args, **kwargs)
            except FuncadTypeError:
                # an unhashable static argument, or a value fn needs concrete: op by op
                return fn(*args, **kwargs)
            return tree_map(to_eager, out)
        return run
    return decorate
