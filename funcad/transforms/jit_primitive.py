"""jit's primitive: the call of a compiled jaxpr, its executables and its rules (jvp,
partial evaluation, transpose, batching)."""
from __future__ import annotations
from ..core import options as _options
from ..core.ir import ClosedJaxpr
from ..core.trace import Primitive, eval_jaxpr, set_trace
from ..lowering import xla
from ..lowering.runtime import Executable, guard_inputs, memo
from ..primitives._base import is_undefined
from .calls import define_call
from .passes import optimize
from .debugging import hoist_prints
from . import inspect_sharding
from .jit_spmd import SpmdExecutable, constrains
from .jaxpr_transforms import (batch_jaxpr, forward_residuals, jvp_jaxpr, nonzero_tangent,
                               partial_eval_jaxpr, transpose_jaxpr)


# ------------------------------------------------------------- executables ----


def _prepare(closed: ClosedJaxpr) -> tuple:
    """(the jaxpr XLA gets, its print plan): funcad.debug.print calls become extra
    outputs, printed after each call, and the program is optimized."""
    closed, prints = hoist_prints(closed)
    return optimize(closed), prints


def executable_for(closed: ClosedJaxpr, name: str, backend: str | None) -> Executable:
    # keyed on the device: funcad.default_device may change it between calls
    return memo(closed, ("exe", xla.get_device(backend)), lambda: _executable(closed, name, backend))


def _executable(closed, name, backend, donated=(), host=None, in_shardings=None,
                out_shardings=()):
    """A single-device Executable, or an SPMD one where shardings are in play."""
    if in_shardings is None and not constrains(closed):
        prepared, prints = _prepare(closed)
        with inspect_sharding.collect() as inspected:
            exe = Executable(prepared, name, backend, donated, host, prints)
        inspect_sharding.fire(inspected, [exe.device])  # one device holds every value
        return exe
    ins = in_shardings if in_shardings is not None else [None] * len(closed.in_avals)
    return SpmdExecutable(closed, name, backend, ins, out_shardings, donated)


# ------------------------------------------------------------ the primitive ----

jit_p = Primitive("jit", multiple_results=True)


def _jit_impl(*args, jaxpr, name, backend):
    if _options.no_execution:
        _refuse_execution(name)
    exe = executable_for(jaxpr, name, backend)
    if _options.transfer_guards:
        guard_inputs(args, exe)
    return exe(args)


def _refuse_execution(name: str):
    raise RuntimeError(f"funcad tried to execute function jit({name}), but the no_execution config "
                       "option is set. Turn it off (funcad.config.update('jax_no_execution', False)) "
                       "or leave the call out of the `with funcad.no_execution(True):` block.")




def _bind_call(args, jaxpr, name, backend):
    return jit_p.bind(*args, jaxpr=jaxpr, name=name, backend=backend)


# The rules below transform the inner jaxpr with jaxpr_transforms.py, keeping
# weak types (the outputs reach the user), and call jit on the result.

def _jit_jvp(primals, tangents, *, jaxpr, name, backend):
    in_nz = tuple(nonzero_tangent(p, t) for p, t in zip(primals, tangents))
    jvp_closed, out_nz = memo(jaxpr, ("jvp", in_nz),
                               lambda: jvp_jaxpr(jaxpr, in_nz, keep_weak=True))
    outs = _bind_call([*primals, *[t for t, nz in zip(tangents, in_nz) if nz]], jvp_closed,
                      f"jvp_{name}", backend)
    n = len(jaxpr.out_avals)
    it = iter(outs[n:])
    return outs[:n], [next(it) if nz else None for nz in out_nz]


def _split_call(closed: ClosedJaxpr, unknowns):
    known, unknown, out_unknowns, nres = partial_eval_jaxpr(closed, unknowns)
    known, sources = forward_residuals(known, nres)
    return known, unknown, out_unknowns, sources


def _jit_partial_eval(trace, args, params):
    """Run the known half now, stage the unknown half; residuals that are known
    inputs are passed on from the arguments, not copied out of the known call."""
    closed, name, backend = params["jaxpr"], params["name"], params["backend"]
    unknowns = tuple(trace.is_own(x) for x in args)
    known, unknown, out_unknowns, sources = memo(
        closed, ("partial_eval", unknowns), lambda: _split_call(closed, unknowns))
    k_args = [x for x, u in zip(args, unknowns) if not u]
    k_outs = []
    with set_trace(trace.parent):
        if not known.jaxpr.eqns:  # nothing to compute: outputs are inputs or constants
            k_outs = eval_jaxpr(known.jaxpr, known.consts, *k_args)
        elif known.out_avals:
            k_outs = _bind_call(k_args, known, f"known_{name}", backend)
    u_outs = []
    if any(out_unknowns):
        residuals = [k_args[i] if kind == "in" else k_outs[i] for kind, i in sources]
        u_args = residuals + [x for x, u in zip(args, unknowns) if u]
        u_outs = trace.stage(jit_p, u_args, dict(jaxpr=unknown, name=f"unknown_{name}", backend=backend))
    k_it, u_it = iter(k_outs), iter(u_outs)
    return [next(u_it) if u else next(k_it) for u in out_unknowns]


def _jit_transpose(cts, *args, jaxpr, name, backend):
    undefined = tuple(is_undefined(a) for a in args)
    ct_mask = tuple(c is not None for c in cts)
    t_closed, out_nz = memo(jaxpr, ("transpose", undefined, ct_mask),
                             lambda: transpose_jaxpr(jaxpr, undefined, ct_mask, keep_weak=True))
    outs = _bind_call([a for a in args if not is_undefined(a)] + [c for c in cts if c is not None],
                      t_closed, f"transpose_{name}", backend) if any(out_nz) else []
    it, nz = iter(outs), iter(out_nz)
    return [(next(it) if next(nz) else None) if u else None for u in undefined]


def _jit_batch(args, dims, *, axis_size, jaxpr, name, backend):
    dims = tuple(dims)
    batched = [d is not None for d in dims]
    b_closed, out_batched = memo(jaxpr, ("vmap", dims, axis_size), lambda: batch_jaxpr(
        jaxpr, batched, axis_size, dims=dims, keep_weak=True))
    outs = _bind_call(list(args), b_closed, f"vmap_{name}", backend)
    return outs, [0 if b else None for b in out_batched]


# the passes may inline it and prune its outputs
define_call(jit_p, impl=_jit_impl, jvp=_jit_jvp, partial_eval=_jit_partial_eval,
            transpose=_jit_transpose, batch=_jit_batch)
