"""What reverse mode saves for the backward pass (`funcad.ad_checkpoint.print_saved_residuals`):
each residual's type and where it comes from (an argument, a named value, an equation).

>>> import funcad.numpy as fnp
>>> print_saved_residuals(lambda x: fnp.sum(fnp.sin(x)), fnp.ones(2))
f64[2] output of cos
"""
import inspect as _inspect
from typing import Callable as _Callable

from ..core.avals import aval_of as _aval_of
from ..core.pytree import keystr as _keystr, tree_flatten as _tree_flatten
from ..core.pytree import tree_flatten_with_path as _flatten_with_path, tree_unflatten as _tree_unflatten
from ..core.staging import StagingTrace as _StagingTrace
from ..core.trace import set_trace as _set_trace
from .checkpoint import name_p
from .jaxpr_transforms import strip_weak as _strip_weak
from .linearize import linearize_flat as _linearize_flat

__all__ = ["print_saved_residuals"]


def _arg_names(f, args, kwargs) -> list:
    """One name per flattened argument leaf: `x`, `params['w']`, as JAX's debug info."""
    try:
        bound = _inspect.signature(f).bind(*args, **kwargs)
        names = list(bound.arguments)
        pos = [names[i] if i < len(names) else f"args[{i}]" for i in range(len(args))]
    except (TypeError, ValueError):
        pos = [f"args[{i}]" for i in range(len(args))]
    out = []
    for name, a in zip(pos, args):
        out += [name + _keystr(path) for path, _ in _flatten_with_path(a)[0]]
    for k, a in kwargs.items():
        out += [k + _keystr(path) for path, _ in _flatten_with_path(a)[0]]
    return out


def _saved_residuals(f: _Callable, *args, **kwargs) -> list:
    """[(aval, where it comes from)] for each value reverse mode saves for f's backward
    pass at these arguments (JAX's order: arguments, then intermediates)."""
    flat, in_tree = _tree_flatten((args, kwargs))
    names = _arg_names(f, args, kwargs)
    trace = _StagingTrace(None, name="saved_residuals")
    ins = [trace.new_arg(_strip_weak(_aval_of(x))) for x in flat]

    def flat_f(*xs):
        a, kw = _tree_unflatten(in_tree, list(xs))
        return _tree_flatten(f(*a, **kw))[0]

    try:
        with _set_trace(trace):
            _, linear = _linearize_flat(flat_f, ins)
        residuals = [c for c in linear.consts]
        producers = {id(v): (k, e) for k, e in enumerate(trace.eqns) for v in e.outvars}
        in_pos = {id(v): i for i, v in enumerate(trace.invars)}
    finally:
        trace.finish()
    consts, from_args, from_eqns = [], [], []
    for c in residuals:
        var = c._var if trace.is_own(c) else None
        aval = _aval_of(c)
        if var is None:
            consts.append((aval, "from a constant"))
        elif id(var) in in_pos:
            from_args.append((in_pos[id(var)], (aval, f"from the argument {names[in_pos[id(var)]]}")))
        else:
            k, eqn = producers[id(var)]
            what = (f"named '{eqn.params['name']}'" if eqn.prim is name_p else f"output of {eqn.prim.name}")
            from_eqns.append((k, (aval, what + (f" from {eqn.source}" if eqn.source else ""))))
    by_position = lambda p: p[0]  # noqa: E731
    return (consts + [r for _, r in sorted(from_args, key=by_position)]
            + [r for _, r in sorted(from_eqns, key=by_position)])


def print_saved_residuals(f: _Callable, *args, **kwargs) -> None:
    """Print what reverse mode saves for f's backward pass, one line per value
    (jax.ad_checkpoint.print_saved_residuals): type and where it comes from."""
    for aval, src in _saved_residuals(f, *args, **kwargs):
        print(f"{aval.str_short()} {src}")
