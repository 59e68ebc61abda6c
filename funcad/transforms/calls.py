"""One declaration for a call-like primitive: a primitive whose outputs are a
ClosedJaxpr held in one of its params (the callee) applied to its inputs (jit,
checkpoint, custom_jvp/custom_vjp calls, linear_solve, custom_vmap).

`define_call` registers all of such a primitive's rules in one place. What is
common to every call comes by default: evaluating the callee eagerly, its
output avals as the abstract evaluation, inlining it into StableHLO, and (via
`core.trace.register_call`) writing it inline in `funcad.to_python`, printing
it nested, letting debug_nans look inside and, if `optimizable`, letting the
passes inline and prune it. The primitive supplies the rules that give it its
meaning (jvp, partial evaluation, transpose, batching) and overrides the
defaults where it differs (jit's impl compiles; a solve's abstract eval reads
its operands).
"""
from __future__ import annotations

from typing import Callable

from ..core.staging import partial_eval_rules
from ..core.typed_sharding import BY_SHAPE_RULE
from ..core.trace import (sharding_rules, Primitive, abstract_eval_rules, batch_rules, eval_jaxpr, impl_rules,
                          jvp_rules, register_call, transpose_rules)
from ..lowering.stablehlo import call_rule, lowering_rules

__all__ = ["define_call"]


def define_call(prim: Primitive, param: str = "jaxpr", *, optimizable: bool = True,
                prune_params: Callable | None = None, impl: Callable | None = None,
                abstract_eval: Callable | None = None, jvp: Callable | None = None,
                partial_eval: Callable | None = None, transpose: Callable | None = None,
                batch: Callable | None = None, lowering: Callable | None = None) -> Primitive:
    """Register `prim`, a call of the ClosedJaxpr `params[param]`, with its rules.

    Rules left as None take the call defaults (impl, abstract_eval, lowering) or
    stay unregistered (jvp, partial_eval, transpose, batch: the transforms then
    report the missing rule). `optimizable` and `prune_params` are as in
    `core.trace.register_call`. Returns `prim`.

    >>> from funcad.core.trace import Primitive
    >>> my_call_p = define_call(Primitive("my_call", multiple_results=True))
    """
    def call_impl(*args, **params):
        body = params[param]
        return eval_jaxpr(body.jaxpr, body.consts, *args)

    def call_aval(*avals, **params):
        return list(params[param].out_avals)

    impl_rules[prim] = impl or call_impl
    abstract_eval_rules[prim] = abstract_eval or call_aval
    sharding_rules[prim] = BY_SHAPE_RULE  # the body's types carry its results' shardings
    lowering_rules[prim] = lowering or call_rule(param)
    for table, rule in ((jvp_rules, jvp), (partial_eval_rules, partial_eval),
                        (transpose_rules, transpose), (batch_rules, batch)):
        if rule is not None:
            table[prim] = rule
    register_call(prim, param, optimizable=optimizable, prune_params=prune_params)
    return prim
