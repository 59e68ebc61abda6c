"""Automatic batching: the batch trace, vmap_flat, and the vmap API."""
from __future__ import annotations

import threading
from functools import wraps
from typing import Any, Callable

from ..core import options as _options
from ..core import refs as _refs
from ..core import x64 as _x64
from ..core.avals import ShapedArray, aval_of
from ..core.refs import Ref
from ..core.errors import ConcretizationError, FuncadError, FuncadTypeError, FuncadValueError
from ..core.pytree import flatten_fun, flatten_up_to, tree_flatten, tree_leaves, tree_structure, tree_unflatten
from ..core.sharding import batching as _sharding_batching
from ..core.trace import (Trace, Tracer, abstract_eval_rules, batch_rules, bind_custom_jvp,
                          bind_custom_vjp, check_alive, ctx, hooks, rule_for, set_trace)
from ..primitives._base import zeros_tangent
from ..primitives.collectives import AxisFrame, axis_env, named_batch_rules
from ..primitives.reductions import reduce_sum
from ..primitives.structural import moveaxis, moveaxis0  # noqa: F401  (jit uses them from here)


class BatchTracer(Tracer):
    """A batch of values: `val` holds them all, stacked along axis `bdim`."""

    __slots__ = ("val", "bdim")

    def __init__(self, trace, val, bdim: int):
        self._trace = trace
        self.val = val
        self.bdim = bdim

    @property
    def aval(self):
        a = aval_of(self.val)
        shape = a.shape[:self.bdim] + a.shape[self.bdim + 1:]
        s = a._sharding
        if s is not None:  # the batch dimension's entry leaves the type too
            s = type(s)(s.mesh, type(s.spec)(*(s.spec[:self.bdim] + s.spec[self.bdim + 1:])))
        return ShapedArray(shape, a.dtype, a.weak_type, s)

    def canonical32(self):
        # vmap takes a NumPy input as given (as JAX's); with x64 off it may be 64-bit
        v = _x64.canonicalize(self.val)
        return self if v is self.val else BatchTracer(self._trace, v, self.bdim)

    def concrete(self):
        raise ConcretizationError(
            f"A batched {self.aval.str_short()} value under vmap has a different value in each lane, "
            "so Python control flow (`if`, `bool()`, `int()`) cannot depend on it. Use "
            "`funcad.numpy.where` or `funcad.lax.cond`, or move the branch outside vmap.")


class _Naming(threading.local):
    # The axis name of the batch trace whose rule is running: a rule that batches a
    # body (jit, scan, ...) batches it over the same named axis.
    axis_name = None


_naming = _Naming()
_spmd = _sharding_batching  # vmap(spmd_axis_name=), read by with_sharding_constraint's rule


class BatchTrace(Trace):
    name = "vmap"

    def __init__(self, parent, axis_size: int, axis_name=None, spmd_axis_name=None):
        super().__init__(parent)
        self.axis_size = axis_size
        self.axis_name = axis_name
        self.spmd_axis_name = spmd_axis_name

    def unpack(self, x):
        if type(x) is BatchTracer and x._trace is self:
            return x.val, x.bdim
        check_alive(x)
        return x, None

    def wrap(self, val, bdim):
        return val if bdim is None else BatchTracer(self, val, bdim)

    def process_primitive(self, prim, args, params):
        vals, dims = [], []
        for x in args:
            v, d = self.unpack(x)
            vals.append(v)
            dims.append(d)
        named = (self.axis_name is not None and prim in named_batch_rules
                 and self.axis_name in params["axes"])
        outer, _naming.axis_name = _naming.axis_name, self.axis_name
        outer_spmd, _spmd.spmd_axis_name = _spmd.spmd_axis_name, self.spmd_axis_name
        try:
            with set_trace(self.parent):
                if named:  # a collective over this vmap's axis, batched or not
                    out, out_dim = named_batch_rules[prim](vals, dims, axis_size=self.axis_size,
                                                           axis_name=self.axis_name, **params)
                elif all(d is None for d in dims):
                    return prim.bind(*vals, **params)
                else:
                    rule = rule_for(batch_rules, prim, "vmap (batching)")
                    try:
                        out, out_dim = rule(vals, dims, axis_size=self.axis_size, **params)
                    except FuncadTypeError:
                        _explain_per_example(prim, args, params)
                        raise
        finally:
            _naming.axis_name = outer
            _spmd.spmd_axis_name = outer_spmd
        if prim.multiple_results:
            return [self.wrap(o, d) for o, d in zip(out, out_dim)]
        return self.wrap(out, out_dim)

    def process_custom_jvp(self, fun, jvp, args, symbolic_zeros):
        vals, dims = zip(*[self.unpack(x) for x in args]) if args else ((), ())
        with set_trace(self.parent):
            if all(d is None for d in dims):
                return bind_custom_jvp(fun, jvp, list(vals), symbolic_zeros)
            n = self.axis_size
            # Unbatched inputs stay unbatched (as in JAX): the rule may hand them to code
            # that has no batching rule (a callback under a cond whose operands these are).
            batched = [d is not None for d in dims]
            vals = [v if d is None else moveaxis0(v, d, n) for v, d in zip(vals, dims)]
            fun_b = batch_subfun(fun, n, self.axis_name, batched)

            def jvp_b(primals, tangents):
                k = len(primals)
                t_dims = [None if t is None else 0 for t in tangents]
                # a tangent has its primal's shape, so it is batched where the primal is
                t_batched = [b for b, t in zip(batched, tangents) if t is not None]
                outs = batch_subfun(lambda *xs: _flat_jvp(jvp, xs[:k], xs[k:], t_dims), n,
                                    self.axis_name, batched + t_batched)(
                    *primals, *[t for t in tangents if t is not None])
                half = len(outs) // 2
                return outs[:half], outs[half:]

            outs = bind_custom_jvp(fun_b, jvp_b, vals, symbolic_zeros)
        return [BatchTracer(self, o, 0) for o in outs]

    def process_custom_vjp(self, fun, fwd, bwd, args):
        vals, dims = zip(*[self.unpack(x) for x in args]) if args else ((), ())
        with set_trace(self.parent):
            if all(d is None for d in dims):
                return bind_custom_vjp(fun, fwd, bwd, list(vals))
            n = self.axis_size
            vals = [moveaxis0(v, d, n) for v, d in zip(vals, dims)]
            name = self.axis_name
            outs = bind_custom_vjp(batch_subfun(fun, n, name), _batch_fwd(fwd, n, name),
                                   _batch_bwd(bwd, n, name), vals)
        return [BatchTracer(self, o, 0) for o in outs]


# custom_vjp's flat protocol (see funcad/transforms/custom.py): fwd(*xs) -> (outs, residuals)
# and bwd(residuals, cts) -> input cotangents, None meaning zero.
def _batch_fwd(fwd, n, name=None):
    def batched(*xs):
        num_out = []

        def flat(*ys):
            outs, res = fwd(*ys)
            num_out.append(len(outs))
            return list(outs) + list(res)
        both = batch_subfun(flat, n, name)(*xs)
        return both[:num_out[0]], both[num_out[0]:]
    return batched


def _batch_bwd(bwd, n, name=None):
    def batched(res, cts):
        k, zero = len(res), []

        def flat(*ys):
            got = bwd(list(ys[:k]), list(ys[k:]))
            zero[:] = [g is None for g in got]
            return [g for g in got if g is not None]
        got = iter(batch_subfun(flat, n, name)(*res, *cts))
        return [None if z else next(got) for z in zero]
    return batched


def _explain_per_example(prim, args, params) -> None:
    """A batching rule failed on a type error: raise the shape rule's error for one
    example's types instead (what the user wrote), if it has one."""
    rule = abstract_eval_rules.get(prim)
    if rule is None:
        return
    try:
        rule(*[x.aval if isinstance(x, Tracer) else aval_of(x) for x in args], **params)
    except FuncadError as e:
        raise e from None
    except Exception:
        pass


def _flat_jvp(jvp, primals, tangents_present, t_dims):
    it = iter(tangents_present)
    tangents = [None if d is None else next(it) for d in t_dims]
    outs, t_outs = jvp(list(primals), tangents)
    t_outs = [zeros_tangent(o) if t is None else t for o, t in zip(outs, t_outs)]
    return list(outs) + list(t_outs)


def batch_subfun(fun, axis_size, axis_name=None, in_batched=None):
    """fun on one example -> fun on a batch: the inputs batched along axis 0 (those with
    `in_batched` False, where given, unbatched), every output batched along axis 0."""
    def batched(*xs):
        trace = BatchTrace(ctx.trace, axis_size, axis_name, _spmd.spmd_axis_name)
        frames = [] if axis_name is None else [AxisFrame(axis_name, axis_size, "vmap", False)]
        flags = [True] * len(xs) if in_batched is None else in_batched
        try:
            with set_trace(trace), axis_env(frames):
                outs = fun(*[BatchTracer(trace, x, 0) if b else x for x, b in zip(xs, flags)])
            pairs = [trace.unpack(o) for o in outs]
        finally:
            trace.finish()
        with set_trace(trace.parent):
            return [moveaxis0(v, d, axis_size) for v, d in pairs]
    return batched


def batch_call(fun, args, in_dims, axis_size, axis_name=None, spmd_axis_name=None):
    """Run `fun` (flat lists) on batched args; returns (value, batch_dim) pairs. Inside
    a batching rule of a named vmap, the batch axis keeps that name (and spmd_axis_name)."""
    axis_name = _naming.axis_name if axis_name is None else axis_name
    spmd = _spmd.spmd_axis_name if spmd_axis_name is None else spmd_axis_name
    trace = BatchTrace(ctx.trace, axis_size, axis_name, spmd)
    ins = [a if d is None else BatchTracer(trace, a, d) for a, d in zip(args, in_dims)]
    frames = [] if axis_name is None else [AxisFrame(axis_name, axis_size, "vmap", False)]
    try:
        with set_trace(trace), axis_env(frames):
            outs = fun(*ins)
        return [trace.unpack(o) for o in outs]
    finally:
        trace.finish()


def place_batch_axis(v, d, od, axis_size, i=0, sum_match=False):
    """Move batch axis d of an output to out_axis od (None: must be unbatched, or with
    `sum_match` is summed over the batch)."""
    if od is None:
        if d is not None:
            if sum_match:  # the transpose of broadcasting along the mapped axis
                return reduce_sum(v, (d,))
            raise FuncadTypeError(
                f"vmap: output {i} depends on the mapped inputs, but out_axes asks for it to be "
                "unbatched (None). Give it an integer out_axes, or pass sum_match=True to sum it "
                "over the mapped axis.")
        return v
    nd = aval_of(v).ndim + (1 if d is None else 0)
    if not -nd <= od < nd:
        raise FuncadTypeError(f"vmap: out_axes={od} is out of range for an output of rank {nd}")
    return moveaxis(moveaxis0(v, d, axis_size), 0, od % nd)


def vmap_flat(fun, args, in_dims, axis_size, out_dims=None):
    """Batch `fun` (flat lists) over args with batch axes `in_dims` (None = unbatched);
    outputs get their batch axes at `out_dims` (default 0)."""
    pairs = batch_call(fun, args, in_dims, axis_size)
    out_dims = [0] * len(pairs) if out_dims is None else out_dims
    return [place_batch_axis(v, d, od, axis_size, i) for i, ((v, d), od) in enumerate(zip(pairs, out_dims))]


def _hidden_axes(x) -> int:
    # A pytree node whose leaf carries trailing axes the user does not see (a typed PRNG key
    # array over uint32[..., 2] data declares `_hidden_ndim = 1`): its axes count without them.
    return getattr(type(x), "_hidden_ndim", 0)


def _expand_axes(axes, tree, what):
    """Broadcast an in_axes/out_axes prefix tree to one axis per leaf of `tree`.

    A negative axis counts from the end of the value the user sees, so for a node with
    hidden trailing axes (typed keys) it is shifted past them onto the leaf."""
    if axes is None or isinstance(axes, int):
        ax_leaves, subtrees = [axes], [tree]
    else:
        ax_leaves, ax_tree = tree_flatten(axes, is_leaf=lambda x: x is None)
        for a in ax_leaves:
            if a is not None and not isinstance(a, int):
                raise FuncadTypeError(f"vmap: {what} must hold ints or None, got {type(a).__name__}")
        try:
            subtrees = flatten_up_to(ax_tree, tree, what)
        except Exception:
            raise FuncadTypeError(
                f"vmap: {what} {axes!r} does not match the structure of the values it describes "
                f"({tree_structure(tree)}); give one entry per argument, or a single int/None") from None
    out = []
    for a, sub in zip(ax_leaves, subtrees):
        for x in tree_leaves(sub, is_leaf=_hidden_axes):
            hidden = _hidden_axes(x)
            if hidden and a is not None:
                nd = len(x.shape)
                if not -nd <= a < nd:
                    raise FuncadTypeError(f"vmap: {what}={a} is out of range for a key array of "
                                          f"shape {tuple(x.shape)} (rank {nd})")
                out.extend([a - hidden if a < 0 else a] * tree_structure(x).num_leaves)
            else:
                out.extend([a] * tree_structure(x).num_leaves)
    return out


def _lane_refs(flat, flat_fun, positions):
    """Mapped Ref arguments as their values; inside, each becomes a ref of the batched
    value, whose final values are extra outputs. Returns (args, function, the refs)."""
    owners = [flat[i] for i in positions]
    if len({id(r) for r in owners}) < len(owners):
        raise ValueError("only one reference to a mutable array may be passed as an argument to a "
                         "function, but a mutable array reference appeared twice among vmap's mapped "
                         "arguments. Pass it once.")
    args = list(flat)
    for i, v in zip(positions, _refs.values(owners)):
        args[i] = v

    def with_refs(*xs):
        lanes = [_refs.Ref(xs[i], ctx.trace) for i in positions]
        for r in lanes:
            _refs.created(r)
        xs = list(xs)
        for i, r in zip(positions, lanes):
            xs[i] = r
        return list(flat_fun(*xs)) + [r._value for r in lanes]
    return args, with_refs, owners


def vmap(fun: Callable, in_axes: Any = 0, out_axes: Any = 0, axis_name=None,
         axis_size: int | None = None, spmd_axis_name=None, sum_match: bool = False) -> Callable:
    """Vectorise `fun` over a batch axis of its arguments.

    With `axis_name`, the collectives of `funcad.lax` (psum, all_gather, ppermute,
    axis_index, ...) inside `fun` act over the batch under that name. With
    `spmd_axis_name` (a mesh axis name or a tuple of them), the sharding
    constraints inside `fun` split the batch dimension over those mesh axes
    (under jit, as JAX's). With `sum_match=True`, an output whose out_axes is None
    but which varies along the mapped axis is summed over it (an error otherwise).

    >>> import funcad, funcad.numpy as fnp, numpy as np
    >>> funcad.vmap(lambda x, y: fnp.dot(x, y), in_axes=(0, None))(np.ones((3, 2)), np.ones(2))
    Array([2., 2., 2.], dtype=float64)
    >>> funcad.vmap(lambda x: 2. * x, out_axes=None, sum_match=True)(np.arange(3.))
    Array(6., dtype=float64)
    """
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    spmd = None if spmd_axis_name is None else (
        tuple(spmd_axis_name) if isinstance(spmd_axis_name, (tuple, list)) else (spmd_axis_name,))

    @wraps(fun)
    def batched(*args):
        if _options.debug_key_reuse and ctx.trace is None:  # JAX's checks on typed keys
            return hooks.key_reuse_boundary(_batched, args)
        return _batched(*args)

    def _batched(*args):
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise FuncadTypeError(f"vmap: in_axes has {len(in_axes)} entries but the function was "
                                  f"called with {len(args)} positional arguments")
        flat, in_tree = tree_flatten(args)
        dims = _expand_axes(in_axes, args, "in_axes")
        sizes = {}
        norm = []
        for i, (x, d) in enumerate(zip(flat, dims)):
            if d is None:
                norm.append(None)
                continue
            a = x.aval.inner_aval if isinstance(x, Ref) else aval_of(x)
            if not -a.ndim <= d < a.ndim:
                raise FuncadValueError(
                    f"vmap was requested to map its argument along axis {d}, which implies that its "
                    f"rank should be at least {d + 1 if d >= 0 else -d}, but is only {a.ndim} (its "
                    f"shape is {a.shape}); argument leaf {i} is {a.str_short()}: give it in_axes=None "
                    f"to pass it to every call unmapped")
            d %= a.ndim
            norm.append(d)
            sizes.setdefault(a.shape[d], []).append(f"leaf {i} ({a.str_short()}, axis {d})")
        if len(sizes) > 1:
            desc = "; ".join(f"size {s}: {', '.join(v)}" for s, v in sizes.items())
            raise FuncadTypeError(f"vmap got inconsistent sizes for the mapped axes: {desc}. "
                                  "All mapped axes must have the same length.")
        n = next(iter(sizes)) if sizes else axis_size
        if n is None:
            raise FuncadTypeError("vmap needs at least one mapped argument (in_axes not all None) "
                                  "or an explicit axis_size")
        if axis_size is not None and sizes and n != axis_size:
            raise FuncadTypeError(f"vmap: axis_size={axis_size} but the mapped axes have size {n}")
        flat_fun, store = flatten_fun(fun, in_tree)
        refs = [i for i, (x, d) in enumerate(zip(flat, norm)) if d is not None and isinstance(x, Ref)]
        if refs:  # a mapped Ref: each lane reads and writes its slice (a ref of the lane's type)
            flat, flat_fun, owners = _lane_refs(flat, flat_fun, refs)
        pairs = batch_call(flat_fun, flat, norm, n, axis_name, spmd)
        if refs:
            pairs, lanes = pairs[:len(pairs) - len(refs)], pairs[len(pairs) - len(refs):]
            _refs.write_back(owners, [place_batch_axis(v, d, norm[i], n) for (v, d), i in zip(lanes, refs)])
        out_tree = store[0]
        # out_axes describe the outputs with their batch axis: an unbatched one stands as its
        # broadcast type (only shapes are read)
        shaped = [v if d is not None else ShapedArray((n,) + tuple(aval_of(v).shape), aval_of(v).dtype)
                  for v, d in pairs]
        o_dims = _expand_axes(out_axes, tree_unflatten(out_tree, shaped), "out_axes")
        return tree_unflatten(out_tree, [place_batch_axis(v, d, od, n, i, sum_match)
                                         for i, ((v, d), od) in enumerate(zip(pairs, o_dims))])

    return batched
