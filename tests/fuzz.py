"""Differential fuzzing: random well-typed programs, run by funcad and by JAX.

A `Program` is a short straight-line computation over 1-3 float64 inputs of
random, broadcast-compatible shapes, wrapped in a random stack of
transformations (jit, grad, jvp, vmap, innermost first). `run(program,
backend)` builds it with funcad (funcad.numpy + funcad transforms) or with JAX
(jax.numpy + jax transforms, x64) and evaluates it on inputs drawn from the
program's seed; the test compares the two, leaf by leaf.

The ops come from the op table (tests/op_table.py): every differentiable
row with a JAX oracle that acts elementwise (unary, or binary with NumPy
broadcasting) is usable. Its input domain is read off the row's own input
generator, and the program squashes each operand into that domain with a
smooth map, so values and derivatives stay finite. Structural ops
(reductions, transposes, reshapes, matmul, indexing, where, concatenate,
cumsum, sort...) are written here once against a NumPy-like namespace `xp`,
which is funcad.numpy for funcad and jax.numpy for JAX.

>>> import hypothesis.strategies as st
>>> from hypothesis import given, settings
>>> p = Program(((3,),), (Step("sin", (0,), ()),), ("grad",), seed=0)
>>> out_f, out_j = run(p, "funcad"), run(p, "jax")
>>> bool(np.allclose(out_f[0], out_j[0]))
True
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np
from hypothesis import strategies as st

import funcad
import funcad.numpy as fnp

from tests.op_table import OPS

# Rows left out although they qualify: their derivative jumps at points that
# rounding (NumPy vs XLA) can put on either side, so they would give false alarms.
_KINKY = {"remainder", "fmod", "lax_rem", "copysign", "floor_divide", "heaviside", "sign",
          "lax_sign", "lax_round", "round_decimals",
          # JAX's derivative of spence is NaN on part of (1, 2] (a NaN from the unused branch
          # leaks through 0 * NaN); funcad's is finite there (checked against FD in
          # tests/scipy/test_special_functions.py).
          "special2_spence"}


def _jax():
    import jax
    jax.config.update("jax_enable_x64", True)
    return jax


# ------------------------------------------------------------------ ops ----

@dataclass(frozen=True)
class FuzzOp:
    name: str
    arity: int
    funcad_fun: Callable       # f(*arrays, **params) with funcad
    jax_fun: Callable          # the same with JAX
    shape: Callable            # shape(*in_shapes, **params) -> out shape, or None if not applicable
    params: Callable = lambda draw, *shapes: {}  # draw the static params from hypothesis
    domains: tuple = ()        # per operand: (lo, hi) the operand is squashed into, or None


def _broadcast(*shapes):
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return None


def _domain(samples: np.ndarray):
    """(lo, hi) covering a row's sampled inputs; an operand kept away from 0
    (|x| >= 0.1 always) is squashed into positive values only."""
    lo, hi = float(samples.min()), float(samples.max())
    a = float(np.abs(samples).min())
    if a >= 0.1 and lo < 0 < hi:
        return (a, float(np.abs(samples).max()))
    return (lo, hi)


def _is_elementwise(spec, arity: int) -> tuple[bool, bool]:
    """(elementwise, broadcasts) for a table row, checked on NumPy inputs; broadcasting
    (also across ranks) must work in funcad and in JAX."""
    rng = np.random.default_rng(0)
    args = spec.args(rng, np.float64)
    try:
        out = np.asarray(spec.fun(*args))
        if out.shape != args[0].shape or out.dtype != np.float64:
            return False, False
        flat = np.asarray(spec.fun(*[a.reshape(-1) for a in args]))
        if not np.allclose(flat, out.reshape(-1), equal_nan=True):
            return False, False
        scalar = np.asarray(spec.fun(*[a.reshape(-1)[0] for a in args]))
        if not np.allclose(scalar, out.reshape(-1)[0], equal_nan=True):
            return False, False
    except Exception:
        return False, False
    if arity == 1:
        return True, True
    try:
        _jax()
        for y in (args[1][..., :1], args[1][0], args[1][0, 0]):
            for fun in (spec.fun, spec.jax_fun):
                if np.shape(fun(args[0], y)) != args[0].shape:
                    return True, False
        return True, True
    except Exception:
        return True, False


@lru_cache(maxsize=None)
def table_ops() -> tuple[FuzzOp, ...]:
    """The op-table rows usable in random programs, as FuzzOps."""
    out = []
    for spec in OPS:
        if not spec.diff or spec.jax_fun is None or spec.name in _KINKY or np.float64 not in spec.dtypes:
            continue
        rng = np.random.default_rng(1)
        samples = [spec.args(rng, np.float64) for _ in range(40)]
        arity = len(samples[0])
        if arity not in (1, 2) or any(np.asarray(a).dtype.kind != "f" for a in samples[0]):
            continue
        if len({np.shape(a) for a in samples[0]}) != 1:
            continue
        elementwise, broadcasts = _is_elementwise(spec, arity)
        if not elementwise:
            continue
        domains = tuple(_domain(np.concatenate([np.ravel(s[i]) for s in samples])) for i in range(arity))
        shape = _broadcast if broadcasts else (lambda *s: s[0] if len(set(s)) == 1 else None)
        out.append(FuzzOp(spec.name, arity, spec.fun, spec.jax_fun, shape, domains=domains))
    return tuple(out)


# -- structural ops, written once against a NumPy-like namespace `xp` --------

def _axis_param(draw, shape):
    return {"axis": draw(st.integers(-len(shape), len(shape) - 1))} if shape else {"axis": None}


def _reduce_shape(shape, axis, keepdims=False):
    if axis is None:
        return () if not keepdims else tuple(1 for _ in shape)
    a = axis % len(shape)
    return tuple(1 if i == a else s for i, s in enumerate(shape)) if keepdims else shape[:a] + shape[a + 1:]


def _reduction(name, jax_name=None):
    def params(draw, shape):
        p = _axis_param(draw, shape)
        p["keepdims"] = draw(st.booleans())
        return p

    def fun(xp):
        def f(x, axis, keepdims):
            if name == "logsumexp":
                lse = fnp.logsumexp if xp is fnp else _jax().scipy.special.logsumexp
                return lse(x, axis=axis, keepdims=keepdims)
            return getattr(xp, jax_name or name)(x, axis=axis, keepdims=keepdims)
        return f
    return FuzzOp(name, 1, fun(fnp), _lazy_jnp(fun), lambda s, axis, keepdims: _reduce_shape(s, axis, keepdims),
                  params, domains=((-2.0, 2.0),) if name == "prod" else ())


def _lazy_jnp(make):
    """make(xp) for jax.numpy, built on first use (JAX is imported lazily)."""
    cache = []

    def f(*args, **kw):
        if not cache:
            import jax.numpy as jnp
            _jax()
            cache.append(make(jnp))
        return cache[0](*args, **kw)
    return f


def _op(name, arity, make, shape, params=lambda draw, *s: {}, domains=()):
    return FuzzOp(name, arity, make(fnp), _lazy_jnp(make), shape, params, domains)


def _matmul_shape(s):
    return None if len(s) < 1 else (s[:-1] + s[-2:-1] if len(s) >= 2 else ())


def _cumsum_params(draw, shape):
    return {"axis": draw(st.integers(-len(shape), len(shape) - 1))} if shape else None


STRUCTURAL = (
    _reduction("sum"), _reduction("mean"), _reduction("max"), _reduction("min"), _reduction("prod"),
    _reduction("logsumexp"),
    _op("transpose", 1, lambda xp: lambda x: xp.transpose(x), lambda s: tuple(reversed(s))),
    _op("ravel", 1, lambda xp: lambda x: xp.reshape(x, (-1,)), lambda s: (int(np.prod(s)),)),
    _op("flip0", 1, lambda xp: lambda x: x[::-1], lambda s: s if s else None),
    _op("slice0", 1, lambda xp: lambda x: x[1:], lambda s: (s[0] - 1,) + s[1:] if s and s[0] > 1 else None),
    _op("take0", 1, lambda xp: lambda x: x[xp.array([0, -1, 0])], lambda s: (3,) + s[1:] if s else None),
    _op("expand_bcast", 1, lambda xp: lambda x: xp.broadcast_to(xp.expand_dims(x, 0), (2,) + x.shape),
        lambda s: (2,) + s if len(s) < 3 else None),
    _op("gram", 1, lambda xp: lambda x: xp.matmul(x, xp.swapaxes(x, -1, -2)) if x.ndim >= 2 else xp.dot(x, x),
        _matmul_shape),
    _op("concat_self", 1, lambda xp: lambda x: xp.concatenate([x, 2.0 * x], axis=0),
        lambda s: (2 * s[0],) + s[1:] if s else None),
    _op("cumsum", 1, lambda xp: lambda x, axis: xp.cumsum(x, axis=axis), lambda s, axis: s, _cumsum_params),
    _op("sort", 1, lambda xp: lambda x, axis: xp.sort(x, axis=axis), lambda s, axis: s, _cumsum_params),
    _op("where_gt", 2, lambda xp: lambda x, y: xp.where(x > 0.3, x, y), _broadcast),
    _op("square_sum_sqrt", 1, lambda xp: lambda x: xp.sqrt(xp.sum(x * x) + 1.0), lambda s: ()),
    _reduction("var"), _reduction("std"),
    _op("norm_last", 1, lambda xp: lambda x: xp.linalg.norm(x + 3.0, axis=-1), lambda s: s[:-1] if s else None),
    _op("roll", 1, lambda xp: lambda x: xp.roll(x, 1, axis=0), lambda s: s if s else None),
    _op("tile", 1, lambda xp: lambda x: xp.tile(x, 2), lambda s: s[:-1] + (2 * s[-1],) if s else (2,)),
    _op("repeat0", 1, lambda xp: lambda x: xp.repeat(x, 2, axis=0), lambda s: (2 * s[0],) + s[1:] if s else None),
    _op("swapaxes", 1, lambda xp: lambda x: xp.swapaxes(x, 0, -1), lambda s: s[-1:] + s[1:-1] + s[:1] if s else None),
    _op("tril", 1, lambda xp: lambda x: xp.tril(x), lambda s: s if len(s) >= 2 else None),
    _op("clip", 1, lambda xp: lambda x: xp.clip(x, -0.5, 0.7), lambda s: s),
    _op("outer_self", 1, lambda xp: lambda x: xp.einsum("...i,...j->...ij", x, x),
        lambda s: s + s[-1:] if s else None),
    _op("take_sorted", 1, lambda xp: lambda x: xp.take_along_axis(x, xp.argsort(x, axis=-1), axis=-1),
        lambda s: s if s else None),
    _op("at_add0", 1, lambda xp: lambda x: _at(xp, x)[0].add(1.5 * x[-1]), lambda s: s if s else None),
    _op("cond", 1, lambda xp: lambda x: _lax(xp).cond(xp.sum(x) > 0, xp.sin, lambda v: v * v, x), lambda s: s),
    _op("scan", 1, lambda xp: lambda x: _lax(xp).scan(lambda c, xi: (0.9 * c + xp.sin(xi), c * xi),
                                                     xp.zeros_like(x[0]), x)[1],
        lambda s: s if s else None),
    _op("fori", 1, lambda xp: lambda x: _lax(xp).fori_loop(0, 3, lambda i, c: xp.sin(c) + 0.1 * x, x),
        lambda s: s),
)


def _lax(xp):
    if xp is fnp:
        return funcad.lax
    import jax.lax
    return jax.lax


def _at(xp, x):
    if xp is fnp:
        from funcad.arrays.indexing import _IndexUpdateHelper
        return _IndexUpdateHelper(x)
    return x.at


@lru_cache(maxsize=None)
def all_ops() -> dict[str, FuzzOp]:
    return {op.name: op for op in table_ops() + STRUCTURAL}


# ------------------------------------------------------------- programs ----

@dataclass(frozen=True)
class Step:
    op: str
    args: tuple        # indices into the values computed so far (inputs first)
    params: tuple      # sorted (name, value) pairs


@dataclass(frozen=True)
class Program:
    in_shapes: tuple   # shapes of the program's own inputs (before any vmap)
    steps: tuple
    transforms: tuple  # innermost first: "jit", "grad", "jvp", "jacfwd", "jacrev", "linearize",
    #                    "vjp", ("vmap", in_axes, size)
    seed: int
    dtype: str = "float64"

    def __repr__(self):
        lines = [f"Program(in_shapes={self.in_shapes}, transforms={self.transforms}, seed={self.seed}, "
                 f"dtype={self.dtype!r},"]
        for i, s in enumerate(self.steps):
            lines.append(f"  v{len(self.in_shapes) + i} = {s.op}({', '.join(f'v{a}' for a in s.args)}"
                         f"{''.join(f', {k}={v!r}' for k, v in s.params)})")
        return "\n".join(lines) + ")"


def _squash(xp, x, domain):
    """A smooth map of the reals onto (lo, hi)."""
    lo, hi = domain
    return lo + (hi - lo) * (0.5 + 0.5 * xp.tanh(0.5 * x))


def _xp(backend):
    if backend == "funcad":
        return fnp
    _jax()
    import jax.numpy as jnp
    return jnp


def program_fun(prog: Program, backend: str) -> Callable:
    """The program's body (no transforms) as a function of its inputs."""
    xp, ops = _xp(backend), all_ops()

    def f(*xs):
        vals = list(xs)
        for s in prog.steps:
            op = ops[s.op]
            args = [vals[a] for a in s.args]
            if op.domains:
                args = [a if d is None else _squash(xp, a, d) for a, d in zip(args, op.domains)]
            fun = op.funcad_fun if backend == "funcad" else op.jax_fun
            vals.append(fun(*args, **dict(s.params)))
        return vals[-1]
    return f


def _weights(shape, dtype) -> np.ndarray:
    """Fixed, distinct weights: grad takes the gradient of sum(w * output)."""
    n = int(np.prod(shape))
    return (np.cos(np.arange(n)) + 1.5).reshape(shape).astype(dtype)


def _leaves(tree):
    return list(tree) if isinstance(tree, (tuple, list)) else [tree]


def transformed(prog: Program, backend: str) -> Callable:
    """The program's body wrapped in its transforms, innermost first."""
    xp = _xp(backend)
    if backend == "funcad":
        mod = funcad
    else:
        mod = _jax()
    jit, grad, jvp, vmap, jacfwd, jacrev, linearize, vjp = (
        mod.jit, mod.grad, mod.jvp, mod.vmap, mod.jacfwd, mod.jacrev, mod.linearize, mod.vjp)
    f = program_fun(prog, backend)
    n = len(prog.in_shapes)
    for t in prog.transforms:
        g = f
        if t == "jit":
            f = jit(g)
        elif t == "grad":
            def scalar(*xs, g=g):
                return sum(xp.sum(leaf * _weights(np.shape(leaf), leaf.dtype)) for leaf in _leaves(g(*xs)))
            f = grad(scalar, argnums=tuple(range(n)))
        elif t == "jvp":
            def f(*xs, g=g):
                tangents = tuple(xp.cos(0.7 * x) for x in xs)
                return jvp(g, xs, tangents)
        elif t in ("jacfwd", "jacrev"):
            f = (jacfwd if t == "jacfwd" else jacrev)(g)  # w.r.t. the first input
        elif t == "linearize":
            def f(*xs, g=g):
                return linearize(g, *xs)[1](*[xp.cos(0.7 * x) for x in xs])
        elif t == "vjp":
            def f(*xs, g=g):
                out, pullback = vjp(g, *xs)
                return pullback(_tree_map(lambda o: xp.cos(o), out))
        else:
            _, in_axes, _ = t
            f = vmap(g, in_axes=in_axes)
    return f


def _tree_map(fn, tree):
    if isinstance(tree, (tuple, list)):
        return type(tree)(_tree_map(fn, t) for t in tree)
    return fn(tree)


def inputs(prog: Program) -> list[np.ndarray]:
    """The program's arguments: its input shapes with the vmapped axes in front."""
    shapes = [tuple(s) for s in prog.in_shapes]
    for t in prog.transforms:
        if isinstance(t, tuple):
            _, in_axes, size = t
            shapes = [s if ax is None else (size,) + s for s, ax in zip(shapes, in_axes)]
    rng = np.random.default_rng(prog.seed)
    return [rng.uniform(-2.0, 2.0, s).astype(prog.dtype) for s in shapes]


def run(prog: Program, backend: str) -> list[np.ndarray]:
    """Evaluate the transformed program; its output leaves as NumPy arrays."""
    args = inputs(prog)
    if backend == "jax":  # JAX arrays, so that eager JAX code may use `.at`
        _jax()
        import jax.numpy as jnp
        args = [jnp.asarray(a) for a in args]
    out = transformed(prog, backend)(*args)
    flat = []

    def walk(t):
        if isinstance(t, (tuple, list)):
            for x in t:
                walk(x)
        else:
            flat.append(np.asarray(t))
    walk(out)
    return flat


# ------------------------------------------------------------ strategies ----

def _shape(draw, max_rank=3):
    return tuple(draw(st.lists(st.integers(1, 4), min_size=0, max_size=max_rank)))


def _broadcastable_to(draw, base):
    """A shape that broadcasts to `base`: leading axes dropped, some sizes set to 1."""
    k = draw(st.integers(0, len(base)))
    return tuple(1 if draw(st.booleans()) and draw(st.booleans()) else d for d in base[k:])


TRANSFORMS = ("jit", "grad", "jvp", "vmap", "jacfwd", "jacrev", "linearize", "vjp")


@st.composite
def programs(draw, max_steps: int = 5, max_transforms: int = 3, dtypes=("float64",)) -> Program:
    """Random well-typed programs with random transform stacks."""
    ops = all_ops()
    base = _shape(draw)
    n_in = draw(st.integers(1, 3))
    in_shapes = tuple(_broadcastable_to(draw, base) for _ in range(n_in))
    shapes = list(in_shapes)
    steps = []
    names = sorted(ops)
    for _ in range(draw(st.integers(1, max_steps))):
        op = ops[draw(st.sampled_from(names))]
        first = draw(st.integers(0, len(shapes) - 1))
        args = [first]
        if op.arity == 2:
            ok = [i for i, s in enumerate(shapes) if op.shape(shapes[first], s) is not None]
            args.append(draw(st.sampled_from(ok)))
        arg_shapes = [shapes[a] for a in args]
        params = op.params(draw, *arg_shapes)
        if params is None:
            continue
        out = op.shape(*arg_shapes, **params)
        if out is None or int(np.prod(out)) > 64:
            continue
        steps.append(Step(op.name, tuple(args), tuple(sorted(params.items()))))
        shapes.append(out)
    if not steps:
        steps.append(Step("sin", (0,), ()))
    transforms = []
    for _ in range(draw(st.integers(0, max_transforms))):
        kind = draw(st.sampled_from(TRANSFORMS))
        if kind == "vmap":
            axes = tuple(draw(st.sampled_from([0, None])) for _ in range(n_in))
            if all(a is None for a in axes):
                axes = (0,) + axes[1:]
            transforms.append(("vmap", axes, draw(st.integers(1, 3))))
        else:
            transforms.append(kind)
    return Program(in_shapes, tuple(steps), tuple(transforms), draw(st.integers(0, 2 ** 31 - 1)),
                   draw(st.sampled_from(dtypes)))


def compare(prog: Program, rtol: float | None = None, atol: float | None = None) -> None:
    """Run `prog` under funcad and JAX and assert the outputs agree. A program JAX
    rejects is not a test case (hypothesis discards it)."""
    from hypothesis import reject
    try:
        want = run(prog, "jax")
    except Exception:
        reject()
    got = run(prog, "funcad")
    f32 = prog.dtype == "float32"
    rtol = rtol if rtol is not None else (2e-3 if f32 else 1e-6)
    atol = atol if atol is not None else (1e-4 if f32 else 1e-9)
    assert len(got) == len(want), f"{len(got)} outputs vs JAX's {len(want)}\n{prog!r}"
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, f"output {i}: shape {g.shape} vs JAX's {w.shape}\n{prog!r}"
        assert g.dtype == w.dtype, f"output {i}: dtype {g.dtype} vs JAX's {w.dtype}\n{prog!r}"
        scale = max(1.0, float(np.nanmax(np.abs(np.where(np.isfinite(w), w, 0.0)), initial=0.0)))
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol * scale, equal_nan=True,
                                   err_msg=f"output {i} differs from JAX\n{prog!r}")


# ======================================================= edge programs ====
# One op on edge-valued inputs of every dtype (bool ... complex128, with ±0, ±inf, nan,
# huge, tiny and subnormal values, integer extremes), 0-d and size-0 shapes, in 64-bit
# and 32-bit mode, under one transform stack; funcad's dtype, shape and values against
# JAX's. `edge_program(seed)` draws one; `compare_edge(p)` returns the mismatch or None.

EDGE_DTYPES = ("bool", "int8", "int32", "uint32", "float16", "bfloat16", "float32", "float64",
               "complex64", "complex128")
EDGE_SHAPES = ((), (0,), (3,), (2, 3), (0, 2), (1,))
EDGE_TRANSFORMS = ("value", "jit", "grad", "jit_grad", "jvp", "vmap", "hessian", "jit_vmap_grad")


class _Lib:
    """The namespaces one program uses: funcad's or JAX's."""

    def __init__(self, backend: str):
        if backend == "funcad":
            import funcad.nn as nn
            import funcad.scipy.special as special
            self.mod, self.np, self.nn, self.special, self.lax = funcad, fnp, nn, special, funcad.lax
        else:
            jax = _jax()
            import jax.nn as nn
            import jax.numpy as jnp
            import jax.scipy.special as special
            self.mod, self.np, self.nn, self.special, self.lax = jax, jnp, nn, special, jax.lax


# name -> (arity, input kinds, differentiable, f(lib, *xs)); kinds: the dtype kinds the op takes
_U, _F, _R = "biufc", "fc", "biuf"  # any, inexact, real
EDGE_OPS = {
    **{n: (1, _U, True, (lambda n: lambda L, x: getattr(L.np, n)(x))(n)) for n in (
        "sin", "cos", "tan", "exp", "log", "sqrt", "log1p", "expm1", "tanh", "sinh", "arctan", "arcsinh",
        "exp2", "log2", "log10", "reciprocal", "negative", "square", "absolute")},
    **{n: (1, _R, True, (lambda n: lambda L, x: getattr(L.np, n)(x))(n)) for n in (
        "cbrt", "deg2rad", "arccos", "arcsin", "arctanh", "arccosh", "rint")},
    **{n: (1, _U, False, (lambda n: lambda L, x: getattr(L.np, n)(x))(n)) for n in (
        "sign", "isnan", "isinf", "isfinite", "logical_not")},
    **{n: (1, _R, False, (lambda n: lambda L, x: getattr(L.np, n)(x))(n)) for n in (
        "floor", "ceil", "trunc", "signbit", "spacing")},
    "frexp0": (1, "f", True, lambda L, x: L.np.frexp(x)[0]),
    "angle": (1, _U, True, lambda L, x: L.np.angle(x)),
    "real": (1, _U, True, lambda L, x: L.np.real(x)),
    "conj": (1, _U, True, lambda L, x: L.np.conj(x)),
    **{n: (2, _U, True, (lambda n: lambda L, x, y: getattr(L.np, n)(x, y))(n)) for n in (
        "add", "subtract", "multiply", "true_divide", "power", "float_power", "logaddexp")},
    **{n: (2, _R, True, (lambda n: lambda L, x, y: getattr(L.np, n)(x, y))(n)) for n in (
        "maximum", "minimum", "arctan2", "hypot", "copysign", "heaviside", "logaddexp2")},
    **{n: (2, _R, False, (lambda n: lambda L, x, y: getattr(L.np, n)(x, y))(n)) for n in (
        "floor_divide", "remainder", "fmod")},
    **{n: (2, _U, False, (lambda n: lambda L, x, y: getattr(L.np, n)(x, y))(n)) for n in (
        "less", "greater_equal", "equal", "not_equal")},
    # reductions and structural ops
    **{n: (1, _U, True, (lambda n: lambda L, x: getattr(L.np, n)(x, axis=-1 if x.ndim else None))(n))
       for n in ("sum", "prod", "cumsum", "mean")},
    **{n: (1, _R, True, (lambda n: lambda L, x: getattr(L.np, n)(x, axis=-1 if x.ndim else None))(n))
       for n in ("max", "min", "sort")},
    "argmax_kd": (1, _R, False, lambda L, x: L.np.argmax(x, axis=None, keepdims=True)),
    "var": (1, _R, True, lambda L, x: L.np.var(x)),
    "flip_T": (1, _U, True, lambda L, x: L.np.flip(x).T),
    "concat": (1, _U, True, lambda L, x: L.np.concatenate([L.np.atleast_1d(x), L.np.atleast_1d(x)])),
    "where": (2, _U, True, lambda L, x, y: L.np.where(L.np.real(x) > 0, x, y)),
    "at_add": (1, "iufc", True, lambda L, x: L.np.atleast_1d(x).at[:1].add(L.np.atleast_1d(x)[-1:])),
    "einsum": (1, _U, True, lambda L, x: L.np.einsum("...i,...i->...", L.np.atleast_1d(x), L.np.atleast_1d(x))),
    # control flow
    "cond": (1, _U, True, lambda L, x: L.lax.cond(L.np.sum(L.np.real(x)) > 0, lambda v: v * 2, lambda v: v - 1, x)),
    "fori": (1, "iufc", True, lambda L, x: L.lax.fori_loop(0, 3, lambda i, c: c * 2 + x, x)),
    "scan": (1, "iufc", True, lambda L, x: L.lax.scan(lambda c, v: (c + v, c * v), L.np.zeros_like(x[..., :1].sum(-1)) if x.ndim else 0 * x, L.np.atleast_1d(x) if x.ndim < 1 else L.np.moveaxis(x, -1, 0))[1]),
    # linalg, fft
    "solve": (1, _F, True, lambda L, x: L.np.linalg.solve(_sq(L, x) + 3 * L.np.eye(_n(x), dtype=x.dtype), L.np.atleast_1d(x)[..., :_n(x)])),
    "det": (1, _F, True, lambda L, x: L.np.linalg.det(_sq(L, x))),
    "fft": (1, _F, True, lambda L, x: L.np.fft.fft(L.np.atleast_1d(x))),
    "rfft": (1, "f", True, lambda L, x: L.np.fft.rfft(L.np.atleast_1d(x))),
    # scipy.special, nn
    **{n: (1, "biuf", True, (lambda n: lambda L, x: getattr(L.special, n)(x))(n)) for n in (
        "erf", "erfc", "gammaln", "digamma", "expit", "logit", "entr", "i0e", "ndtr", "log_ndtr")},
    "xlogy": (2, "biuf", True, lambda L, x, y: L.special.xlogy(x, y)),
    "logsumexp": (1, _U, True, lambda L, x: L.special.logsumexp(x, axis=-1 if x.ndim else None)),
    **{n: (1, "f", True, (lambda n: lambda L, x: getattr(L.nn, n)(x))(n)) for n in (
        "relu", "softplus", "sigmoid", "silu", "gelu", "elu", "log_sigmoid", "relu6")},
    "softmax": (1, "f", True, lambda L, x: L.nn.softmax(x, axis=-1 if x.ndim else None)),
    # random: a sampler's shape and dtype from the input's, values from a fixed key
    "uniform": (1, "f", False, lambda L, x: L.mod.random.uniform(L.mod.random.key(3), x.shape, x.dtype)),
    "normal": (1, "f", False, lambda L, x: L.mod.random.normal(L.mod.random.key(3), x.shape, x.dtype)),
    "permutation": (1, _U, False, lambda L, x: L.mod.random.permutation(L.mod.random.key(3), L.np.atleast_1d(x))),
}


def _n(x):
    return x.shape[-1] if x.ndim else 1


def _sq(L, x):
    """A square matrix from x's last axis (n x n)."""
    v = L.np.atleast_1d(x)
    return v[..., :, None] * v[..., None, :] * 0.1 + L.np.eye(_n(x), dtype=x.dtype)


@dataclass(frozen=True)
class EdgeProgram:
    op: str
    dtype: str
    shape: tuple
    transform: str
    x64: bool
    seed: int

    def __repr__(self):
        return (f"EdgeProgram({self.op!r}, {self.dtype!r}, {self.shape}, {self.transform!r}, "
                f"x64={self.x64}, seed={self.seed})")


def _edge_values(rng, dtype: np.dtype, n: int, smooth: bool) -> np.ndarray:
    """n values of `dtype`: edge values mixed with ordinary ones (only ordinary ones and
    zeros when `smooth`, for derivatives)."""
    if dtype == np.bool_:
        return rng.integers(0, 2, n).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        pool = [0, 1, 2, 3, 7] + ([] if dtype.kind == "u" else [-1, -2, -5])
        if not smooth:
            pool += [int(info.min), int(info.max), int(info.max) - 1]
        return np.array(rng.choice(pool, n), dtype)
    real = np.dtype(np.float32 if dtype == np.complex64 else np.float64 if dtype == np.complex128 else dtype)
    import ml_dtypes
    info = ml_dtypes.finfo(real)  # NumPy's finfo does not know bfloat16
    ordinary = list(rng.uniform(-2, 2, 8)) + [0.0, 0.5, 1.0, -1.5]
    edges = [0.0, -0.0, np.inf, -np.inf, np.nan, float(info.max), -float(info.max), float(info.tiny),
             float(info.smallest_subnormal), -float(info.tiny) * 3, 1e4, -1e4, 1.0, -1.0]
    if dtype.kind == "c":  # complex infinities and NaNs: docs/numerics.md, "complex non-finite values"
        edges = [e for e in edges if np.isfinite(e)]
    pool = ordinary if smooth else ordinary + edges

    def draw():
        return np.array(rng.choice(pool, n), np.float64).astype(real)
    if dtype.kind == "c":
        return (draw() + 1j * draw().astype(np.float64)).astype(dtype)
    return draw().astype(dtype)


def edge_program(seed: int) -> EdgeProgram:
    rng = np.random.default_rng(seed)
    op = str(rng.choice(sorted(EDGE_OPS)))
    _, kinds, diff, _ = EDGE_OPS[op]
    dtypes = [d for d in EDGE_DTYPES if _kind_of(d) in kinds]
    dtype = str(rng.choice(dtypes))
    shape = EDGE_SHAPES[rng.integers(len(EDGE_SHAPES))]
    transforms = ["value", "jit", "vmap"] if not diff or _kind_of(dtype) != "f" else list(EDGE_TRANSFORMS)
    transform = str(rng.choice(transforms))
    if transform in ("vmap", "jit_vmap_grad") and not shape:
        shape = (2,)
    if transform == "hessian" and dtype in ("float16", "bfloat16"):
        transform = "grad"
    return EdgeProgram(op, dtype, shape, transform, bool(rng.integers(2)), seed)


def _kind_of(dtype: str) -> str:
    return "f" if dtype == "bfloat16" else np.dtype(dtype).kind


def _np_dtype(name: str) -> np.dtype:
    import ml_dtypes
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def edge_inputs(p: EdgeProgram) -> list[np.ndarray]:
    rng = np.random.default_rng(p.seed + 1)
    arity = EDGE_OPS[p.op][0]
    smooth = p.transform not in ("value", "jit", "vmap")
    d = _np_dtype(p.dtype)
    n = int(np.prod(p.shape))
    return [_edge_values(rng, d, n, smooth).reshape(p.shape) for _ in range(arity)]


def _edge_fun(p: EdgeProgram, L: _Lib):
    body = EDGE_OPS[p.op][3]

    def f(*xs):
        return body(L, *xs)

    def scalar(*xs):
        out = f(*xs)
        return L.np.sum(L.np.real(out) * L.np.cos(L.np.arange(out.size).reshape(out.shape)).astype(L.np.real(out).dtype))
    argnums = tuple(range(EDGE_OPS[p.op][0]))
    m = L.mod
    t = p.transform
    if t == "value":
        return f
    if t == "jit":
        return m.jit(f)
    if t == "grad":
        return m.grad(scalar, argnums)
    if t == "jit_grad":
        return m.jit(m.grad(scalar, argnums))
    if t == "jvp":
        return lambda *xs: m.jvp(f, xs, tuple(L.np.ones_like(x) * 0.5 for x in xs))
    if t == "vmap":
        return m.vmap(f)
    if t == "hessian":
        return m.hessian(scalar, argnums)
    return m.jit(m.vmap(m.grad(scalar, argnums)))


def _flush_subnormals(x: np.ndarray) -> np.ndarray:
    """x with its subnormal values replaced by zeros of their sign (what XLA on CPU does to
    the operands of most of its ops)."""
    import ml_dtypes
    if _kind_of(str(x.dtype)) not in "fc":
        return x
    real = np.dtype(x.dtype.char.lower()) if x.dtype.kind == "c" else x.dtype
    tiny = float(ml_dtypes.finfo(real).tiny)

    def flush(v):
        v64 = v.astype(np.float64)
        return np.where((v64 != 0) & (np.abs(v64) < tiny), np.copysign(0.0, v64), v64).astype(v.dtype)
    if x.dtype.kind == "c":
        return (flush(x.real) + 1j * flush(x.imag).astype(np.float64)).astype(x.dtype)
    return flush(x)


def run_edge(p: EdgeProgram, backend: str, flush: bool = False) -> list[np.ndarray]:
    """The program's output leaves, in its precision mode (the mode is restored after);
    with `flush`, on inputs whose subnormals are zeros."""
    import warnings
    jax = _jax()
    with funcad.enable_x64(p.x64), jax.enable_x64(p.x64), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # JAX's own warnings (64-bit dtypes truncated)
        L = _Lib(backend)
        xs = edge_inputs(p)
        if flush:
            xs = [_flush_subnormals(x) for x in xs]
        if backend == "jax":
            xs = [jax.numpy.asarray(x) for x in xs]
        out = _edge_fun(p, L)(*xs)
        return [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(out)]


# Relative tolerance per dtype: a few ulps of NumPy (funcad eagerly) against XLA (JAX).
EDGE_RTOL = {"float16": 4e-3, "bfloat16": 3e-2, "float32": 2e-5, "float64": 1e-12}  # complex: its parts


def _numpy_dtype_rule(p: EdgeProgram) -> bool:
    """64-bit mode follows NumPy's dtype rules for integer and bool inputs (docs/numerics.md:
    a deliberate convention) where JAX's lattice differs (sin(int8) is float16, not float32;
    1/int is an int): the dtypes may differ, and so may the values computed in them."""
    return p.x64 and _kind_of(p.dtype) in "biu"


# Mismatches that are known and listed in docs/numerics.md, by program: each is skipped by
# name here, never by a loose tolerance.
KNOWN = {
    "complex values near overflow (log/sign of huge complex64)":
        lambda p: p.op in ("logaddexp", "logsumexp", "log", "log2", "log10", "sign")
        and (p.dtype == "complex64" or p.dtype == "complex128" and not p.x64) and p.transform in _EDGY,
    "derivatives at 0 of power in float16": lambda p: p.op in ("power", "float_power") and p.dtype == "float16",
    "det of edge-valued (ill-conditioned) matrices": lambda p: p.op == "det" and p.transform in _EDGY,
    "integer power overflow": lambda p: p.op == "power" and _kind_of(p.dtype) in "iu" and p.transform in _EDGY,
    "digamma at its poles (the sign of the infinity)": lambda p: p.op == "digamma" and p.transform in _EDGY,
    "floor_divide of extreme float magnitudes":
        lambda p: p.op == "floor_divide" and _kind_of(p.dtype) == "f" and p.transform in _EDGY,
}
_EDGY = ("value", "jit", "vmap")  # the transforms whose inputs hold edge values


def known(p: EdgeProgram) -> str | None:
    """docs/numerics.md's name for a known difference this program falls under, or None."""
    return next((name for name, hit in KNOWN.items() if hit(p)), None)


# Programs whose difference from JAX a documented convention explains after running them
# (docs/numerics.md), by name: counted, never silently passed.
EXPLAINED: dict = {}
SUBNORMALS = "subnormals: kept eagerly, flushed to zero by XLA on CPU"


def compare_edge(p: EdgeProgram) -> str | None:
    """None when funcad agrees with JAX (or JAX rejects the program, or the difference is
    the subnormal convention: counted in EXPLAINED), else the mismatch."""
    xs = edge_inputs(p)  # a fault of the fuzzer's own is an error, never "JAX rejects it"
    try:
        want = run_edge(p, "jax")
    except Exception:
        return None  # not a JAX program
    bad = _edge_mismatch(p, want, False)
    if bad and p.transform in ("value", "vmap") \
            and any(not np.array_equal(x, _flush_subnormals(x), equal_nan=True) for x in xs) \
            and not _edge_mismatch(p, want, True):
        EXPLAINED[SUBNORMALS] = EXPLAINED.get(SUBNORMALS, 0) + 1
        return None
    return bad


def _edge_mismatch(p: EdgeProgram, want, flush: bool) -> str | None:
    try:
        got = run_edge(p, "funcad", flush)
    except Exception as e:
        return f"{p!r}: funcad raised {type(e).__name__}: {str(e)[:200]}"
    if len(got) != len(want):
        return f"{p!r}: {len(got)} outputs vs JAX's {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape:
            return f"{p!r}: output {i} shape {g.shape} vs JAX's {w.shape}"
        if g.dtype != w.dtype:
            if _numpy_dtype_rule(p):
                continue
            return f"{p!r}: output {i} dtype {g.dtype} vs JAX's {w.dtype}"
        bad = _value_mismatch(p, g, w)
        if bad:
            return f"{p!r}: output {i} {bad}"
    return None


def _value_mismatch(p: EdgeProgram, g: np.ndarray, w: np.ndarray) -> str | None:
    import ml_dtypes
    if g.dtype.kind not in "fcV" or g.dtype == w.dtype and g.dtype.kind in "biu":
        if not np.array_equal(g.astype(w.dtype) if g.dtype != w.dtype else g, w):
            return f"values {g.ravel()[:6]} vs JAX's {w.ravel()[:6]}"
        return None
    real = [np.dtype(d.char.lower()) if d.kind == "c" else d for d in (g.dtype, w.dtype)]
    low = min(real, key=lambda d: ml_dtypes.finfo(d).bits)  # the less precise of the two
    rtol, tiny = EDGE_RTOL[str(low)], float(ml_dtypes.finfo(low).tiny)
    if g.dtype.kind == "c" or w.dtype.kind == "c":
        g, w = g.astype(np.complex128), w.astype(np.complex128)
        pairs = [(g.real, w.real), (g.imag, w.imag)]
    else:
        pairs = [(g.astype(np.float64), w.astype(np.float64))]
    for a, b in pairs:
        same_nan = np.isnan(a) == np.isnan(b)
        atol = tiny * 4
        if p.transform not in _EDGY:
            # derivatives (of smooth inputs) sum terms that cancel: their rounding error is
            # relative to the largest term, so to the output's scale
            finite = np.abs(b[np.isfinite(b)])
            atol = max(atol, rtol * float(finite.max(initial=0.0)))
        close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
        if not (same_nan.all() and close.all()):
            k = np.flatnonzero(~(same_nan & close))[:4]
            return f"values {a.ravel()[k]} vs JAX's {b.ravel()[k]} at {k.tolist()}"
    return None
