"""Complex rows: every op on complex64/complex128 inputs.

The table's NumPy, jit and vmap checks run them like any row; their
derivatives (finite differences along complex directions at orders 1 and 2,
and JAX's grad/jvp/second derivatives, eager and under jit) are checked by
tests/primitives/test_complex.py, since the table's grad checks take float dtypes only.
Rows whose inputs are real but whose output is complex (lax.complex) also
take a complex dtype, so the float grad checks never see a complex output.
"""
import numpy as np

import funcad.lax as lax
import funcad.numpy as fnp
from tests.op_table import _at, op

C = (np.complex64, np.complex128)
_REAL = {np.dtype(np.complex64): np.float32, np.dtype(np.complex128): np.float64}


def _jnp():
    import jax.numpy as jnp
    return jnp


def _jlax():
    import jax.lax as jl
    return jl


def CU(*shapes, lo=-1.5, hi=1.5, re_lo=None, re_hi=None):
    """Complex inputs: real parts uniform in [re_lo, re_hi) (default [lo, hi)), imaginary in [lo, hi)."""
    def gen(rng, dtype):
        rl, rh = (lo if re_lo is None else re_lo), (hi if re_hi is None else re_hi)
        return tuple((rng.uniform(rl, rh, s) + 1j * rng.uniform(lo, hi, s)).astype(dtype) for s in shapes)
    return gen


def CR(cshape, rshape):
    """A complex input and a real one (of the complex dtype's real part)."""
    def gen(rng, dtype):
        return CU(cshape)(rng, dtype) + (rng.uniform(-1.5, 1.5, rshape).astype(_REAL[np.dtype(dtype)]),)
    return gen


def RR(*shapes):
    """Real inputs of the complex dtype's real part (for ops that build complex values)."""
    def gen(rng, dtype):
        return tuple(rng.uniform(-1.5, 1.5, s).astype(_REAL[np.dtype(dtype)]) for s in shapes)
    return gen


def AWAY0(*shapes):
    """Complex inputs with |z| >= 0.5: away from the kink of abs/sign/angle at 0."""
    def gen(rng, dtype):
        return tuple((rng.uniform(0.5, 1.5, s) * np.exp(1j * rng.uniform(-3, 3, s))).astype(dtype)
                     for s in shapes)
    return gen


def _row(name, fun, ref, gen, jax_fun, diff=True, rtol=None):
    op("c_" + name, fun, ref, gen, jax_fun, diff, C, rtol)


S23 = (2, 3)

# Unary math. Inputs stay off the branch cuts (the real axis beyond ±1 for
# arcsin/arccos/arctanh, the imaginary axis beyond ±i for arctan/arcsinh,
# the negative real axis for log/sqrt).
_UNARY = [
    ("sin", CU(S23)), ("cos", CU(S23)), ("tan", CU(S23, lo=-0.6, hi=0.6)),
    ("arcsin", CU(S23, lo=0.2, hi=0.8)), ("arccos", CU(S23, lo=0.2, hi=0.8)),
    ("arctan", CU(S23, lo=0.2, hi=0.7)), ("sinh", CU(S23)), ("cosh", CU(S23)),
    ("tanh", CU(S23, lo=-0.6, hi=0.6)), ("arcsinh", CU(S23, lo=0.2, hi=0.7)),
    ("arccosh", CU(S23, lo=0.3, hi=1.5, re_lo=1.2, re_hi=2.5)), ("arctanh", CU(S23, lo=0.2, hi=0.7)),
    ("exp", CU(S23)), ("exp2", CU(S23)), ("expm1", CU(S23)),
    ("log", CU(S23, re_lo=0.3, re_hi=2.0)), ("log1p", CU(S23, re_lo=0.0, re_hi=2.0)),
    ("log2", CU(S23, re_lo=0.3, re_hi=2.0)), ("log10", CU(S23, re_lo=0.3, re_hi=2.0)),
    ("sqrt", CU(S23, re_lo=0.3, re_hi=2.0)), ("square", CU(S23)), ("reciprocal", AWAY0(S23)),
    ("negative", CU(S23)), ("positive", CU(S23)), ("abs", AWAY0(S23)), ("sign", AWAY0(S23)),
    ("angle", AWAY0(S23)), ("real", CU(S23)), ("imag", CU(S23)), ("conj", CU(S23)),
    ("conjugate", CU(S23)),
]
for _n, _g in _UNARY:
    _row(_n, getattr(fnp, _n), getattr(np, _n), _g, (lambda n: lambda x: getattr(_jnp(), n)(x))(_n))

_row("abs_squared", lambda z: fnp.abs(z) ** 2, lambda z: np.abs(z) ** 2, AWAY0(S23),
     lambda z: _jnp().abs(z) ** 2)
_row("method_parts", lambda z: z.real * z.imag + z.conj(), lambda z: z.real * z.imag + z.conj(),
     CU(S23), lambda z: z.real * z.imag + z.conj())
_row("isreal", fnp.isreal, np.isreal, CU(S23), lambda z: _jnp().isreal(z), diff=False)
_row("isfinite", fnp.isfinite, np.isfinite, CU(S23), lambda z: _jnp().isfinite(z), diff=False)
_row("lax_real_imag", lambda z: lax.real(z) - lax.imag(z), lambda z: z.real - z.imag, CU(S23),
     lambda z: _jlax().real(z) - _jlax().imag(z))
_row("lax_conj", lax.conj, np.conj, CU(S23), lambda z: _jlax().conj(z))
_row("lax_complex", lax.complex, lambda x, y: x + 1j * y, RR(S23, (3,)),
     lambda x, y: _jlax().complex(x, _jnp().broadcast_to(y, x.shape)))

# Arithmetic, complex with complex and with real (promotion).
for _n in ("add", "subtract", "multiply"):
    _row(_n, getattr(fnp, _n), getattr(np, _n), CU(S23, (3,)),
         (lambda n: lambda x, y: getattr(_jnp(), n)(x, y))(_n))
_row("divide", fnp.divide, np.divide, lambda r, d: CU(S23)(r, d) + AWAY0((3,))(r, d),
     lambda x, y: _jnp().divide(x, y))
_row("mul_real", fnp.multiply, np.multiply, CR(S23, (3,)), lambda x, y: _jnp().multiply(x, y))
_row("add_real", lambda z, r: r + z, lambda z, r: r + z, CR(S23, S23), lambda z, r: r + z)
_row("times_1j", lambda r: 1j * r, lambda r: 1j * r, RR(S23), lambda r: 1j * r)
_row("power", fnp.power, np.power, lambda r, d: CU(S23, re_lo=0.3, re_hi=2.0)(r, d) + CU(S23)(r, d),
     lambda x, y: _jnp().power(x, y))
_row("power_int", lambda z: fnp.power(z, 3), lambda z: z ** 3, CU(S23), lambda z: z ** 3)
_row("power_neg_int", lambda z: fnp.power(z, -2), lambda z: z ** -2, AWAY0(S23), lambda z: z ** -2)
_row("power_real", lambda z, r: fnp.power(z, r), lambda z, r: np.power(z, r),
     lambda r, d: CU(S23, re_lo=0.3, re_hi=2.0)(r, d) + RR(S23)(r, d), lambda z, r: _jnp().power(z, r))
_row("where", lambda z, w: fnp.where(z.real > 0, z, w), lambda z, w: np.where(z.real > 0, z, w),
     CU(S23, S23), lambda z, w: _jnp().where(z.real > 0, z, w))

# Reductions.
_row("sum", lambda z: fnp.sum(z, axis=0), lambda z: np.sum(z, axis=0), CU(S23),
     lambda z: _jnp().sum(z, axis=0))
_row("prod", lambda z: fnp.prod(z, axis=1), lambda z: np.prod(z, axis=1), AWAY0(S23),
     lambda z: _jnp().prod(z, axis=1))
_row("mean", fnp.mean, np.mean, CU(S23), lambda z: _jnp().mean(z))
_row("var", lambda z: fnp.var(z, axis=1), lambda z: np.var(z, axis=1), CU(S23),
     lambda z: _jnp().var(z, axis=1))
_row("std", fnp.std, np.std, CU(S23), lambda z: _jnp().std(z))
_row("cumsum", lambda z: fnp.cumsum(z, axis=1), lambda z: np.cumsum(z, axis=1), CU(S23),
     lambda z: _jnp().cumsum(z, axis=1))
_row("cumprod", fnp.cumprod, np.cumprod, AWAY0((5,)), lambda z: _jnp().cumprod(z))
_row("norm", fnp.linalg.norm, np.linalg.norm, CU((4,)), lambda z: _jnp().linalg.norm(z))
_row("norm_fro", lambda z: fnp.linalg.norm(z, axis=(0, 1)), lambda z: np.linalg.norm(z, axis=(0, 1)),
     CU(S23), lambda z: _jnp().linalg.norm(z, axis=(0, 1)))

# Contractions: dot/matmul/einsum do not conjugate, vdot/vecdot conjugate their first operand.
_row("dot", fnp.dot, np.dot, CU(S23, (3, 2)), lambda a, b: _jnp().dot(a, b))
_row("matmul", fnp.matmul, np.matmul, CU((2, 2, 3), (3, 2)), lambda a, b: _jnp().matmul(a, b))
_row("matmul_real", fnp.matmul, np.matmul, lambda r, d: CU(S23)(r, d) + RR((3, 2))(r, d),
     lambda a, b: _jnp().matmul(a, b))
_row("einsum", lambda a, b: fnp.einsum("ij,kj->ik", a, b), lambda a, b: np.einsum("ij,kj->ik", a, b),
     CU(S23, (4, 3)), lambda a, b: _jnp().einsum("ij,kj->ik", a, b))
_row("vdot", fnp.vdot, np.vdot, CU(S23, S23), lambda a, b: _jnp().vdot(a, b))
_row("vecdot", fnp.vecdot, np.vecdot, CU(S23, (3,)), lambda a, b: _jnp().vecdot(a, b))
_row("inner", fnp.inner, np.inner, CU(S23, (4, 3)), lambda a, b: _jnp().inner(a, b))
_row("outer", fnp.outer, np.outer, CU((3,), (2,)), lambda a, b: _jnp().outer(a, b))
_row("tensordot", lambda a, b: fnp.tensordot(a, b, 1), lambda a, b: np.tensordot(a, b, 1),
     CU(S23, (3, 2)), lambda a, b: _jnp().tensordot(a, b, 1))


# Indexing and .at updates.
def _np_at_add(x, u):
    out = x.copy()
    np.add.at(out, (np.array([0, 2, 0]),), u)
    return out


def _np_at_set(x, v):
    out = x.copy()
    out[1:3] = v
    return out


_row("getitem", lambda z: z[1, ::-1], lambda z: z[1, ::-1], CU(S23), lambda z: z[1, ::-1])
_row("take", lambda z: fnp.take(z, np.array([2, 0, 2])), lambda z: np.take(z, np.array([2, 0, 2])),
     CU((4,)), lambda z: _jnp().take(z, np.array([2, 0, 2])))
_row("at_add", lambda x, u: _at(x)[np.array([0, 2, 0])].add(u), _np_at_add, CU((4,), (3,)),
     lambda x, u: x.at[np.array([0, 2, 0])].add(u))
_row("at_set", lambda x, v: _at(x)[1:3].set(v), _np_at_set, CU((4,), (2,)),
     lambda x, v: x.at[1:3].set(v))
_row("at_multiply", lambda x, v: _at(x)[1].multiply(v), 
     lambda x, v: np.concatenate([x[:1], x[1:2] * v, x[2:]]), CU((4,), ()), lambda x, v: x.at[1].multiply(v))
_row("concatenate", lambda z, w: fnp.concatenate([z, w]), lambda z, w: np.concatenate([z, w]),
     CU((3,), (2,)), lambda z, w: _jnp().concatenate([z, w]))
_row("mixed_chain", lambda z, r: fnp.sum(fnp.abs(fnp.exp(1j * r) * z) ** 2 + fnp.real(z * fnp.conj(z))),
     lambda z, r: np.sum(np.abs(np.exp(1j * r) * z) ** 2 + np.real(z * np.conj(z))), CR((4,), (4,)),
     lambda z, r: _jnp().sum(_jnp().abs(_jnp().exp(1j * r) * z) ** 2 + _jnp().real(z * _jnp().conj(z))))
