"""Which inputs of a custom_vjp call are perturbed, and which of its output cotangents
are zero: facts a `defvjp(..., symbolic_zeros=True)` rule sees, passed beside the flat
fwd/bwd protocol (see funcad/transforms/custom.py).

The transform that knows a fact (the jvp of the call knows the perturbation, the
transpose of custom_lin the zero cotangents) sets it around its one call of the rule;
the user's rule, possibly wrapped by vmap or by a staged call, reads it on entry. So
the wrappers carry the fact without knowing of it.

>>> with zeros_info("perturbed", (True, False)):
...     take_zeros_info("perturbed")
(True, False)
"""
from __future__ import annotations

import contextlib
import threading

__all__ = ["zeros_info", "take_zeros_info"]

_state = threading.local()


@contextlib.contextmanager
def zeros_info(kind: str, mask: tuple):
    """Tell the next fwd (`kind="perturbed"`) or bwd (`"ct_zero"`) rule called which flat
    inputs are perturbed, or which flat output cotangents are zero."""
    old = getattr(_state, kind, None)
    setattr(_state, kind, mask)
    try:
        yield
    finally:
        setattr(_state, kind, old)


def take_zeros_info(kind: str) -> tuple | None:
    """The mask set for this rule call (None if none), cleared so that rules nested
    inside this one do not mistake it for theirs."""
    mask = getattr(_state, kind, None)
    setattr(_state, kind, None)
    return mask
