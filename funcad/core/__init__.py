"""funcad's core: avals, the IR, primitives and traces, staging, pytrees, errors."""
from .avals import ShapedArray, aval_of, float0
from .errors import (ConcretizationError, FuncadError, FuncadTypeError, JaxprTypeError,
                     MissingRuleError, NaNError, TracerLeakError, UnsupportedError)
from .ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var, typecheck
from .staging import ShapeDtypeStruct, make_jaxpr
from .trace import Primitive, Trace, Tracer, eval_jaxpr
