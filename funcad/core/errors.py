"""funcad's exception types. Each message names the problem and the fix."""
import difflib

import numpy as np


class FuncadError(Exception):
    """Base class of every error funcad raises on purpose."""


class BaseTypeError(FuncadError, TypeError):
    """Base of funcad's TypeErrors (`funcad.errors.JAXTypeError`, as JAX's)."""


class FuncadTypeError(BaseTypeError):
    """A value of the wrong kind, shape or dtype."""


class ConcretizationError(BaseTypeError):
    """A staged value was used where Python needs a concrete one (if, bool, int...);
    JAX's ConcretizationTypeError."""


class TracerBoolConversionError(ConcretizationError):
    """bool() of a staged value (an `if`, `while`, `and`/`or`/`not` on it), as JAX's."""


class TracerIntegerConversionError(ConcretizationError):
    """A staged value used as an index (`__index__`: a list index, range()), as JAX's."""


class TracerArrayConversionError(ConcretizationError):
    """np.asarray() (or another NumPy function) on a staged value, as JAX's."""


class TracerLeakError(BaseTypeError, RuntimeError):
    """A tracer escaped the transformation that created it (JAX's UnexpectedTracerError,
    a TypeError; a RuntimeError too, as funcad's always was)."""


class MissingRuleError(FuncadError, NotImplementedError):
    """A primitive has no rule for a transformation."""


class JaxprTypeError(BaseTypeError):
    """A jaxpr does not type-check."""


class KeyReuseError(BaseTypeError):
    """With `debug_key_reuse` on, a typed PRNG key was used after being consumed (JAX's
    `jax.errors.KeyReuseError`, a JAXTypeError; see funcad/random/_key_reuse.py)."""


class NaNError(FuncadError, FloatingPointError):
    """With `debug_nans` on, a primitive produced a NaN (names it and the user's line)."""


class InfError(FuncadError, FloatingPointError):
    """With `debug_infs` on, a primitive produced an inf (names it and the user's line)."""


class UnsupportedError(FuncadError, AttributeError):
    """A NumPy function or feature that funcad does not provide (names the nearest ones)."""


class AxisError(FuncadError, np.exceptions.AxisError):
    """An axis out of range for an array's rank (also a numpy AxisError, ValueError, IndexError)."""

    def __init__(self, message: str):
        super().__init__(message)


class FuncadValueError(FuncadError, ValueError):
    """A bad argument value: a shape that does not fit, an uneven split..."""


class BaseIndexError(FuncadError, IndexError):
    """Base of funcad's IndexErrors (`funcad.errors.JAXIndexError`, as JAX's)."""


class FuncadIndexError(BaseIndexError):
    """An index that does not fit the array (too many indices, out of bounds, wrong type)."""


class NonConcreteBooleanIndexError(BaseIndexError, ConcretizationError):
    """A boolean mask index on a staged value: the result's shape would depend on its values
    (as JAX's; also a ConcretizationError, as funcad's was)."""


class TypePromotionError(FuncadTypeError, ValueError):
    """Dtypes with no implicit promotion (two float8 formats; any mix under
    numpy_dtype_promotion='strict'). A ValueError as JAX's, and a TypeError as funcad's was."""


class TransferGuardError(FuncadError, RuntimeError):
    """A transfer the transfer guard refuses (`funcad.transfer_guard("disallow")`); a
    RuntimeError, as the JaxRuntimeError JAX raises for it."""


def unsupported_name(module: str, name: str, namespace: dict, reference=None) -> AttributeError:
    """The error for `module.name` missing: an UnsupportedError naming the nearest
    supported names when `reference` (e.g. numpy) has it, else a plain AttributeError
    (so hasattr and dunder probes behave as usual)."""
    if name.startswith("__"):
        return AttributeError(f"module {module!r} has no attribute {name!r}")
    supported = [n for n in namespace if not n.startswith("_")]
    near = difflib.get_close_matches(name, supported, n=5, cutoff=0.6)
    hint = f" The nearest supported names: {', '.join(near)}." if near else ""
    ref = getattr(reference, "__name__", "numpy")
    if reference is None:
        return UnsupportedError(f"{module} has no attribute {name!r}.{hint}")
    if hasattr(reference, name):
        return UnsupportedError(
            f"{module}.{name} is not supported ({ref}.{name} exists, but funcad does not provide "
            f"it yet).{hint} Write it with the supported functions, or call {ref}.{name} on "
            "concrete values outside transformed code.")
    return UnsupportedError(f"{module} has no attribute {name!r} (nor does {ref}).{hint}")


class UnboundAxisError(FuncadError, NameError):
    """A collective names an axis that no enclosing shard_map, vmap or pmap binds."""


class ShardingTypeError(FuncadError):
    """An operation whose result's sharding (in its type, over Explicit mesh axes) is
    ambiguous or inconsistent, as JAX's ShardingTypeError; the message says which
    `out_sharding=` or `reshard` to add."""
