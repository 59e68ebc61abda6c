"""The checkpoint policies of JAX's `jax.checkpoint_policies` (funcad.checkpoint_policies)."""
import types as _types
from typing import Callable as _Callable

from ..primitives.convolution import conv_general_dilated_p as _conv_p
from ..primitives.linalg import dot_general_p as _dot_p
from .checkpoint import name_p

def everything_saveable(*_, **__) -> bool:
    """Save every intermediate: as if `checkpoint` were not used."""
    return True


def nothing_saveable(*_, **__) -> bool:
    """Save none: recompute everything from the inputs (`checkpoint`'s default)."""
    return False


def dots_saveable(prim, *_, **__) -> bool:
    """Save the results of matrix products and convolutions; recompute the rest."""
    return prim is _dot_p or prim is _conv_p


def dots_with_no_batch_dims_saveable(prim, *_, **params) -> bool:
    """Save the results of matrix products without batch dimensions (a transformer's
    weight products); recompute the rest."""
    if prim is _dot_p:
        (_, _), (lhs_batch, rhs_batch) = params["dimension_numbers"]
        return not lhs_batch and not rhs_batch
    return False


def save_anything_except_these_names(*names_not_to_save: str) -> _Callable:
    """JAX's: saves every intermediate. (A named value is the identity of a value
    that is itself saveable, so leaving out the name alone frees nothing; JAX's policy
    returns True for every equation too.)"""
    return lambda *_, **__: True


def save_any_names_but_these(*names_not_to_save: str) -> _Callable:
    """Save only values named with `checkpoint_name`, except the names given."""
    excluded = frozenset(names_not_to_save)

    def policy(prim, *_, **params):
        return prim is name_p and params["name"] not in excluded
    return policy


def save_only_these_names(*names_which_can_be_saved: str) -> _Callable:
    """Save only values named with `checkpoint_name` with one of the names given."""
    allowed = frozenset(names_which_can_be_saved)

    def policy(prim, *_, **params):
        return prim is name_p and params["name"] in allowed
    return policy


def save_from_both_policies(policy_1: _Callable, policy_2: _Callable) -> _Callable:
    """Save what either policy saves."""
    if policy_1 is everything_saveable or policy_2 is everything_saveable:
        return everything_saveable
    if policy_1 is nothing_saveable:
        return policy_2
    if policy_2 is nothing_saveable:
        return policy_1

    def policy(prim, *args, **params):
        out1, out2 = policy_1(prim, *args, **params), policy_2(prim, *args, **params)
        if not (isinstance(out1, bool) and isinstance(out2, bool)):
            raise ValueError(f"save_from_both_policies combines policies that return a bool; got {out1} "
                             f"and {out2}. Write the combined policy as a function of its own.")
        return out1 or out2
    return policy


checkpoint_policies = _types.SimpleNamespace(
    everything_saveable=everything_saveable,
    nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable,
    checkpoint_dots=dots_saveable,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=dots_with_no_batch_dims_saveable,
    save_anything_except_these_names=save_anything_except_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_only_these_names=save_only_these_names,
    save_from_both_policies=save_from_both_policies)
