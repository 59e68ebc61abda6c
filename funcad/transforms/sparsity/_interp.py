"""Dependency analysis of a jaxpr: which input entries each output entry depends on.

Every value of the analysed jaxpr gets a `Val`: its *dependency matrix* (a boolean
scipy.sparse CSR matrix with one row per entry of the value, in C order, and one
column per entry of the analysed input; `None` when it depends on nothing) and,
when the value is a constant, the constant itself. Constants are folded through
the program, so a gather at constant indices, a `where` with a constant mask or a
loop counter are read exactly.

Each primitive states how dependencies flow through it in `dep_rules`
(filled in `rules.py`): `rule(eqn, ins, n) -> [deps per output]`, where `ins` are
the input `Val`s and `n` the number of columns. "Depends on" means "has a
possibly nonzero derivative with respect to", so comparisons, `floor`, integer
outputs and `stop_gradient` depend on nothing. Rules are conservative: a
structural nonzero is never missed; they are exact where the structure is
static (elementwise, broadcasting, reductions, slicing, indexing at known
indices, reshapes, transposes, dot_general, concatenation).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ...core.errors import MissingRuleError
from ...core.ir import Literal
from ...core.trace import Tracer, impl_rules

dep_rules: dict = {}   # prim -> rule(eqn, ins, n) -> list of deps (csr_array | None), one per output

# Primitives never evaluated on constants by their impl: effects, and the primitives
# holding jaxprs, whose rules fold constants through their bodies themselves.
NO_FOLD: set = set()
# Primitives holding jaxprs: their rules run even when no input has dependencies, to
# carry constants through (a loop counter, a branch index).
BODY_PRIMS: set = set()
# Folding evaluates the program on constants; beyond this many entries a value is left unknown.
FOLD_LIMIT = 1 << 22


class Val:
    """What the analysis knows about one value: its dependencies and maybe its constant."""

    __slots__ = ("deps", "value")

    def __init__(self, deps=None, value=None):
        self.deps = deps      # csr_array (size, n) of bool, or None: depends on no input
        self.value = value    # numpy array when the value is a known constant, else None

    def __repr__(self):
        return f"Val(nnz={None if self.deps is None else self.deps.nnz}, known={self.value is not None})"


def _known(x):
    """The constant behind a jaxpr constant, or None when it is traced by an outer transform."""
    if isinstance(x, Tracer):
        return None
    return np.asarray(x)


def propagate(jaxpr, consts, ins: list, n: int) -> list:
    """Run the dependency analysis over `jaxpr` (a Jaxpr) with input `Val`s `ins`."""
    env: dict = {}
    for v, c in zip(jaxpr.constvars, consts):
        env[id(v)] = c if isinstance(c, Val) else Val(None, _known(c))
    for v, x in zip(jaxpr.invars, ins):
        env[id(v)] = x

    def read(a):
        return Val(None, np.asarray(a.val)) if type(a) is Literal else env[id(a)]

    for eqn in jaxpr.eqns:
        outs = step(eqn, [read(a) for a in eqn.inputs], n)
        for v, o in zip(eqn.outvars, outs):
            env[id(v)] = o
    return [read(a) for a in jaxpr.outvars]


def step(eqn, ins: list, n: int) -> list:
    """The output `Val`s of one equation."""
    prim = eqn.prim
    known = all(x.value is not None for x in ins)
    if known and prim not in NO_FOLD:
        folded = _fold(eqn, ins)
        if folded is not None:
            return folded
    if all(x.deps is None for x in ins) and not (known and prim in BODY_PRIMS):
        return [Val() for _ in eqn.outvars]
    rule = dep_rules.get(prim)
    if rule is None:
        raise MissingRuleError(
            f"primitive `{prim.name}` has no sparsity rule, so funcad cannot read the sparsity "
            f"pattern of a program that uses it. Use the dense funcad.jacfwd/jacrev/hessian for "
            f"this function, or file an issue naming `{prim.name}` and sparsity detection.")
    out = rule(eqn, ins, n)
    return [Val(_only_float(o.deps, v.aval), o.value) if isinstance(o, Val) else Val(_only_float(o, v.aval))
            for o, v in zip(out, eqn.outvars)]


def _only_float(deps, aval):
    """Integer and boolean values have no derivative (their tangents are float0)."""
    if deps is None or aval.dtype.kind not in "fc" or deps.nnz == 0:
        return None
    return deps


def _fold(eqn, ins):
    impl = impl_rules.get(eqn.prim)
    if impl is None or any(v.aval.size > FOLD_LIMIT for v in eqn.outvars):
        return None
    try:
        out = impl(*[x.value for x in ins], **eqn.params)
    except Exception:   # a constant the impl cannot take is simply not folded
        return None
    out = list(out) if eqn.prim.multiple_results else [out]
    return [Val(None, np.asarray(o)) for o in out]


# --------------------------------------------------------------- matrices ----
# Dependency matrices combine by sparse products with 0/1 selection matrices.


def empty(size: int, n: int):
    return sp.csr_array((size, n), dtype=bool)


def identity(n: int):
    return sp.eye_array(n, dtype=bool, format="csr")


def pick(src, in_size: int):
    """The (len(src), in_size) matrix taking row src[i] of its operand into row i
    (no row where src[i] < 0)."""
    src = np.asarray(src, dtype=np.int64).ravel()
    rows = np.nonzero(src >= 0)[0]
    return sp.csr_array((np.ones(rows.size, bool), (rows, src[rows])), shape=(src.size, in_size))


def group(dst, out_size: int):
    """The (out_size, len(dst)) matrix adding row j of its operand into row dst[j]
    (nowhere where dst[j] < 0)."""
    dst = np.asarray(dst, dtype=np.int64).ravel()
    cols = np.nonzero(dst >= 0)[0]
    return sp.csr_array((np.ones(cols.size, bool), (dst[cols], cols)), shape=(out_size, dst.size))


def apply(m, deps):
    """m @ deps, keeping None for "depends on nothing"."""
    if deps is None:
        return None
    out = m @ deps
    return out if out.nnz else None


def union(*deps):
    ds = [d for d in deps if d is not None]
    if not ds:
        return None
    out = ds[0]
    for d in ds[1:]:
        out = out + d
    return out


def stack(deps, sizes, n):
    """Rows of several values one after another (None blocks become empty rows)."""
    if all(d is None for d in deps):
        return None
    return sp.vstack([empty(s, n) if d is None else d for d, s in zip(deps, sizes)], format="csr")
