"""funcad.lax: the primitives' own functions (no promotion, no broadcasting help)."""
import importlib as _importlib

from ..primitives import bits as _bits, elementwise as _elementwise, indexing as _indexing
from ..primitives import linalg as _linalg, reductions as _reductions, special as _special
from ..primitives import structural as _structural
from ._checked import checked as _checked
from ..transforms.control_flow_api import cond, fori_loop, map, scan, switch, while_loop  # noqa: F401
from ..core.errors import UnsupportedError as _UnsupportedError, unsupported_name as _unsupported_name

# The functions funcad.lax takes from the primitive modules, by module: the one
# list to extend when a primitive is added. Each is wrapped so that it checks
# operand types eagerly too (see _checked.py).
_FROM_PRIMITIVES = {
    _elementwise: """abs acos acosh add asin asinh atan atan2 atanh bitwise_and bitwise_not bitwise_or
        bitwise_xor cbrt ceil clamp complex conj convert_element_type cos cosh digamma div eq erf
        erf_inv erfc exp exp2 expm1 floor ge gt imag integer_pow is_finite le lgamma log log1p
        logistic lt max min mul ne neg polygamma pow real rem round rsqrt select_n sign sin sinh
        sqrt square stop_gradient sub tan tanh""",
    _structural: "broadcast_in_dim concatenate expand_dims iota pad reshape rev slice squeeze transpose",
    _reductions: """argmax argmin cummax cummin cumprod cumsum reduce_max reduce_min reduce_prod
        reduce_sum""",
    _linalg: "dot_general",
    _special: """bessel_i0e bessel_i1e betainc igamma igamma_grad_a igammac random_gamma_grad
        zeta""",
    _indexing: "dynamic_slice dynamic_update_slice sort",
    _bits: """bitcast_convert_type clz population_count shift_left shift_right_arithmetic
        shift_right_logical reduce_precision""",
}
for _module, _names in _FROM_PRIMITIVES.items():
    for _name in _names.split():
        globals()[_name] = _checked(getattr(_module, _name))


def select(pred, on_true, on_false):
    """on_true where pred else on_false (select_n with the cases swapped)."""
    return select_n(pred, on_false, on_true)  # noqa: F821


__all__ = sorted([n for names in _FROM_PRIMITIVES.values() for n in names.split()]
                 + ["cond", "fori_loop", "map", "scan", "switch", "while_loop", "select"])


# funcad.lax.linalg (as in JAX) loads on first attribute access (PEP 562), so that a
# program that never touches it does not pay for importing it; `dir()` lists it.
_LAZY_SUBMODULES = frozenset({"linalg"})


# JAX's lax names that funcad leaves out, each with what to use instead (README lists them).
_NOT_IN_FUNCAD = {
    "psum_scatter_start": "it returns a future of XLA's asynchronous collectives, a type funcad does not "
                          "have; use funcad.lax.psum_scatter (XLA schedules it asynchronously itself)",
    "ragged_all_to_all": "use funcad.lax.all_to_all on blocks padded to equal size",
}


def __getattr__(name):
    if name in _LAZY_SUBMODULES:
        return _importlib.import_module(f"{__name__}.{name}")
    if name in _NOT_IN_FUNCAD:
        raise _UnsupportedError(f"funcad.lax.{name} is not provided: {_NOT_IN_FUNCAD[name]}.")
    raise _unsupported_name(__name__, name, globals(), None)


def __dir__():
    return sorted(set(globals()) | _LAZY_SUBMODULES)


# compositions of primitives, by topic
from ._slicing import *  # noqa: E402,F401,F403
from ._slicing import __all__ as _slicing_all  # noqa: E402
from ._scans import *  # noqa: E402,F401,F403
from ._scans import __all__ as _scans_all  # noqa: E402
from ._sorting import *  # noqa: E402,F401,F403
from ._sorting import __all__ as _sorting_all  # noqa: E402
from ._reduce import *  # noqa: E402,F401,F403
from ._reduce import __all__ as _reduce_all  # noqa: E402
from ._construction import *  # noqa: E402,F401,F403
from ._construction import __all__ as _construction_all  # noqa: E402
from ._dot import *  # noqa: E402,F401,F403
from ._dot import __all__ as _dot_all  # noqa: E402
from ._arithmetic import *  # noqa: E402,F401,F403
from ._arithmetic import __all__ as _arithmetic_all  # noqa: E402
from ._staging import *  # noqa: E402,F401,F403
from ._staging import __all__ as _staging_all  # noqa: E402

__all__ = sorted(set(__all__).union(_slicing_all, _scans_all, _sorting_all, _reduce_all, _construction_all, _dot_all, _arithmetic_all, _staging_all))

from ..primitives.fft import FftType  # noqa: E402
from ..primitives.fft import fft as _fft  # noqa: E402

fft = _checked(_fft)
__all__ = sorted(set(__all__) | {"FftType", "fft"})

from ..primitives.sharding import with_sharding_constraint  # noqa: E402,F401

__all__ = sorted(set(__all__) | {"with_sharding_constraint"})

from ._conv import *  # noqa: E402,F401,F403  (conv_general_dilated and its wrappers)
from ._conv import __all__ as _conv_all  # noqa: E402

__all__ = sorted(set(__all__) | set(_conv_all))

from ._types import *  # noqa: E402,F401,F403  (Precision, GatherScatterMode, dimension numbers, ...)
from ._types import __all__ as _types_all  # noqa: E402

__all__ = sorted(set(__all__) | set(_types_all))
from ._scatter import *  # noqa: E402,F401,F403  (gather and the scatters with dimension numbers)
from ._scatter import __all__ as _scatter_all  # noqa: E402

__all__ = sorted(set(__all__) | set(_scatter_all))
from ._scaled_dot import scaled_dot  # noqa: E402,F401

__all__ = sorted(set(__all__) | {"scaled_dot"})
from ._solvers import custom_linear_solve, custom_root  # noqa: E402,F401

__all__ = sorted(set(__all__) | {"custom_linear_solve", "custom_root"})
from ..primitives.collectives import (all_gather, all_to_all, axis_index, axis_size, pmax,  # noqa: E402,F401
                                      pmean, pmin, ppermute, pshuffle, psum, psum_scatter,
                                      pswapaxes, pvary)
from ..primitives.collectives import __all__ as _collectives_all  # noqa: E402

__all__ = sorted(set(__all__) | set(_collectives_all))
from ._rng import *  # noqa: E402,F401,F403  (rng_bit_generator, RandomAlgorithm, rng_uniform)
from ._rng import __all__ as _rng_all  # noqa: E402

__all__ = sorted(set(__all__) | set(_rng_all))

from ..primitives.dot_algorithm import (AccuracyMode, DotAlgorithm, DotAlgorithmPreset,  # noqa: E402
                                        Tolerance)
__all__ = sorted(set(__all__) | {"AccuracyMode", "DotAlgorithm", "DotAlgorithmPreset", "Tolerance"})
from ._tokens import after_all, create_token, dce_sink, pbroadcast, pcast  # noqa: E402,F401

__all__ = sorted(set(__all__) | {"after_all", "create_token", "dce_sink", "pbroadcast", "pcast"})

# JAX's primitive objects (`lax.sin_p`...), for code that inspects jaxprs
# (`eqn.primitive is lax.sin_p`): each funcad primitive that is the same operation as
# JAX's, with the params users read. Left out: gather_p and scatter_add_p (funcad's are
# point gathers/scatters; JAX's take dimension numbers) and the JAX primitives funcad
# writes as compositions (log2, square, top_k, reduce_and...: see the README).
from ..primitives import collectives as _collectives, tokens as _tokens  # noqa: E402
from ..primitives import convolution as _convolution, fft as _fft_mod  # noqa: E402
from ..primitives import rng as _rng_prims, sharding as _sharding_prims  # noqa: E402
from ..transforms import checkpoint as _checkpoint, control_flow as _control  # noqa: E402
from ..transforms import linear_solve as _linear_solve  # noqa: E402

_PRIMITIVE_OBJECTS = {
    _elementwise: """abs acos acosh add and asin asinh atan atan2 atanh cbrt ceil clamp complex conj
        convert_element_type cos cosh digamma div eq erf erf_inv erfc exp exp2 expm1 floor ge gt
        imag integer_pow is_finite le lgamma log log1p logistic lt max min mul ne neg not or
        polygamma pow real rem round rsqrt select_n sign sin sinh sqrt stop_gradient sub tan tanh
        xor""",
    _structural: "broadcast_in_dim concatenate iota pad reshape rev slice squeeze transpose",
    _reductions: """argmax argmin cummax cummin cumprod cumsum reduce_max reduce_min reduce_prod
        reduce_sum""",
    _linalg: "dot_general",
    _indexing: "dynamic_slice dynamic_update_slice sort",
    _bits: """bitcast_convert_type clz population_count reduce_precision shift_left
        shift_right_arithmetic shift_right_logical""",
    _special: """bessel_i0e bessel_i1e igamma igamma_grad_a igammac regularized_incomplete_beta
        zeta""",
    _collectives: "all_gather all_to_all axis_index pmax pmin ppermute psum",
    _tokens: "after_all create_token",
    _convolution: "conv_general_dilated",
    _fft_mod: "fft",
    _rng_prims: "rng_bit_generator rng_uniform",
    _sharding_prims: "sharding_constraint",
    _checkpoint: "optimization_barrier",
    _control: "cond scan while",
    _linear_solve: "linear_solve",
}
for _module, _names in _PRIMITIVE_OBJECTS.items():
    for _name in _names.split():
        globals()[_name + "_p"] = getattr(_module, _name + "_p")
__all__ = sorted(set(__all__) | {n + "_p" for names in _PRIMITIVE_OBJECTS.values() for n in names.split()})

# JAX's signatures (keyword names, out_sharding, allow_negative_indices, ...) over the
# functions above (see _jax_names.py)
from . import _jax_names  # noqa: E402

for _name in _jax_names.CHECKED:
    globals()[_name] = _checked(getattr(_jax_names, _name))
for _name in _jax_names.PLAIN:
    globals()[_name] = getattr(_jax_names, _name)

from ._docstrings import attach as _attach_docstrings  # noqa: E402 (after every name is bound)

_attach_docstrings(globals())
