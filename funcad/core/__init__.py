"""funcad's core: avals, the IR, primitives and traces, staging, pytrees, errors.

Its public names are those of JAX's `core` namespace (AbstractValue, Atom,
ShapedArray, Trace, Tracer, eval_jaxpr, eval_context, ...) plus funcad's own."""
from typing import Any as Value

from .avals import AbstractValue, ShapedArray, aval_of, float0, max_dim, min_dim
from .eval_context import ensure_compile_time_eval, eval_context
from .errors import (ConcretizationError, FuncadError, FuncadTypeError, JaxprTypeError,
                     MissingRuleError, NaNError, TracerLeakError, UnsupportedError)
from .ir import Atom, ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from . import pretty  # noqa: F401  (installs the IR's printing)
from .staging import ShapeDtypeStruct, make_jaxpr
from .trace import Primitive, Trace, Tracer, eval_jaxpr, typecheck

ParamDict = dict  # an equation's params
