"""custom_jvp and custom_vjp: derivative rules supplied by the user, as in JAX.

The decorators flatten pytrees and hand flat functions to the current trace
(`Trace.process_custom_jvp` / `process_custom_vjp`). Outside differentiation a
custom function is just its body. Under jvp a custom_jvp function runs its
rule; a custom_vjp function runs `fwd` and emits its output tangent as one
`custom_lin` equation, linear in the input tangents, whose transpose calls
`bwd`. Reverse mode (linearize + transpose) therefore never evaluates
custom_lin forward; plain forward mode does, and raises a clear error.

>>> import funcad, funcad.numpy as fnp
>>> @funcad.custom_jvp
... def log1pexp(x):
...     return fnp.log(1.0 + fnp.exp(x))
>>> @log1pexp.defjvp
... def _(primals, tangents):
...     (x,), (t,) = primals, tangents
...     return log1pexp(x), t * (1.0 - 1.0 / (1.0 + fnp.exp(x)))
>>> float(funcad.grad(log1pexp)(50.0))
1.0
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
from typing import Any, Callable, Sequence

from ..core.avals import ShapedArray, aval_of, float0, is_float, tangent_dtype, tangent_aval
from ..core.errors import FuncadTypeError, FuncadValueError
from ..core.pytree import flatten_fun, flatten_up_to, tree_flatten, tree_map, tree_unflatten
from ..core.staging import StagingTrace
from ..core.trace import (Primitive, Tracer, abstract_eval_rules, bind_custom_jvp, bind_custom_vjp,
                          ctx, impl_rules, jvp_rules, lowering_rules, sharding_rules, transpose_rules)
from ..core.typed_sharding import BY_SHAPE_RULE
from ..primitives._base import is_undefined, zeros_tangent
from ..primitives.elementwise import convert_element_type, stop_gradient
from .custom_calls import _closed_over_error
from .custom_zeros import take_zeros_info as _take_zeros_info, zeros_info as _zeros_info
from .transpose import TRANSPOSED_ON_ZERO

__all__ = ["zero_from_primal", "custom_jvp", "custom_vjp", "SymbolicZero", "CustomVJPPrimal", "custom_vjp_jvp",
           "custom_vjp_primal_tree_values"]


# The flat protocol the traces see (Trace.process_custom_jvp / process_custom_vjp):
#   fun(*xs) -> list of outputs
#   jvp(primals, tangents) -> (outputs, output tangents); None = symbolic zero
#   fwd(*xs) -> (outputs, residuals)          both lists
#   bwd(residuals, cts) -> list of input cotangents (None = zero)
# For symbolic_zeros, two facts travel beside that protocol rather than through it, so
# the transforms that wrap fwd and bwd (vmap, the staged call) need not know of them:
# which inputs are perturbed, set around each fwd call, and which output cotangents are
# symbolic zeros (they arrive instantiated), set around each bwd call. See _zeros_info.


class SymbolicZero:
    """A zero tangent passed to a `defjvp(..., symbolic_zeros=True)` rule instead of an array.

    A rule may return it (or None) as an output tangent to mean zero.
    """

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)

    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)

    def instantiate(self):
        """The zero as an array."""
        return zeros_tangent(self.aval)

    @staticmethod
    def from_primal_value(val: Any) -> "SymbolicZero":
        """The symbolic zero tangent of a primal value (float0 for integer primals)."""
        a = aval_of(val)
        return SymbolicZero(tangent_aval(a))

    def __repr__(self):
        return f"SymbolicZero({self.aval.str_short()})"


@dataclasses.dataclass(slots=True)
class CustomVJPPrimal:
    """An input leaf of a `defvjp(..., symbolic_zeros=True)` fwd rule: the primal `value`,
    and whether it is `perturbed` (differentiated; if False its Jacobian column is zero)."""
    value: Any
    perturbed: bool


def custom_vjp_primal_tree_values(tree: Any) -> Any:
    """Replace each `CustomVJPPrimal` leaf of `tree` by its value (for symbolic_zeros fwd rules).

    >>> custom_vjp_primal_tree_values((CustomVJPPrimal(1.0, True), [CustomVJPPrimal(2, False)]))
    (1.0, [2])
    """
    leaves, treedef = tree_flatten(tree)
    for leaf in leaves:
        if type(leaf) is not CustomVJPPrimal:
            raise TypeError(f"unexpected leaf type {type(leaf)}")
    return tree_unflatten(treedef, [leaf.value for leaf in leaves])


def _nondiff_from_names(fun, argnums, argnames):
    if not argnames:
        return tuple(argnums)
    argnames = (argnames,) if isinstance(argnames, str) else tuple(argnames)
    params = inspect.signature(fun).parameters.items()
    named = {i for i, (k, p) in enumerate(params) if p.kind == p.POSITIONAL_OR_KEYWORD and k in argnames}
    return tuple(sorted(named | set(argnums)))


def _resolve_kwargs(fun, args, kwargs, who):
    """Turn keyword and default arguments into positional ones, as the rules take positions."""
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):  # a builtin without a signature: positions only
        if kwargs:
            raise FuncadTypeError(f"{who} `{_name(fun)}` takes no keyword arguments") from None
        return tuple(args)
    if not kwargs and not any(p.default is not p.empty for p in sig.parameters.values()):
        return tuple(args)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise FuncadTypeError(f"{who} `{_name(fun)}`: {e}") from None
    bound.apply_defaults()
    if bound.kwargs:
        raise FuncadTypeError(f"{who} `{_name(fun)}`: keyword arguments {sorted(bound.kwargs)} "
                              "could not be resolved to positions; pass them positionally")
    return tuple(bound.args)


def _name(f):
    return getattr(f, "__name__", repr(f))


def _split(args, nondiff_argnums, who, fun):
    n = len(args)
    nondiff = sorted({i % n if -n <= i < n else _bad_argnum(i, n, who, fun) for i in nondiff_argnums})
    diff_idx = [i for i in range(n) if i not in nondiff]
    return nondiff, diff_idx


def _bad_argnum(i, n, who, fun):
    raise FuncadTypeError(f"{who} `{_name(fun)}` has nondiff_argnums containing {i}, but was called "
                          f"with {n} positional argument{'s' if n != 1 else ''}")


def _merge(n, nondiff, static_vals, diff_idx, diff_vals):
    full_args = [None] * n
    for i, v in zip(nondiff, static_vals):
        full_args[i] = v
    for i, v in zip(diff_idx, diff_vals):
        full_args[i] = v
    return full_args


def _stop_gradient_tree(x):
    leaves, tree = tree_flatten(x)
    if not any(isinstance(v, Tracer) for v in leaves):
        return x
    return tree_unflatten(tree, [stop_gradient(v) if isinstance(v, Tracer) else v for v in leaves])


def _check_tangent(primal, t, where):
    """Validate an output tangent of a custom rule; returns it flat (None for zero)."""
    if t is None or type(t) is SymbolicZero:
        return None
    pa, ta = aval_of(primal), aval_of(t)
    want = tangent_dtype(pa.dtype)
    if want == float0:
        return None
    if ta.shape != pa.shape or (ta.dtype != want and not (ta.weak_type and is_float(ta.dtype))):
        raise FuncadTypeError(
            f"{where}: a primal output of type {pa.str_short()} needs a tangent of type "
            f"{pa.update(dtype=want).str_short()}, but the rule returned {ta.str_short()}")
    if ta.dtype != want:
        t = convert_element_type(t, want)
    return t


# ----------------------------------------------------------- custom_jvp ----

class custom_jvp:
    """A function with a user-defined forward-mode derivative rule, as JAX's `custom_jvp`.

    The rule `jvp(primals, tangents) -> (primal_out, tangent_out)` is used by
    jvp, grad, vjp, linearize and at every order (it is differentiated like
    any funcad code). Arguments in `nondiff_argnums` are passed to the rule
    first, as `jvp(*nondiff_args, primals, tangents)`, and get no tangents.

    >>> import funcad, funcad.numpy as fnp
    >>> @funcad.custom_jvp
    ... def f(x):
    ...     return fnp.sin(x)
    >>> @f.defjvp
    ... def f_jvp(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     return f(x), 2.0 * t          # a deliberately "wrong" derivative
    >>> float(funcad.grad(f)(0.0))
    2.0
    """

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = (),
                 nondiff_argnames: Sequence[str] = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _nondiff_from_names(fun, nondiff_argnums, nondiff_argnames)
        self.jvp = None
        self.symbolic_zeros = False

    def __getattr__(self, name):
        # as JAX's: unknown attributes come from the wrapped function (a custom_vmap's def_vmap, ...)
        fun = self.__dict__.get("fun")
        if fun is None:
            raise AttributeError(name)
        return getattr(fun, name)

    def defjvp(self, jvp: Callable, symbolic_zeros: bool = False) -> Callable:
        """Set the rule `jvp(primals, tangents) -> (primal_out, tangent_out)`; returns it.

        With `symbolic_zeros=True`, zero tangents arrive as `SymbolicZero` objects.
        """
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros
        return jvp

    def defjvps(self, *jvps: Callable | None) -> None:
        """Set the rule from one function per argument: `jvp_i(t_i, primal_out, *primals)`.

        The output tangent is the sum of the contributions; `None` means the
        output does not depend on that argument.

        >>> import funcad, funcad.numpy as fnp
        >>> f = funcad.custom_jvp(lambda x, y: x * y)
        >>> f.defjvps(lambda t, ans, x, y: t * y, lambda t, ans, x, y: x * t)
        >>> float(funcad.grad(f, 1)(3.0, 4.0))
        3.0
        """
        if self.nondiff_argnums:
            raise FuncadTypeError("defjvps cannot be used with nondiff_argnums; use defjvp")

        def rule(primals, tangents):
            ans = self(*primals)
            ans_leaves, ans_tree = tree_flatten(ans)
            total = [None] * len(ans_leaves)
            for fn, t, p in zip(jvps, tangents, primals):
                if fn is None or all(v is None or type(v) is SymbolicZero for v in tree_flatten(t)[0]):
                    continue
                contrib = flatten_up_to(ans_tree, fn(t, ans, *primals), f"defjvps rule of {_name(self.fun)}")
                total = [c if s is None else (s if c is None else s + c) for s, c in zip(total, contrib)]
            return ans, tree_unflatten(ans_tree, [zeros_tangent(aval_of(a)) if t is None else t
                                                  for a, t in zip(ans_leaves, total)])
        self.defjvp(rule)

    def __call__(self, *args, **kwargs):
        if self.jvp is None:
            raise FuncadTypeError(f"no JVP rule is defined for the custom_jvp function "
                                  f"`{_name(self.fun)}`; define one with `@{_name(self.fun)}.defjvp`")
        args = _resolve_kwargs(self.fun, args, kwargs, "custom_jvp function")
        if ctx.trace is None:  # eager and untransformed: just the body
            return self.fun(*args)
        n = len(args)
        nondiff, diff_idx = _split(args, self.nondiff_argnums, "custom_jvp function", self.fun)
        # Non-differentiable arguments are closed over; their tangents are cut as in JAX.
        static = [_stop_gradient_tree(args[i]) for i in nondiff]
        flat_args, in_tree = tree_flatten(tuple(args[i] for i in diff_idx))
        user_fun, user_jvp, sz = self.fun, self.jvp, self.symbolic_zeros
        name = _name(self.fun)
        flat_fun, out_trees = flatten_fun(
            lambda *d: user_fun(*_merge(n, nondiff, static, diff_idx, d)), in_tree)

        def flat_jvp(primals, tangents):
            if sz:
                tangents = [SymbolicZero(aval_of(p)) if t is None else t for p, t in zip(primals, tangents)]
            res = user_jvp(*static, tree_unflatten(in_tree, primals), tree_unflatten(in_tree, tangents))
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise FuncadTypeError(f"the custom_jvp rule of `{name}` must return a pair "
                                      f"(primal_out, tangent_out), got {type(res).__name__}")
            out, t_out = res
            leaves, tree = tree_flatten(out)
            try:
                t_leaves = flatten_up_to(tree, t_out, "")
            except ValueError:
                raise FuncadTypeError(
                    f"the custom_jvp rule of `{name}` must return primal and tangent outputs of one "
                    f"pytree structure, got {tree} and {tree_flatten(t_out)[1]}") from None
            if any(tree_flatten(t)[1].kind is not None for t in t_leaves if t is not None):
                raise FuncadTypeError(
                    f"the custom_jvp rule of `{name}` must return primal and tangent outputs of one "
                    f"pytree structure, got {tree} and {tree_flatten(t_out)[1]}")
            out_trees.append(tree)
            where = f"custom_jvp rule of `{name}`"
            return leaves, [_check_tangent(p, t, where) for p, t in zip(leaves, t_leaves)]

        flat_fun.__name__ = flat_jvp.__name__ = name
        flat_jvp.symbolic_zeros = sz  # a staged call then passes zero tangents as None
        outs = bind_custom_jvp(flat_fun, flat_jvp, flat_args, sz)
        return tree_unflatten(out_trees[-1], outs)


# ----------------------------------------------------------- custom_vjp ----

class custom_vjp:
    """A function with a user-defined reverse-mode derivative, as JAX's `custom_vjp`.

    `fwd(*args) -> (out, residuals)` and `bwd(residuals, out_cotangent) ->
    tuple of input cotangents` (one per argument not in `nondiff_argnums`;
    `None` means zero) replace differentiation of the body under grad, vjp
    and linearize, at any order (fwd and bwd are themselves differentiated).
    Forward mode (jvp) of a custom_vjp function is an error, as in JAX.

    >>> import funcad, funcad.numpy as fnp
    >>> @funcad.custom_vjp
    ... def clip_gradient(x):
    ...     return x
    >>> clip_gradient.defvjp(lambda x: (x, None),
    ...                      lambda res, g: (fnp.clip(g, -1.0, 1.0),))
    >>> float(funcad.grad(lambda x: 3.0 * clip_gradient(x))(2.0))
    1.0
    """

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = (),
                 nondiff_argnames: Sequence[str] = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _nondiff_from_names(fun, nondiff_argnums, nondiff_argnames)
        self.fwd = self.bwd = None
        self.symbolic_zeros = False

    def __getattr__(self, name):
        # as JAX's: unknown attributes come from the wrapped function (a custom_vmap's def_vmap, ...)
        fun = self.__dict__.get("fun")
        if fun is None:
            raise AttributeError(name)
        return getattr(fun, name)

    def defvjp(self, fwd: Callable, bwd: Callable, symbolic_zeros: bool = False) -> None:
        """Set `fwd(*args) -> (out, residuals)` and `bwd(*nondiff_args, residuals, ct) -> cts`.

        With `symbolic_zeros=True`, each input leaf reaches `fwd` as a
        `CustomVJPPrimal(value, perturbed)`, `perturbed` saying whether that input is
        differentiated; `bwd` gets a `SymbolicZero` for each zero output cotangent and
        may return `SymbolicZero` (or None) for an input.

        >>> import funcad
        >>> from funcad.custom_derivatives import SymbolicZero
        >>> f = funcad.custom_vjp(lambda x, y: x * y)
        >>> def fwd(x, y):
        ...     print("perturbed:", x.perturbed, y.perturbed)
        ...     return x.value * y.value, (x.value, y.value)
        >>> f.defvjp(fwd, lambda r, g: (g * r[1], g * r[0]), symbolic_zeros=True)
        >>> float(funcad.grad(f, 1)(2.0, 3.0))
        perturbed: False True
        2.0
        """
        self.fwd, self.bwd = fwd, bwd
        self.symbolic_zeros = bool(symbolic_zeros)

    def __call__(self, *args, **kwargs):
        name = _name(self.fun)
        if self.fwd is None:
            raise FuncadTypeError(f"no VJP rule is defined for the custom_vjp function `{name}`; "
                                  f"define one with `{name}.defvjp(fwd, bwd)`")
        args = _resolve_kwargs(self.fun, args, kwargs, "custom_vjp function")
        if ctx.trace is None:
            return self.fun(*args)
        n = len(args)
        nondiff, diff_idx = _split(args, self.nondiff_argnums, "custom_vjp function", self.fun)
        static = [args[i] for i in nondiff]
        for i, v in zip(nondiff, static):
            if any(isinstance(x, Tracer) for x in tree_flatten(v)[0]):
                raise FuncadTypeError(
                    f"argument {i} of the custom_vjp function `{name}` is in nondiff_argnums but is a "
                    "traced array. nondiff_argnums is for values that are not arrays (functions, "
                    "Python numbers, flags); pass arrays as ordinary arguments and return None as "
                    "their cotangent from bwd.")
        diff_args = tuple(args[i] for i in diff_idx)
        flat_args, in_tree = tree_flatten(diff_args)
        arg_trees = [tree_flatten(a)[1] for a in diff_args]
        res_trees: list = []
        user_fun, user_fwd, user_bwd, sz = self.fun, self.fwd, self.bwd, self.symbolic_zeros
        flat_fun, out_trees = flatten_fun(
            lambda *d: user_fun(*_merge(n, nondiff, static, diff_idx, d)), in_tree)

        def flat_fwd(*xs):
            perturbed = _take_zeros_info("perturbed")
            if sz:
                perturbed = (True,) * len(xs) if perturbed is None else perturbed
                xs = [CustomVJPPrimal(x, bool(p)) for x, p in zip(xs, perturbed)]
            res = user_fwd(*_merge(n, nondiff, static, diff_idx, tree_unflatten(in_tree, xs)))
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise FuncadTypeError(f"the custom_vjp fwd rule of `{name}` must return a pair "
                                      f"(output, residuals), got {type(res).__name__}")
            out, residuals = res
            leaves, tree = tree_flatten(out)
            r_leaves, r_tree = tree_flatten(residuals)
            for r in r_leaves:
                if not isinstance(r, Tracer):
                    try:
                        aval_of(r)
                    except FuncadTypeError:
                        raise FuncadTypeError(
                            f"the custom_vjp fwd rule of `{name}` returned a residual of type "
                            f"{type(r).__name__}; residuals must be arrays (pass other values "
                            "through nondiff_argnums)") from None
            out_trees.append(tree)
            res_trees.append(r_tree)
            return leaves, r_leaves

        n_diff = len(diff_args)  # bwd outlives this call (in a linear jaxpr): keep no tracers
        ct_avals = [tangent_aval(a) for a in map(aval_of, flat_args)]

        def flat_bwd(res, cts):
            ct_zero = _take_zeros_info("ct_zero")
            if sz and ct_zero is not None:
                cts = [SymbolicZero(ShapedArray(c.shape, c.dtype)) if z else c
                       for c, z in zip(cts, ct_zero)]
            ct_tree = tree_unflatten(out_trees[-1], cts)
            got = user_bwd(*static, tree_unflatten(res_trees[-1], res), ct_tree)
            if not isinstance(got, (tuple, list)) or len(got) != n_diff:
                raise FuncadTypeError(
                    f"the custom_vjp bwd rule of `{name}` must return a tuple with one cotangent "
                    f"per differentiable argument ({n_diff}), got "
                    f"{len(got) if isinstance(got, (tuple, list)) else type(got).__name__}")
            flat = []
            for k, (g, tree) in enumerate(zip(got, arg_trees)):
                if g is None:
                    flat += [None] * tree.num_leaves
                    continue
                try:
                    flat += flatten_up_to(tree, g, "")
                except ValueError:
                    raise FuncadTypeError(
                        f"the custom_vjp bwd rule of `{name}` returned a cotangent of structure "
                        f"{tree_flatten(g)[1]} for argument {diff_idx[k]}, whose structure is "
                        f"{tree}") from None
            return [_drop_symbolic_zero(g, a, name, k) for k, (g, a) in enumerate(zip(flat, ct_avals))]

        flat_fun.__name__ = flat_fwd.__name__ = name
        flat_bwd.__name__ = _name(user_bwd)
        flat_fwd.symbolic_zeros = sz  # the staged call traces fwd once per perturbation then
        outs = bind_custom_vjp(flat_fun, flat_fwd, flat_bwd, flat_args)
        return tree_unflatten(out_trees[-1], outs)


def _drop_symbolic_zero(g, ct_aval, name, k):
    """A SymbolicZero returned by bwd is a zero (None), once its type is checked."""
    if type(g) is not SymbolicZero:
        return g
    if g.shape != ct_aval.shape or g.dtype != ct_aval.dtype:
        raise FuncadValueError(
            f"the custom_vjp bwd rule of `{name}` returned a SymbolicZero of type "
            f"{g.aval.str_short()} for input leaf {k}, whose tangent type is {ct_aval.str_short()}; "
            "return None for a zero cotangent instead")
    return None


# ------------------------------------------- custom_vjp under jvp: custom_lin ----

class _LinRule:
    """The static part of a custom_lin equation: bwd and the primal types it serves."""

    __slots__ = ("bwd", "in_avals", "has_tangent", "out_avals", "name")

    def __init__(self, bwd, in_avals, has_tangent, out_avals, name):
        self.bwd, self.in_avals, self.has_tangent, self.out_avals = bwd, in_avals, has_tangent, out_avals
        self.name = name

    def __repr__(self):
        return _name(self.bwd)


custom_lin_p = Primitive("custom_lin", multiple_results=True)


def custom_vjp_jvp(fun, fwd, bwd, primals: list, tangents: list):
    """The jvp of a custom_vjp function: (outputs, output tangents).

    Runs `fwd` for the outputs and residuals; the output tangents are one
    custom_lin equation of the (non-zero) input tangents, which reverse mode
    transposes into a call of `bwd`.
    """
    # A staged custom_lin is fine as long as it is only ever transposed (grad of
    # jit); evaluating or compiling it is forward mode, which raises then.
    if any(t is not None for t in tangents[:getattr(bwd, "num_closed_over", 0)]):
        raise _closed_over_error("custom_vjp")
    with _zeros_info("perturbed", tuple(t is not None for t in tangents)):
        outs, res = fwd(*primals)
    out_avals = tuple(aval_of(o) for o in outs)
    diff_out = [is_float(a.dtype) for a in out_avals]
    if not any(diff_out):
        return outs, [None] * len(outs)
    has_t = tuple(t is not None for t in tangents)
    rule = _LinRule(bwd, tuple(aval_of(p) for p in primals), has_t, out_avals, _name(fun))
    t_outs = iter(custom_lin_p.bind(*res, *[t for t in tangents if t is not None],
                                    num_res=len(res), rule=rule))
    return outs, [next(t_outs) if d else None for d in diff_out]


def _forward_error(*args, **params):
    raise FuncadTypeError(
        f"can't apply forward-mode differentiation (jvp) to the custom_vjp function "
        f"`{params['rule'].name}`: a custom_vjp function only defines reverse mode. "
        "Use grad/vjp, or define the function with custom_jvp instead.")


def _custom_lin_abstract_eval(*avals, num_res, rule):
    return [a.update(dtype=tangent_dtype(a.dtype), weak_type=False)
            for a in rule.out_avals if is_float(a.dtype)]


def _custom_lin_transpose(cts, *args, num_res, rule):
    res = args[:num_res]
    if any(is_undefined(r) for r in res):
        raise FuncadTypeError("custom_lin: a custom_vjp residual depends on the linear input")
    ct_iter = iter(cts)
    full_cts, ct_zero = [], []
    for a in rule.out_avals:
        ct = next(ct_iter) if is_float(a.dtype) else None
        ct_zero.append(ct is None)
        full_cts.append(zeros_tangent(a) if ct is None else ct)
    with _zeros_info("ct_zero", tuple(ct_zero)):
        got = rule.bwd(list(res), full_cts)
    out = [None] * num_res
    where = f"the custom_vjp bwd rule `{_name(rule.bwd)}`"
    for g, a, has_t in zip(got, rule.in_avals, rule.has_tangent):
        if has_t:
            out.append(_check_cotangent(g, a, where))
    return out


def _check_cotangent(g, aval, where):
    if g is None or type(g) is SymbolicZero:
        return None
    want = tangent_dtype(aval.dtype)
    ga = aval_of(g)
    if want == float0 or ga.dtype == float0:
        return None
    if ga.shape != aval.shape or (ga.dtype != want and not is_float(want)):
        raise FuncadTypeError(f"{where} returned a cotangent of type {ga.str_short()} for an "
                              f"input of type {aval.str_short()}; it must have type "
                              f"{aval.update(dtype=want).str_short()}")
    if ga.dtype != want and ga.weak_type:
        g = convert_element_type(g, want)
    # A float input's cotangent of another float dtype passes on as it is, as JAX lets it
    # (flax's fp8 rules give float32 cotangents for float8 inputs).
    return g


impl_rules[custom_lin_p] = _forward_error
lowering_rules[custom_lin_p] = lambda ctx, *args, num_res, rule: _forward_error(rule=rule)
abstract_eval_rules[custom_lin_p] = _custom_lin_abstract_eval
sharding_rules[custom_lin_p] = BY_SHAPE_RULE  # the primal outputs' types, shardings included
jvp_rules[custom_lin_p] = lambda primals, tangents, **params: _forward_error(**params)
transpose_rules[custom_lin_p] = _custom_lin_transpose
TRANSPOSED_ON_ZERO.add(custom_lin_p)


def zero_from_primal(val: Any, symbolic_zeros: bool = False) -> Any:
    """The zero tangent of each leaf of `val`: a `SymbolicZero` with `symbolic_zeros`,
    else a zero array of the tangent's type (float0 for integer primals)."""
    def zero(x):
        a = aval_of(x)
        t = ShapedArray(a.shape, tangent_dtype(a.dtype))
        return SymbolicZero(t) if symbolic_zeros else zeros_tangent(t)
    return tree_map(zero, val)
