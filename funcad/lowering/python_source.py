"""Emit readable, runnable NumPy source for a jaxpr: `funcad.to_python`.

Each primitive has a short source template; the emitted function imports only
NumPy (and SciPy's special functions where a primitive needs them).
"""
from __future__ import annotations

import keyword

import numpy as np

from ..core.ir import ClosedJaxpr, Jaxpr, Literal, Var
from ..core.pretty import _Namer

# name -> format string over the input names {0}, {1}, ... and the params
_UNARY = {
    "neg": "-{0}", "sin": "np.sin({0})", "cos": "np.cos({0})", "asin": "np.arcsin({0})",
    "acos": "np.arccos({0})", "atan": "np.arctan({0})", "sinh": "np.sinh({0})",
    "cosh": "np.cosh({0})", "tanh": "np.tanh({0})", "asinh": "np.arcsinh({0})",
    "acosh": "np.arccosh({0})", "atanh": "np.arctanh({0})", "exp": "np.exp({0})",
    "exp2": "np.exp2({0})", "log": "np.log({0})", "log1p": "np.log1p({0})",
    "expm1": "np.expm1({0})", "logistic": "special.expit({0})", "sqrt": "np.sqrt({0})",
    "rsqrt": "1 / np.sqrt({0})", "cbrt": "np.cbrt({0})", "abs": "np.abs({0})",
    "sign": "np.sign({0})", "floor": "np.floor({0})", "ceil": "np.ceil({0})",
    "round": "np.rint({0})", "erf": "special.erf({0})", "erfc": "special.erfc({0})", "erf_inv": "special.erfinv({0})",
    "lgamma": "special.gammaln({0})", "digamma": "special.digamma({0})",
    "is_finite": "np.isfinite({0})", "not": "np.invert({0})", "stop_gradient": "{0}",
}
_BINARY = {
    "add": "{0} + {1}", "sub": "{0} - {1}", "mul": "{0} * {1}", "pow": "{0} ** {1}",
    "max": "np.maximum({0}, {1})", "min": "np.minimum({0}, {1})", "atan2": "np.arctan2({0}, {1})",
    "and": "{0} & {1}", "or": "{0} | {1}", "xor": "{0} ^ {1}", "eq": "{0} == {1}",
    "ne": "{0} != {1}", "lt": "{0} < {1}", "le": "{0} <= {1}", "gt": "{0} > {1}",
    "ge": "{0} >= {1}", "rem": "np.fmod({0}, {1})",
}


# name -> rule(eqn, input_exprs) -> source, for primitives that register their template
# beside their other rules (see funcad/primitives/bits.py).
source_rules: dict = {}


def _dtype(d) -> str:
    return f"np.{np.dtype(d).name}"


def _slices(parts) -> str:
    return "[" + ", ".join(parts) + "]"


def _expr(eqn, a, outs):
    """Source for one equation; `a` holds the input expressions."""
    name, p = eqn.prim.name, eqn.params
    if name in source_rules:
        return source_rules[name](eqn, a)
    if name in _UNARY:
        return _UNARY[name].format(*a)
    if name in _BINARY:
        return _BINARY[name].format(*a)
    if name == "div":
        kind = eqn.outvars[0].aval.dtype.kind
        return f"{a[0]} / {a[1]}" if kind in "fc" else f"np.trunc({a[0]} / {a[1]}).astype({a[0]}.dtype)"
    if name == "integer_pow":
        y = p["y"]
        return f"{a[0]} ** {y}" if y >= 0 else f"1 / {a[0]} ** {-y}"
    if name == "polygamma":
        return f"special.polygamma({p['m']}, {a[0]})"
    if name == "select_n":
        if len(a) == 3:
            return f"np.where({a[0]}, {a[2]}, {a[1]})"
        return f"np.choose({a[0]}, [{', '.join(a[1:])}])"
    if name == "clamp":
        return f"np.clip({a[1]}, {a[0]}, {a[2]})"
    if name == "convert_element_type":
        return f"np.asarray({a[0]}).astype({_dtype(p['new_dtype'])})"
    if name == "broadcast_in_dim":
        shape, dims = p["shape"], p["broadcast_dimensions"]
        in_shape = eqn.inputs[0].aval.shape
        expanded = [1] * len(shape)
        for i, d in enumerate(dims):
            expanded[d] = in_shape[i]
        src = a[0] if list(expanded) == list(in_shape) else f"np.reshape({a[0]}, {tuple(expanded)})"
        return f"np.broadcast_to({src}, {tuple(shape)})"
    if name == "reshape":
        return f"np.reshape({a[0]}, {p['new_sizes']})"
    if name == "transpose":
        return f"np.transpose({a[0]}, {p['permutation']})"
    if name == "squeeze":
        return f"np.squeeze({a[0]}, {p['dimensions']})"
    if name == "rev":
        return f"np.flip({a[0]}, {p['dimensions']})"
    if name == "slice":
        parts = [f"{s}:{l}" + (f":{st}" if st != 1 else "")
                 for s, l, st in zip(p["start_indices"], p["limit_indices"], p["strides"])]
        return f"{a[0]}{_slices(parts)}"
    if name == "pad":
        return f"_pad({a[0]}, {a[1]}, {p['padding_config']})"
    if name == "concatenate":
        return f"np.concatenate([{', '.join(a)}], axis={p['dimension']})"
    if name == "iota":
        shape, dim = p["shape"], p["dimension"]
        view = tuple(-1 if i == dim else 1 for i in range(len(shape)))
        return f"np.broadcast_to(np.arange({shape[dim]}, dtype={_dtype(p['dtype'])}).reshape({view}), {shape})"
    if name in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod"):
        fn = {"reduce_sum": "sum", "reduce_max": "max", "reduce_min": "min", "reduce_prod": "prod"}[name]
        dt = _dtype(eqn.outvars[0].aval.dtype)
        return f"np.asarray(np.{fn}({a[0]}, axis={p['axes']}), {dt})"
    if name in ("argmax", "argmin"):
        return f"np.{name}({a[0]}, axis={p['axis']}).astype({_dtype(p['index_dtype'])})"
    if name in ("cumsum", "cumprod", "cummax", "cummin"):
        fn = {"cumsum": "np.cumsum", "cumprod": "np.cumprod", "cummax": "np.maximum.accumulate",
              "cummin": "np.minimum.accumulate"}[name]
        ax = p["axis"]
        if p["reverse"]:
            return f"np.flip({fn}(np.flip({a[0]}, {ax}), axis={ax}), {ax})"
        return f"{fn}({a[0]}, axis={ax})"
    if name == "optimization_barrier":  # an identity that only matters to XLA
        return "(" + ", ".join(a) + ",)"
    if name == "dot_general":
        return _einsum(eqn, a)
    if name == "dynamic_slice":
        shape = eqn.inputs[0].aval.shape
        parts = [f"_start({s}, {n}, {k}):_start({s}, {n}, {k}) + {k}"
                 for s, n, k in zip(a[1:], shape, p["slice_sizes"])]
        return f"{a[0]}{_slices(parts)}"
    if name == "dynamic_update_slice":
        return f"_update_slice({a[0]}, {a[1]}, ({', '.join(a[2:])},))"
    if name == "gather":
        return f"_gather({a[0]}, {a[1]})"
    if name == "scatter_add":
        return f"_scatter_add({a[0]}, {a[1]}, {a[2]})"
    if name == "sort":
        return f"_sort([{', '.join(a)}], {p['dimension']}, {p['num_keys']})"
    return None


def _einsum(eqn, a):
    (xc, yc), (xb, yb) = eqn.params["dimension_numbers"]
    nx, ny = eqn.inputs[0].aval.ndim, eqn.inputs[1].aval.ndim
    if not xb and xc == (nx - 1,) and yc == (0,) and nx <= 2 and ny <= 2:
        return f"np.dot({a[0]}, {a[1]})"
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    xs = [next(letters) for _ in range(nx)]
    ys = [None] * ny
    for i, j in zip(xc + xb, yc + yb):
        ys[j] = xs[i]
    ys = [c or next(letters) for c in ys]
    out = ([xs[i] for i in xb] + [xs[i] for i in range(nx) if i not in xc and i not in xb]
           + [ys[j] for j in range(ny) if j not in yc and j not in yb])
    return f"np.einsum('{''.join(xs)},{''.join(ys)}->{''.join(out)}', {a[0]}, {a[1]})"


_HELPERS = {
    "pad": '''def _pad(x, v, config):
    x = np.asarray(x)
    shape = [lo + hi + n + max(n - 1, 0) * i for n, (lo, hi, i) in zip(x.shape, config)]
    big = [max(lo, 0) + max(hi, 0) + n + max(n - 1, 0) * i for n, (lo, hi, i) in zip(x.shape, config)]
    out = np.full(big, v, x.dtype)
    out[tuple(slice(max(lo, 0), max(lo, 0) + (n - 1) * (i + 1) + 1, i + 1)
              for n, (lo, hi, i) in zip(x.shape, config))] = x
    return out[tuple(slice(-min(lo, 0), -min(lo, 0) + s) for s, (lo, hi, i) in zip(shape, config))]
''',
    "dynamic_slice": '''def _start(s, n, k):
    return int(np.clip(int(s), 0, n - k))
''',
    "dynamic_update_slice": '''def _update_slice(x, u, starts):
    out = np.array(x, copy=True)
    out[tuple(slice(int(np.clip(int(s), 0, n - k)), int(np.clip(int(s), 0, n - k)) + k)
              for s, n, k in zip(starts, out.shape, np.shape(u)))] = u
    return out
''',
    "gather": '''def _gather(x, idx):
    x, idx = np.asarray(x), np.asarray(idx)
    return x[tuple(np.clip(idx[..., j], 0, x.shape[j] - 1) for j in range(idx.shape[-1]))]
''',
    "scatter_add": '''def _scatter_add(x, idx, u):
    out, idx, u = np.array(x, copy=True), np.asarray(idx), np.asarray(u)
    k = idx.shape[-1]
    inside = np.all((idx >= 0) & (idx < np.array(out.shape[:k])), axis=-1)
    np.add.at(out, tuple(idx[..., j][inside] for j in range(k)), u[inside])
    return out
''',
    "sort": '''def _sort(xs, axis, num_keys):
    xs = [np.asarray(x) for x in xs]
    perm = None
    for key in reversed(xs[:num_keys]):
        k = key if perm is None else np.take_along_axis(key, perm, axis)
        p = np.argsort(k, axis=axis, kind="stable")
        perm = p if perm is None else np.take_along_axis(perm, p, axis)
    return [np.take_along_axis(x, perm, axis) for x in xs]
''',
}


def _literal(lit) -> str:
    v = np.asarray(lit.val)
    dt = lit.aval.dtype
    if dt == np.bool_:
        return f"np.bool_({bool(v)})"
    text = repr(v.item()) if v.dtype.kind != "f" or np.isfinite(v) else f"float('{v.item()}')"
    return f"{_dtype(dt)}({text})"


# Call primitives and the param holding their body: their equations are
# written out inline (a custom_jvp function's value is its body's).
_CALLS = {"jit": "jaxpr", "checkpoint": "jaxpr", "custom_jvp_call": "call_jaxpr",
          "custom_vjp_call": "call_jaxpr"}


def _inline_calls(jaxpr: Jaxpr) -> Jaxpr:
    """The jaxpr with the calls of constant-free bodies replaced by the bodies' equations."""
    eqns, sub = [], {}

    def s(a):
        return sub.get(id(a), a) if type(a) is Var else a

    for eqn in jaxpr.eqns:
        body = eqn.params.get(_CALLS.get(eqn.prim.name, ""))
        if not isinstance(body, ClosedJaxpr) or body.consts:
            eqns.append(eqn._replace(inputs=[s(a) for a in eqn.inputs]))
            continue
        inner = _inline_calls(body.jaxpr)
        for v, a in zip(inner.invars, eqn.inputs):
            sub[id(v)] = s(a)
        for e in inner.eqns:  # fresh variables: the same body may be inlined twice
            fresh = [Var(v.aval) for v in e.outvars]
            eqns.append(e._replace(inputs=[s(a) for a in e.inputs], outvars=fresh))
            sub.update((id(v), f) for v, f in zip(e.outvars, fresh))
        for v, a in zip(eqn.outvars, inner.outvars):
            sub[id(v)] = s(a)
    return Jaxpr(jaxpr.constvars, jaxpr.invars, eqns, [s(a) for a in jaxpr.outvars])


def to_python(jaxpr, name: str = "f") -> str:
    """Readable NumPy source for a jaxpr, as a function `name`.

    Constants of a ClosedJaxpr become leading parameters named after their
    variables, so the source stays small; pass their values when calling.

    >>> import funcad, funcad.numpy as fnp
    >>> print(funcad.to_python(funcad.make_jaxpr(lambda x: fnp.sin(x) * 2.0)(1.0)))
    import numpy as np
    <BLANKLINE>
    def f(a):
        b = np.sin(a)
        c = b * np.float64(2.0)
        return c
    """
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    if not isinstance(jaxpr, Jaxpr):
        raise TypeError(f"to_python needs a jaxpr (from funcad.make_jaxpr), got {type(jaxpr).__name__}")
    if not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"{name!r} is not a valid Python function name")
    jaxpr = _inline_calls(jaxpr)
    namer = _Namer()

    def atom(x):
        if isinstance(x, Literal):
            return _literal(x)
        n = namer(x)
        return n + "_" if keyword.iskeyword(n) or n in ("np", "special") else n

    params = [atom(v) for v in jaxpr.constvars + jaxpr.invars]
    body, helpers, needs_special = [], [], False
    for eqn in jaxpr.eqns:
        outs = [atom(v) for v in eqn.outvars]
        expr = _expr(eqn, [atom(x) for x in eqn.inputs], outs)
        if expr is None:
            raise NotImplementedError(
                f"to_python has no NumPy template for primitive `{eqn.prim.name}`; "
                "it can print programs made of funcad's core primitives")
        if eqn.prim.name in _HELPERS and _HELPERS[eqn.prim.name] not in helpers:
            helpers.append(_HELPERS[eqn.prim.name])
        needs_special |= "special." in expr
        lhs = ", ".join(outs) + ("," if len(outs) == 1 and eqn.prim.multiple_results else "")
        body.append(f"    {lhs} = {expr}")
    rets = [atom(v) for v in jaxpr.outvars]
    body.append(f"    return {', '.join(rets)}")
    head = ["import numpy as np"] + (["from scipy import special"] if needs_special else [])
    parts = ["\n".join(head), *helpers, f"def {name}({', '.join(params)}):\n" + "\n".join(body)]
    return "\n\n".join(p.rstrip("\n") for p in parts) + "\n"
