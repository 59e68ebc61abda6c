"""Structured control flow: cond, switch, while_loop, fori_loop, scan and map.

Each function traces its branch or body functions once (pytrees in and out,
closures allowed), checks their types, and binds a control-flow primitive
(funcad.transforms.control_flow) that holds the traced jaxprs. Values of
outer transformations that a body closes over (say the parameters being
differentiated) become explicit operands of the primitive, so grad, jvp,
vmap and jit see them.
"""
from __future__ import annotations

import weakref
from typing import Callable, Sequence

import numpy as np

from ..core import options as _options, refs as _refs
from ..core.avals import ShapedArray, aval_of
from ..core.eager import wrap_weak
from ..core.errors import FuncadTypeError, FuncadValueError
from ..core.ir import ClosedJaxpr, Jaxpr, Var
from ..core.pytree import tree_flatten, tree_map, tree_unflatten
from ..core.sharding import context_mesh
from ..core.staging import lift_traced_consts, trace_to_jaxpr
from ..core.trace import Tracer, ctx, eval_jaxpr
from .control_flow import cond_p, scan_p, while_p
from ..lowering.runtime import memo
from ..primitives.structural import concatenate, reshape, slice as _slice
from ..primitives.elementwise import add, bitwise_and, clamp, convert_element_type, lt, ne
from .vmap import vmap

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "map"]

# ----------------------------------------------------------------- helpers ----


def _types(avals) -> str:
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


def _cast_weak(x, target: ShapedArray | None):
    """A weakly typed output (a Python scalar, say) takes the expected dtype (and stays
    weak where the expected type is)."""
    if target is None:
        return x
    a = aval_of(x)
    if (a.weak_type and a.shape == target.shape and a.dtype != target.dtype
            and np.can_cast(a.dtype, target.dtype, "same_kind")):
        return convert_element_type(x, target.dtype, target.weak_type)
    return x


def _carries(leaves):
    """Loop carries as arrays with their types: a Python scalar becomes a weakly typed
    0-d array, as in JAX (a weak carry the body makes strong is retyped: `_retyped`)."""
    vals, avals = [], []
    for x in leaves:
        a = aval_of(x)
        if not isinstance(x, (Tracer, np.ndarray)):
            x = wrap_weak(np.asarray(x, a.dtype)) if a.weak_type else np.asarray(x, a.dtype)
        vals.append(x)
        avals.append(a)
    return vals, avals


def _retyped(carries: list, avals: list, outs: list):
    """JAX's rule for a weakly typed initial carry: where the body returns another dtype
    or a strong value, the carry takes the body's type (and the loop is traced again).
    Returns the new carries, or None when every carry keeps its type."""
    retype = [a.weak_type and a.shape == o.shape and (a.dtype != o.dtype or not o.weak_type)
              for a, o in zip(avals, outs)]
    if not any(retype):
        return None
    return [convert_element_type(x, o.dtype) if r else x for x, o, r in zip(carries, outs, retype)]


def _trace(fun: Callable, in_tree, in_avals, name: str, flatten_out: Callable, out_key=()):
    """Trace fun(*args) once. `flatten_out(out)` turns its result into (leaves, side data);
    `out_key` is what else (besides the types in) decides them (the name does not: one
    function as both branches of a cond is traced once). Returns (jaxpr whose
    leading inputs are the lifted constants, their values, the side data)."""
    if ctx.trace is None and ctx.vma is None:
        # Eager: the same function at the same types reuses its jaxpr, as JAX's trace
        # cache does (so, as in JAX, a body reads its globals at its first trace). The
        # compiled program is memoized on the jaxpr object, so a fresh trace per call
        # would lower and look up the program again on every call.
        key = ("trace", in_tree, tuple(in_avals), out_key, _options.jit_key, ctx.debug_nans, context_mesh())
        try:
            return memo(fun, key, lambda: _trace_now(fun, in_tree, in_avals, name, flatten_out))
        except TypeError:  # a function that cannot be weakly referenced (a NumPy ufunc, say)
            pass
    return _trace_now(fun, in_tree, in_avals, name, flatten_out)


def _trace_now(fun, in_tree, in_avals, name, flatten_out):
    side: list = []

    def flat(*xs):
        leaves, extra = flatten_out(fun(*tree_unflatten(in_tree, xs)))
        side.append(extra)
        return leaves

    with _refs.scope():  # refs closed over raise ClosedRefs here, before anything runs
        closed = trace_to_jaxpr(flat, list(in_avals), name=name, parent=ctx.trace)
    return (*lift_traced_consts(closed), side[0])


def _leaves(cast_to=None):
    """A flatten_out whose side data is the output tree; weak leaves are cast to `cast_to`."""
    def flatten_out(out):
        leaves, tree = tree_flatten(out)
        if cast_to is not None:
            leaves = [_cast_weak(x, t) for x, t in zip(leaves, cast_to)] + leaves[len(cast_to):]
        return leaves, tree
    return flatten_out


def _merge_consts(traced):
    """One operand list for several jaxprs with their own lifted constants:
    each jaxpr gets inputs (all constants..., its own inputs...)."""
    if not any(consts for _, consts in traced):  # nothing to merge: keep the (cached) jaxprs
        return [closed for closed, _ in traced], []
    all_consts, pos = [], {}
    for _, consts in traced:
        for c in consts:
            if id(c) not in pos:
                pos[id(c)] = len(all_consts)
                all_consts.append(c)
    out = []
    for closed, consts in traced:
        j = closed.jaxpr
        mine = {pos[id(c)]: v for c, v in zip(consts, j.invars)}
        invars = [mine[k] if k in mine else Var(aval_of(c)) for k, c in enumerate(all_consts)]
        out.append(ClosedJaxpr(Jaxpr(j.constvars, invars + j.invars[len(consts):], j.eqns, j.outvars),
                               closed.consts))
    return out, all_consts


def _scalar_index(index, what):
    try:
        a = aval_of(index)
    except FuncadTypeError:  # a str, None, a function...: JAX's words, not "an argument"
        raise FuncadTypeError(f"{what} must be a scalar, got {index!r:.60} of type "
                              f"{type(index).__name__}; pass a boolean or integer scalar.") from None
    if a.shape != ():
        raise FuncadTypeError(f"{what} must be a scalar, got {a.str_short()}. For an elementwise "
                              "choice use funcad.numpy.where, or vmap the cond.")
    return a

# -------------------------------------------------------------- cond/switch ----


_NO_OPERAND = object()


def _operand_keyword(operand, operands: tuple) -> tuple:
    """JAX's older `operand=` keyword: the one operand, when no positional ones are given."""
    if operand is _NO_OPERAND:
        return operands
    if operands:
        raise TypeError("if 'operand' keyword is passed then no positional operands can be passed, "
                        f"got operand={operand!r} and positional operands {operands}")
    return (operand,)


def cond(pred, true_fun: Callable, false_fun: Callable, *operands, operand=_NO_OPERAND):
    """`true_fun(*operands)` if pred else `false_fun(*operands)`, as one primitive.

    Both branches are traced and must return the same types. Under vmap a
    batched predicate runs both branches and selects per lane; reverse mode
    differentiates only the branch taken.

    >>> import funcad, funcad.numpy as fnp
    >>> f = lambda x: funcad.lax.cond(x > 0, fnp.sin, lambda v: -v, x)
    >>> float(f(-2.0)), float(funcad.grad(f)(0.0 + 1e-9))
    (2.0, 1.0)
    """
    if not (callable(true_fun) and callable(false_fun)):
        # JAX still takes the old form cond(pred, true_operand, true_fun, false_operand,
        # false_fun) (numpyro uses it): each branch gets its own operand.
        if callable(false_fun) and len(operands) == 2 and callable(operands[1]):
            x_true, f_true, x_false, f_false = true_fun, false_fun, *operands
            return cond(pred, lambda x, _: f_true(x), lambda _, x: f_false(x), x_true, x_false)
        raise FuncadTypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    operands = _operand_keyword(operand, operands)
    a = _scalar_index(pred, "cond: the predicate")
    if a.dtype != np.bool_:
        if a.dtype.kind not in "iuf":
            raise FuncadTypeError(f"cond: the predicate must be a boolean or number, got {a.str_short()}")
        pred = ne(pred, np.zeros((), a.dtype))
    index = convert_element_type(pred, np.int32)
    return _switch_refs(index, [false_fun, true_fun], operands, ["false_fun", "true_fun"], 1)


def switch(index, branches: Sequence[Callable], *operands, operand=_NO_OPERAND):
    """`branches[index](*operands)`, with the index clamped to the valid range.

    >>> import funcad
    >>> float(funcad.lax.switch(5, [lambda x: x + 1.0, lambda x: x * 10.0], 2.0))
    20.0
    """
    operands = _operand_keyword(operand, operands)
    branches = list(branches)
    if not branches:
        raise FuncadTypeError("switch needs at least one branch")
    a = _scalar_index(index, "switch: the index")
    if a.dtype.kind not in "iu":
        raise FuncadTypeError(f"switch: the index must be an integer, got {a.str_short()}")
    if len(branches) == 1:
        return branches[0](*operands)
    index = convert_element_type(index, np.int32)
    index = clamp(np.int32(0), index, np.int32(len(branches) - 1))
    return _switch_refs(index, branches, operands, [f"branches[{i}]" for i in range(len(branches))], 0)


def _switch_refs(index, funs, operands, names, ref):
    """_switch, with the refs the branches close over as extra operands and outputs."""
    def thread(refs):
        def branch(f):
            def g(ops, vals):
                with _refs.threaded(refs, vals) as final:
                    out = f(*ops)
                    return out, final()
            return g
        out, new = _switch_refs(index, [branch(f) for f in funs], (operands, _refs.values(refs)),
                                names, ref)
        _refs.write_back(refs, new)
        return out
    return _with_refs(lambda: _switch(index, funs, operands, names, ref), thread)


def _with_refs(run: Callable, thread: Callable):
    """run() (which traces user functions); if they touched funcad.Refs made outside it,
    thread(refs) instead, which passes the refs' values in and out (core/refs.py)."""
    try:
        return run()
    except _refs.ClosedRefs as e:
        return thread(e.refs)


def _switch(index, funs, operands, names, ref):
    flat, in_tree = tree_flatten(tuple(operands))
    avals = [aval_of(x) for x in flat]
    trees: list = []

    def trace_all(cast_to=None):
        trees.clear()
        out = []
        for f, name in zip(funs, names):
            closed, consts, tree = _trace(f, in_tree, avals, f"cond_{name}", _leaves(cast_to),
                                          None if cast_to is None else tuple(cast_to))
            out.append((closed, consts))
            trees.append(tree)
        return out

    traced = trace_all()
    for i, name in enumerate(names):
        if trees[i] != trees[ref]:
            raise FuncadTypeError(
                f"cond: {name} returns a value of structure {trees[i]} but {names[ref]} returns "
                f"{trees[ref]}; every branch must return the same structure and types.")
    outs = [t[0].out_avals for t in traced]
    joined = _join_outputs(outs)
    if joined is not None:  # weakly typed outputs (Python scalars) take the other branches' dtype
        traced = trace_all(joined)
        outs = [t[0].out_avals for t in traced]
    for i, name in enumerate(names):
        for k, (a, b) in enumerate(zip(outs[i], outs[ref])):
            if (a.shape, a.dtype) != (b.shape, b.dtype):
                raise FuncadTypeError(
                    f"cond: {name} returns {_types(outs[i])} but {names[ref]} returns "
                    f"{_types(outs[ref])}; every branch must return the same types (output {k}: "
                    f"{a.str_short()} vs {b.str_short()}). Cast with .astype or reshape so they agree.")
    branches, consts = _merge_consts(traced)
    out = cond_p.bind(index, *consts, *flat, branches=tuple(branches))
    return tree_unflatten(trees[ref], out)


def _join_outputs(outs):
    """Target types when branches disagree only in dtypes of weak outputs; else None."""
    targets, changed = [], False
    for avals in zip(*outs):
        dtypes = {a.dtype for a in avals}
        if len(dtypes) == 1 or len({a.shape for a in avals}) != 1:
            targets.append(None)
            continue
        strong = {a.dtype for a in avals if not a.weak_type}
        if len(strong) > 1:
            targets.append(None)
            continue
        dt = strong.pop() if strong else np.result_type(*dtypes)
        targets.append(ShapedArray(avals[0].shape, dt))
        changed = True
    return targets if changed else None

# -------------------------------------------------------------------- loops ----


def _check_carry(what, carry_tree, carry_avals, out_tree, out_avals, fix):
    if out_tree != carry_tree:
        raise FuncadTypeError(f"{what} returns a carry of structure {out_tree}, but the initial carry "
                              f"has structure {carry_tree}; {fix}")
    for k, (a, b) in enumerate(zip(out_avals, carry_avals)):
        if (a.shape, a.dtype) != (b.shape, b.dtype):
            raise FuncadTypeError(
                f"{what} returns a carry of types {_types(out_avals)} but the initial carry has types "
                f"{_types(carry_avals)} (leaf {k}: {a.str_short()} vs {b.str_short()}); the carry must "
                f"keep its type from step to step. {fix}")


def while_loop(cond_fun: Callable, body_fun: Callable, init_val, *, max_steps: int | None = None):
    """`val = init_val; while cond_fun(val): val = body_fun(val); return val`.

    Forward mode (jvp, jacfwd) and vmap always work; under vmap a lane whose
    condition is false keeps its value while the other lanes go on.

    Reverse mode (grad, vjp), which JAX does not support for while loops: in
    eager code the loop's trip count is known, so funcad runs the loop to count
    its steps and differentiates it as a scan of that many steps. Under jit the
    count is unknown: pass `max_steps` (an upper bound; the loop also stops
    after max_steps steps in every mode), and the loop is differentiated as a
    scan of max_steps steps whose carry is frozen once the condition is false.
    Reverse mode stores residuals for every step: memory O(steps · carry), and
    O(max_steps · carry) under jit. Wrap `body_fun` in funcad.checkpoint to
    store only the carry per step.

    >>> import funcad, funcad.numpy as fnp
    >>> sqrt2 = lambda a: funcad.lax.while_loop(lambda s: fnp.abs(s * s - a) > 1e-12,
    ...                                         lambda s: (s + a / s) / 2, 1.0)
    >>> round(float(sqrt2(2.0)), 12), round(float(funcad.grad(sqrt2)(2.0)), 6)
    (1.414213562373, 0.353553)
    """
    def thread(refs):
        def cond2(state):
            with _refs.threaded(refs, state[1]):
                return cond_fun(state[0])

        def body2(state):
            with _refs.threaded(refs, state[1]) as final:
                return body_fun(state[0]), final()

        out, new = while_loop(cond2, body2, (init_val, _refs.values(refs)), max_steps=max_steps)
        _refs.write_back(refs, new)
        return out
    return _with_refs(lambda: _while_loop(cond_fun, body_fun, init_val, max_steps), thread)


def _while_loop(cond_fun, body_fun, init_val, max_steps):
    flat, in_tree = tree_flatten((init_val,))
    flat, avals = _carries(flat)
    carry_tree = tree_flatten(init_val)[1]
    while True:
        cond_closed, cond_consts, _ = _trace(cond_fun, in_tree, avals, "while_cond", _leaves())
        p = cond_closed.out_avals
        if len(p) != 1 or p[0].shape != () or p[0].dtype != np.bool_:
            raise FuncadTypeError(f"while_loop: cond_fun must return a boolean scalar, got {_types(p)}")
        body_closed, body_consts, body_tree = _trace(body_fun, in_tree, avals, "while_body",
                                                     _leaves(avals), "carry")
        new = _retyped(flat, avals, body_closed.out_avals) if body_tree == carry_tree else None
        if new is None:
            break
        flat, avals = new, [aval_of(x) for x in new]
    _check_carry("while_loop: body_fun", carry_tree, avals, body_tree, body_closed.out_avals,
                 "return a value of the same structure, shapes and dtypes as init_val.")
    ncc, nbc = len(cond_consts), len(body_consts)
    if max_steps is not None:
        max_steps = int(max_steps)
        if max_steps < 0:
            raise FuncadTypeError(f"while_loop: max_steps must be >= 0, got {max_steps}")
        cond_closed, body_closed = _bounded(cond_closed, body_closed, max_steps, ncc, nbc)
        flat = flat + [np.int64(0)]
    outs = while_p.bind(*cond_consts, *body_consts, *flat, cond_jaxpr=cond_closed, body_jaxpr=body_closed,
                        cond_nconsts=ncc, body_nconsts=nbc, max_steps=max_steps)
    return tree_unflatten(carry_tree, outs[:len(avals)])


def _bounded(cond_closed, body_closed, max_steps, ncc, nbc):
    """Add a step counter to the carry, and `counter < max_steps` to the condition."""
    counter = ShapedArray((), np.int64)

    def cond2(*xs):
        p = eval_jaxpr(cond_closed.jaxpr, cond_closed.consts, *xs[:-1])[0]
        return [bitwise_and(p, lt(xs[-1], np.int64(max_steps)))]

    def body2(*xs):
        return eval_jaxpr(body_closed.jaxpr, body_closed.consts, *xs[:-1]) + [add(xs[-1], np.int64(1))]

    return (trace_to_jaxpr(cond2, cond_closed.in_avals + [counter], name="while_cond"),
            trace_to_jaxpr(body2, body_closed.in_avals + [counter], name="while_body"))


def fori_loop(lower, upper, body_fun: Callable, init_val, *, unroll: int | bool = 1):
    """`val = init_val; for i in range(lower, upper): val = body_fun(i, val)`.

    With concrete bounds (Python or NumPy integers) it is a scan of
    upper - lower steps, so every transformation works, reverse mode included;
    with traced bounds it is a while_loop.

    >>> import funcad
    >>> funcad.lax.fori_loop(0, 5, lambda i, x: x + i, 0.0)
    Array(10., dtype=float64, weak_type=True)
    """
    dtype = np.result_type(aval_of(lower).dtype, aval_of(upper).dtype)
    if not isinstance(lower, Tracer) and not isinstance(upper, Tracer):
        lo, hi = int(lower), int(upper)
        try:  # one step function per body, so that scan's trace cache knows it again
            step = memo(body_fun, ("fori_step", dtype), lambda: _fori_step(weakref.ref(body_fun), dtype))
        except TypeError:  # not weakly referable
            step = _fori_step(lambda: body_fun, dtype)
        (_, out), _ = scan(step, (np.asarray(lo, dtype), init_val), None, length=max(hi - lo, 0),
                           unroll=unroll)
        return out
    lower, upper = convert_element_type(lower, dtype), convert_element_type(upper, dtype)
    _, _, out = while_loop(lambda s: lt(s[0], s[1]),
                           lambda s: (add(s[0], np.asarray(1, dtype)), s[1], body_fun(s[0], s[2])),
                           (lower, upper, init_val))
    return out


def _fori_step(body_ref: Callable, dtype):
    # The body by weak reference: the step is memoized on the body, and must not keep it alive.
    def step(carry, _):
        i, x = carry
        return (add(i, np.asarray(1, dtype)), body_ref()(i, x)), None
    return step


def scan(f: Callable, init, xs=None, length: int | None = None, reverse: bool = False,
         unroll: int | bool = 1, _split_transpose: bool = False):
    """Loop `carry, y = f(carry, x)` over the leading axis of xs; return (carry, stacked ys).

    `_split_transpose` (JAX's experimental flag to split scan's transpose in two
    scans, which changes no value) is taken as JAX takes it, with nothing to do:
    funcad transposes a scan as one scan.

    xs and the ys may be pytrees (or None). `reverse` runs from the last
    element to the first; `unroll` emits that many steps per compiled loop
    iteration (True: all of them). Reverse mode stores the residuals of every
    step (wrap f in funcad.checkpoint to store only carries and xs).

    >>> import funcad, numpy as np
    >>> funcad.lax.scan(lambda c, x: (c + x, c * x), 0.0, np.arange(4.0))
    (Array(6., dtype=float64), Array([0., 0., 2., 9.], dtype=float64))
    """
    def thread(refs):
        def f2(carry, x):
            with _refs.threaded(refs, carry[1]) as final:
                c, y = _pair(f(carry[0], x))
                return (c, final()), y

        (c, new), ys = scan(f2, (init, _refs.values(refs)), xs, length, reverse, unroll)
        _refs.write_back(refs, new)
        return c, ys
    return _with_refs(lambda: _scan(f, init, xs, length, reverse, unroll), thread)


def _pair(out):
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise FuncadTypeError(f"scan: f must return a pair (carry, y), got {type(out).__name__}")
    return out


def _scan(f, init, xs, length, reverse, unroll):
    xs_flat, xs_tree = tree_flatten(xs)
    lengths = set()
    for x in xs_flat:
        a = aval_of(x)
        if not a.shape:
            raise FuncadTypeError(f"scan: every leaf of xs needs a leading axis to scan over, got {a.str_short()}")
        lengths.add(a.shape[0])
    if len(lengths) > 1:
        raise FuncadTypeError(f"scan: the leaves of xs have different leading sizes {sorted(lengths)}")
    if length is None:
        if not lengths:
            raise FuncadTypeError("scan: pass `length` when xs is None or has no leaves")
        length = lengths.pop()
    elif lengths and lengths != {int(length)}:
        raise FuncadTypeError(f"scan: length={length} but xs has leading size {lengths.pop()}")
    length = int(length)
    init_flat, init_tree = tree_flatten(init)
    init_flat, closed, consts, trees = _scan_trace(f, init, xs, init_flat, xs_flat)
    c_tree, y_tree, nk = trees
    carry_avals = [aval_of(x) for x in init_flat]
    _check_carry("scan: f", init_tree, carry_avals, c_tree, closed.out_avals[:nk],
                 "f(carry, x) must return (new_carry, y) with new_carry like the initial carry.")
    unroll = max(length, 1) if unroll is True else max(1, int(unroll))
    outs = scan_p.bind(*consts, *init_flat, *xs_flat, jaxpr=closed, length=length, reverse=bool(reverse),
                       num_consts=len(consts), num_carry=len(init_flat), unroll=unroll)
    return tree_unflatten(init_tree, outs[:nk]), tree_unflatten(y_tree, outs[nk:])


def _scan_trace(f, init, xs, init_flat, xs_flat):
    """f traced on the carry; a weakly typed initial carry leaf (a Python 0) that f turns
    into another dtype takes that dtype and f is traced again, as in JAX."""
    while True:
        init_flat, closed, consts, trees = _scan_trace_once(f, init, xs, init_flat, xs_flat)
        if trees[2] != len(init_flat):
            return init_flat, closed, consts, trees
        new = _retyped(init_flat, [aval_of(x) for x in init_flat], closed.out_avals[:trees[2]])
        if new is None:
            return init_flat, closed, consts, trees
        init_flat = new


def _scan_trace_once(f, init, xs, init_flat, xs_flat):
    init_flat, carry_avals = _carries(init_flat)
    x_avals = [aval_of(x).update(shape=aval_of(x).shape[1:], sharding=None) for x in xs_flat]
    in_tree = tree_flatten((init, xs))[1]

    def flatten_out(out):
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise FuncadTypeError(f"scan: f must return a pair (carry, y), got {type(out).__name__}")
        c_leaves, c_tree = tree_flatten(out[0])
        y_leaves, y_tree = tree_flatten(out[1])
        leaves = [_cast_weak(x, a) for x, a in zip(c_leaves, carry_avals)] + c_leaves[len(carry_avals):]
        return leaves + y_leaves, (c_tree, y_tree, len(c_leaves))

    closed, consts, trees = _trace(f, in_tree, carry_avals + x_avals, "scan_body", flatten_out,
                                   ("scan", len(carry_avals)))
    return init_flat, closed, consts, trees


def _rows(x, start, stop):
    shape = aval_of(x).shape
    return _slice(x, (start,) + (0,) * (len(shape) - 1), (stop,) + tuple(shape[1:]))


def map(f: Callable, xs, *, batch_size: int | None = None):
    """`f` applied to each slice of xs along its leading axis, results stacked (a scan).

    With `batch_size`, the scan runs over batches of that many slices, each batch
    vectorised with vmap, and the leftover slices in one more vmapped call, as JAX's.

    >>> import funcad, funcad.numpy as fnp, numpy as np
    >>> funcad.lax.map(fnp.sum, np.ones((3, 2)))
    Array([2., 2., 2.], dtype=float64)
    >>> funcad.lax.map(fnp.sum, np.ones((5, 2)), batch_size=2)
    Array([2., 2., 2., 2., 2.], dtype=float64)
    """
    if batch_size is None:
        return scan(lambda c, x: (c, f(x)), (), xs)[1]
    if not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise FuncadValueError(f"lax.map: batch_size must be a positive int, got {batch_size!r}")
    leaves, tree = tree_flatten(xs)
    if not leaves:
        return scan(lambda c, x: (c, f(x)), (), xs)[1]
    n = aval_of(leaves[0]).shape[0]
    batches, rest = divmod(n, int(batch_size))
    done = batches * int(batch_size)
    outs = []
    if batches:
        blocks = tree_unflatten(tree, [reshape(_rows(x, 0, done), (batches, int(batch_size))
                                               + tuple(aval_of(x).shape[1:])) for x in leaves])
        ys = scan(lambda c, x: (c, vmap(f)(x)), (), blocks)[1]
        outs.append(tree_map(lambda y: reshape(y, (done,) + tuple(aval_of(y).shape[2:])), ys))
    if rest:
        outs.append(vmap(f)(tree_unflatten(tree, [_rows(x, done, n) for x in leaves])))
    if len(outs) == 1:
        return outs[0]
    return tree_map(lambda a, b: concatenate([a, b], 0), *outs)
