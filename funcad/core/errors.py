"""funcad's exception types. Each message names the problem and the fix."""


class FuncadError(Exception):
    """Base class of every error funcad raises on purpose."""


class FuncadTypeError(FuncadError, TypeError):
    """A value of the wrong kind, shape or dtype."""


class ConcretizationError(FuncadError, TypeError):
    """A staged value was used where Python needs a concrete one (if, bool, int...)."""


class TracerLeakError(FuncadError, RuntimeError):
    """A tracer escaped the transformation that created it."""


class MissingRuleError(FuncadError, NotImplementedError):
    """A primitive has no rule for a transformation."""


class JaxprTypeError(FuncadError, TypeError):
    """A jaxpr does not type-check."""
