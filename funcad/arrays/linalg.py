"""Products: dot, matmul, outer, inner, tensordot, einsum, einsum_path, vdot; funcad.numpy.linalg.norm."""
from __future__ import annotations

import string

import numpy as np

from ..core import options as _options
from ..core.avals import aval_of
from ..core.errors import FuncadTypeError, FuncadValueError
from ..primitives import elementwise as E
from ..primitives._base import canonical_axis
from ..core.sharding import NamedSharding, PartitionSpec
from ..core.typed_sharding import explicit_out_sharding, type_sharding
from ..primitives.linalg import dot_general, dot_general_p
from ..primitives.sharding import on_auto_axes, out_sharded
from .dtypes import asarray_or_tracer, no_out, promote
from .precision import canonical_precision, dot_operands
from .shape import broadcast_to, diagonal, ndim, ravel, reshape, shape, transpose
from .complex import conj
from .placement import place
from .reductions import sum as _sum
from .dtypes import cast


_MATMUL_2D = (((1,), (0,)), ((), ()))


def _prepare(a, b, precision, preferred_element_type):
    """Promoted operands, the canonical precision and dot_general's narrower result type:
    preferred_element_type is applied as lax.dot_general applies it (see dot_operands)."""
    a, b = promote(a, b)
    if precision is None and preferred_element_type is None and _options.default_matmul_precision is None:
        # the common case, kept cheap
        return a, b, None, None
    precision = canonical_precision(precision)
    a, b, narrower = dot_operands(a, b, precision, preferred_element_type)
    return a, b, precision, narrower


def matmul(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """Matrix product with NumPy's broadcasting of batch dimensions; `precision` and
    `preferred_element_type` as in lax.dot_general.

    >>> import funcad.numpy as fnp
    >>> fnp.matmul(fnp.ones((2, 3)), fnp.ones(3), precision="F32_F32_F32").tolist()
    [3.0, 3.0]
    """
    a, b, p, lower = _prepare(a, b, precision, preferred_element_type)
    sa, sb = shape(a), shape(b)
    na, nb = len(sa), len(sb)
    if p is None and na == 2 and nb == 2 and sa[1] == sb[0] and out_sharding is None:
        return dot_general_p.bind(a, b, dimension_numbers=_MATMUL_2D)  # the common case
    if na == 0 or nb == 0:
        raise FuncadValueError("matmul: input operand does not have enough dimensions (scalars are not allowed)")
    ka, kb = shape(a)[-1], shape(b)[0 if nb == 1 else -2]
    if ka != kb:
        raise FuncadTypeError(
            f"matmul got {aval_of(a).str_short()} @ {aval_of(b).str_short()}: the last dimension of the "
            f"first operand ({ka}) must equal the {'first' if nb == 1 else 'second-to-last'} dimension "
            f"of the second ({kb})")
    # out_sharding goes to the one dot_general, so that a contraction over split
    # dimensions is unambiguous (sharding in types)
    if na == 1 and nb == 1:
        return dot_general(a, b, (((0,), (0,)), ((), ())), p, out_sharding, lower)
    if na == 1:
        return dot_general(a, b, (((0,), (nb - 2,)), ((), ())), p, out_sharding, lower) if nb == 2 else \
            place(_batched(reshape(a, (1,) + shape(a)), b, squeeze_lhs=True, precision=p, lower=lower),
                  out_sharding=out_sharding, name="matmul")
    if nb == 1:
        return dot_general(a, b, (((na - 1,), (0,)), ((), ())), p, out_sharding, lower)
    if na == 2 and nb == 2:
        return dot_general(a, b, (((1,), (0,)), ((), ())), p, out_sharding, lower)
    return _batched(a, b, precision=p, out_sharding=out_sharding, lower=lower)


def _batched(a, b, squeeze_lhs=False, precision=None, out_sharding=None, lower=None):
    sa, sb = shape(a), shape(b)
    batch = np.broadcast_shapes(sa[:-2], sb[:-2])
    a = broadcast_to(a, batch + sa[-2:])
    b = broadcast_to(b, batch + sb[-2:])
    nbat = len(batch)
    out = dot_general(a, b, (((nbat + 1,), (nbat,)), (tuple(range(nbat)), tuple(range(nbat)))), precision,
                      out_sharding, lower)
    if squeeze_lhs:
        out = reshape(out, batch + (shape(out)[-1],))
    return out


def dot(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """numpy.dot; `precision` and `preferred_element_type` as in lax.dot_general."""
    a, b, p, lower = _prepare(a, b, precision, preferred_element_type)
    sa, sb = shape(a), shape(b)
    na, nb = len(sa), len(sb)
    if p is None and na == 2 and nb == 2 and sa[1] == sb[0] and out_sharding is None:
        return dot_general_p.bind(a, b, dimension_numbers=_MATMUL_2D)  # the common case
    if na == 0 or nb == 0:
        if lower is not None:  # JAX's: a dot_general without contraction, in the lower type
            return dot_general(a, b, (((), ()), ((), ())), p, out_sharding, lower)
        return place(E.mul(a, b), out_sharding=out_sharding, name="dot")
    if nb == 1 or nb == 2:
        return dot_general(a, b, (((na - 1,), (0 if nb == 1 else nb - 2,)), ((), ())), p, out_sharding, lower)
    return dot_general(a, b, (((na - 1,), (nb - 2,)), ((), ())), p, out_sharding, lower)


def vdot(a, b, *, precision=None, preferred_element_type=None):
    """The dot product of the flattened arrays, conjugating a (as numpy.vdot)."""
    return dot(conj(ravel(a)), ravel(b), precision=precision, preferred_element_type=preferred_element_type)


def inner(a, b, *, precision=None, preferred_element_type=None):
    """numpy.inner; `precision` and `preferred_element_type` as in lax.dot_general."""
    a, b, p, lower = _prepare(a, b, precision, preferred_element_type)
    if ndim(a) == 0 or ndim(b) == 0:
        return E.mul(a, b) if lower is None else dot_general(a, b, (((), ()), ((), ())), p, None, lower)
    return dot_general(a, b, (((ndim(a) - 1,), (ndim(b) - 1,)), ((), ())), p, None, lower)


def outer(a, b, out=None):
    no_out(out, "outer")
    a, b = promote(ravel(a), ravel(b))
    return dot_general(reshape(a, (-1, 1)), reshape(b, (1, -1)), (((1,), (0,)), ((), ())))


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None, out_sharding=None):
    """numpy.tensordot; `precision` and `preferred_element_type` as in lax.dot_general."""
    a, b, p, lower = _prepare(a, b, precision, preferred_element_type)
    if np.ndim(axes) == 0:
        n = int(axes)
        ax_a = tuple(range(ndim(a) - n, ndim(a)))
        ax_b = tuple(range(n))
    else:
        ax_a, ax_b = axes
        ax_a = tuple(canonical_axis(i, ndim(a), 'tensordot', a) for i in np.atleast_1d(ax_a))
        ax_b = tuple(canonical_axis(i, ndim(b), 'tensordot', b) for i in np.atleast_1d(ax_b))
    return dot_general(a, b, ((ax_a, ax_b), ((), ())), p, out_sharding, lower)


def einsum(subscripts, /, *operands, out=None, optimize="auto", precision=None,
           preferred_element_type=None, _dot_general=None, out_sharding=None):
    """Einstein summation. Takes the subscript string or NumPy's sublist form,
    einsum(a, [0, 1], b, [1, 2], [0, 2]). Operands are contracted pairwise in the
    order opt_einsum's `optimize` strategy chooses (JAX's default 'auto'; False: left
    to right; or an explicit path from einsum_path); `_dot_general`, as in JAX, is the
    function each pairwise contraction calls (lax.dot_general's signature).

    >>> import funcad.numpy as fnp
    >>> fnp.einsum(fnp.ones((2, 3)), [0, 1], fnp.ones((3, 4)), [1, 2], [0, 2]).shape
    (2, 4)
    """
    no_out(out, "einsum")
    if not isinstance(subscripts, str):
        subscripts, operands = _sublist_to_str(subscripts, operands)
    if _dot_general is None:
        def contract(a, b, dn, out_sharding=None):
            p = canonical_precision(precision)
            a, b, narrower = dot_operands(a, b, p, preferred_element_type)  # in the preferred type
            return dot_general(a, b, dn, p, out_sharding, narrower)
    else:
        operands = promote(*operands)
        # As JAX's einsum: each contraction is asked for the result type, the operands'
        # common one where none is given (flax's fp8 dot_general relies on it).
        want = aval_of(operands[0]).dtype if preferred_element_type is None else preferred_element_type

        def contract(a, b, dn, out_sharding=None):
            extra = {} if out_sharding is None else {"out_sharding": out_sharding}
            return _dot_general(a, b, dn, precision=precision, preferred_element_type=want, **extra)
    typed = explicit_out_sharding(out_sharding, "einsum")
    res = _einsum_str(subscripts, *operands, contract=contract, optimize=optimize, out_sharding=typed)
    if preferred_element_type is not None:
        res = cast(res, np.dtype(preferred_element_type))
    if typed is not None:  # typed so already where a dot_general took it
        want = type_sharding(typed, ndim(res))
        return res if aval_of(res)._sharding == want else out_sharded(res, typed)
    return res if out_sharding is None else place(res, out_sharding=out_sharding, name="einsum")


def _sublist_to_str(first, rest):
    """(op, sublist, op, sublist, ..., [out sublist]) -> ('ab,bc->ac', ops)."""
    args = (first,) + tuple(rest)
    ops, subs = list(args[0::2]), list(args[1::2])
    out = None
    if len(args) % 2 == 1:
        out = args[-1]
        ops = list(args[0:-1:2])
        subs = list(args[1:-1:2])
    letters = string.ascii_letters

    def conv(sub):
        text = ""
        for i in sub:
            if i is Ellipsis:
                text += "..."
            else:
                i = int(i)
                if not 0 <= i < len(letters):
                    raise FuncadValueError(f"einsum: sublist index {i} must be in [0, {len(letters)})")
                text += letters[i]
        return text
    spec = ",".join(conv(s) for s in subs)
    if out is not None:
        spec += "->" + conv(out)
    return spec, ops


def _einsum_str(subscripts, *operands, contract, optimize="auto", out_sharding=None):
    """`out_sharding` (over Explicit axes), as JAX's: given to the one contraction's
    dot_general (its result permuted to the output's order), or, with several
    contractions, the result of all of them run on Auto axes."""
    operands = promote(*operands)
    if "->" in subscripts:
        ins, out = subscripts.replace(" ", "").split("->")
    else:
        ins, out = subscripts.replace(" ", ""), None
    ins = ins.split(",")
    if len(ins) != len(operands):
        raise FuncadValueError(f"einsum: {len(ins)} subscripts for {len(operands)} operands")
    ell = ""
    if "." in "".join(ins) + (out or ""):
        ins, out, operands, ell = _expand_ellipsis(ins, out, operands)
    if out is None:
        letters = "".join(ins)
        out = ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ell))
    ops = []
    for spec, x in zip(ins, operands):
        # Repeated letters within one operand take a diagonal first.
        while len(set(spec)) != len(spec):
            c = next(ch for ch in spec if spec.count(ch) > 1)
            i, j = spec.index(c), spec.index(c, spec.index(c) + 1)
            x = diagonal(x, 0, i, j)
            spec = spec[:i] + spec[i + 1:j] + spec[j + 1:] + c
        ops.append((spec, x))
    path = _contraction_path(ops, out, optimize)
    if out_sharding is not None and len(path) > 1:
        ops = [(sp, on_auto_axes(x)) for sp, x in ops]
        res = _einsum_ops(ops, out, path, contract, None)
        return out_sharded(res, out_sharding)
    return _einsum_ops(ops, out, path, contract, out_sharding)


def _einsum_ops(ops, out, path, contract, out_sharding):
    def sharding_for(spec):  # the output's sharding in the order of a contraction's letters
        if out_sharding is None or sorted(spec) != sorted(out):
            return None
        entries = tuple(out_sharding.spec) + (None,) * (len(out) - len(out_sharding.spec))
        return NamedSharding(out_sharding.mesh, PartitionSpec(*[entries[out.index(c)] for c in spec]))
    for step in path:
        picked = [ops.pop(k) for k in sorted(step, reverse=True)][::-1]
        keep = set(out).union(*[set(sp) for sp, _ in ops])
        ops.append(_contract_step(picked, keep, contract, sharding_for))
    (spec, acc), = ops
    drop = [i for i, c in enumerate(spec) if c not in out]
    if drop:
        acc, spec = _sum(acc, axis=tuple(drop)), "".join(c for c in spec if c in out)
    if sorted(spec) != sorted(out):
        raise FuncadValueError(f"einsum: output subscript '{out}' does not match the operands")
    return transpose(acc, tuple(spec.index(c) for c in out)) if spec != out else acc


def _contraction_path(ops, out, optimize):
    """The order of pairwise contractions, in opt_einsum's form (indices into the list of
    operands; each step's result is appended to the list)."""
    n = len(ops)
    if n == 1:
        return [(0,)]
    if optimize is False:
        return [(0, 1)] * (n - 1)
    if isinstance(optimize, (list, tuple)):
        return [tuple(s) for s in optimize if not isinstance(s, str)]  # einsum_path's own label first
    import opt_einsum  # only here: a small pure-Python package, loaded on first use
    expr = ",".join(sp for sp, _ in ops) + "->" + out
    shapes = [tuple(aval_of(x).shape) for _, x in ops]
    path, _ = opt_einsum.contract_path(expr, *shapes, optimize="optimal" if optimize is True else optimize,
                                       shapes=True)
    return path


def _contract_step(picked, keep, contract, sharding_for=lambda spec: None):
    """One contraction of one or two (subscripts, array) operands: letters no later
    operand or the output needs are summed out, shared ones contracted or batched."""
    if len(picked) == 1:
        (spec, x), = picked
        drop = [i for i, c in enumerate(spec) if c not in keep]
        return ("".join(c for c in spec if c in keep), _sum(x, axis=tuple(drop))) if drop else (spec, x)
    (s1, x1), (s2, x2) = picked
    d1 = [i for i, c in enumerate(s1) if c not in keep and c not in s2]
    if d1:
        x1, s1 = _sum(x1, axis=tuple(d1)), "".join(c for i, c in enumerate(s1) if i not in d1)
    d2 = [i for i, c in enumerate(s2) if c not in keep and c not in s1]
    if d2:
        x2, s2 = _sum(x2, axis=tuple(d2)), "".join(c for i, c in enumerate(s2) if i not in d2)
    shared = [c for c in s1 if c in s2]
    con = [c for c in shared if c not in keep]
    batch = [c for c in shared if c in keep]
    dn = ((tuple(s1.index(c) for c in con), tuple(s2.index(c) for c in con)),
          (tuple(s1.index(c) for c in batch), tuple(s2.index(c) for c in batch)))
    spec = "".join(batch) + "".join(c for c in s1 if c not in shared) + "".join(c for c in s2 if c not in shared)
    typed = sharding_for(spec)
    return spec, contract(x1, x2, dn) if typed is None else contract(x1, x2, dn, out_sharding=typed)


def _expand_ellipsis(ins, out, operands):
    """Replace '...' by fresh letters, right-aligned and broadcast as NumPy does.

    Returns (subscripts, output subscript or None, operands, the ellipsis letters).
    """
    used = set("".join(ins) + (out or ""))
    fresh = [c for c in string.ascii_letters if c not in used]
    nds = [aval_of(x).ndim - (len(s) - 3) if "..." in s else 0 for s, x in zip(ins, operands)]
    if any(k < 0 for k in nds):
        raise FuncadValueError("einsum: an operand has fewer dimensions than its subscripts")
    n = max(nds)
    ell = "".join(fresh[:n])
    new_ins = [s.replace("...", ell[n - k:]) for s, k in zip(ins, nds)]
    sizes: dict = {}
    for s, x in zip(new_ins, operands):
        for c, d in zip(s, aval_of(x).shape):
            if c in ell and d != 1:
                sizes[c] = d
    new_ops = []
    for s, x in zip(new_ins, operands):
        shape = tuple(aval_of(x).shape)
        target = tuple(sizes.get(c, d) if c in ell else d for c, d in zip(s, shape))
        new_ops.append(broadcast_to(x, target) if target != shape else x)
    if out is not None:
        out = out.replace("...", ell)
    return new_ins, out, new_ops, ell


def einsum_path(subscripts, *operands, optimize="auto"):
    """The contraction order opt_einsum chooses for an einsum, without computing it, as
    JAX's: `(path, info)`; `path` may be passed to `einsum(..., optimize=path)` and
    `print(info)` shows the cost of each step. Only the operands' shapes are read, so
    traced operands work.

    >>> import funcad.numpy as fnp
    >>> path, info = fnp.einsum_path("ij,jk,kl", fnp.ones((2, 3)), fnp.ones((3, 100)),
    ...                              fnp.ones((100, 5)), optimize="optimal")
    >>> path
    [(1, 2), (0, 1)]
    """
    import opt_einsum  # only here: a small pure-Python package, loaded on first use
    if not isinstance(subscripts, str):
        subscripts, operands = _sublist_to_str(subscripts, operands)
    if isinstance(optimize, bool):
        # False: opt_einsum's no-optimization order (contract the operands left to right).
        optimize = "optimal" if optimize else [(0, 1)] * (len(operands) - 1) if len(operands) > 1 else [(0,)]
    shapes = [np.shape(x) if not hasattr(x, "aval") else x.aval.shape for x in operands]
    return opt_einsum.contract_path(subscripts, *shapes, optimize=optimize, shapes=True)
