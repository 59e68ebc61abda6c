"""funcad's primitives under JAX's names (`add_p`, `sin_p`, ...), for libraries that
inspect jaxprs (`eqn.primitive is primitives.sin_p`).

>>> from funcad.extend.core import primitives
>>> primitives.sin_p
sin
"""
import importlib as _importlib
import pkgutil as _pkgutil

from .. import primitives as _prims_pkg
from ..core.avals import aval_of as _aval_of
from ..core.errors import UnsupportedError as _UnsupportedError
from ..core.staging import trace_to_jaxpr as _trace_to_jaxpr
from ..core.trace import Primitive as _Primitive

# the transforms that define primitives of their own (call, control flow, custom rules)
_TRANSFORMS = ["jit", "closed_call", "control_flow", "checkpoint", "custom_calls", "custom", "linear_solve"]


def _collect() -> dict:
    modules = [f"{_prims_pkg.__name__}.{info.name}" for info in _pkgutil.iter_modules(_prims_pkg.__path__)]
    modules += [f"{__package__.rsplit('.', 1)[0]}.transforms.{m}" for m in _TRANSFORMS]
    found = {}
    for module_name in modules:
        for name, value in vars(_importlib.import_module(module_name)).items():
            if name.endswith("_p") and isinstance(value, _Primitive):
                found.setdefault(name, value)
    return found


_FOUND = _collect()
globals().update(_FOUND)


class _CallPrimitive(_Primitive):
    """`call_p.bind(fun, *args)` applies the wrapped function `fun` (see
    funcad.extend.linear_util) to `args` as one call: it is staged into a
    ClosedJaxpr and bound as `closed_call`."""

    __slots__ = ()

    def bind(self, fun, *args, **params):
        if params:
            raise _UnsupportedError(f"call_p.bind: params {sorted(params)} have no meaning for a "
                                   "plain call; bind with the function and its arguments only")
        closed = _trace_to_jaxpr(lambda *xs: list(fun.call_wrapped(*xs)), [_aval_of(a) for a in args],
                                name="call")
        return closed_call_p.bind(*args, call_jaxpr=closed)


call_p = _CallPrimitive("call", multiple_results=True)

__all__ = sorted([*_FOUND, "call_p"])
