"""funcad's global settings: read them as attributes, set them with `update`,
or for a block of code with `override`.

The options, their defaults and environment variables are listed below (generated
from their declarations in funcad/core/options.py; `describe()` gives their meanings).

Every option is also accepted under JAX's name, `jax_<option>`
(`funcad.config.update("jax_debug_nans", True)`), and those JAX has as context managers
are top-level scopes too: `with funcad.debug_nans(True):` (see funcad/core/config.py).

`funcad.random` reads `default_prng_impl` and `threefry_partitionable` (see
`funcad.core.prng_settings`). With `enable_x64` off funcad gives values JAX's default
32-bit dtypes (see `funcad.core.x64`), so a program written for JAX computes the same
numbers; `funcad.enable_x64(False)` switches it for a block.

>>> import funcad
>>> funcad.config.debug_nans
False
>>> with funcad.config.override(debug_nans=True):
...     print(funcad.config.debug_nans)
True
>>> funcad.config.update("jit_cache_size", 64); funcad.config.jit_cache_size
64
>>> funcad.config.update("jit_cache_size", 128)
"""
from .core.config import (OptionScope, config_with_absl, describe, override,  # noqa: F401
                          parse_flags_with_absl, read, scopes, update, values, _OPTIONS, _table)
from .core import options as _opts
from .core.config import option_attribute as _option_attribute
from .core.module_attributes import module_attributes as _module_attributes
# The modules that keep some options' state bind them when imported (core/options.py):
from .core import prng_settings as _prng, traceback_util as _traceback_util, x64 as _x64  # noqa: F401
from .lowering import compilation_cache as _pcache, xla as _xla  # noqa: F401
from .transforms import debugging as _debugging, jit as _jit  # noqa: F401

__all__ = ["update", "read", "override", "values", "describe", "config_with_absl",
           "parse_flags_with_absl", "OptionScope", "scopes",
           *_OPTIONS]

# An option reads as an attribute: `funcad.config.debug_nans`.
__getattr__, __dir__ = _module_attributes(__name__, other=_option_attribute, listed=_OPTIONS)


if __doc__ is not None:  # (python -OO strips docstrings)
    __doc__ = __doc__.replace("`describe()` gives their meanings).\n",
                              "`describe()` gives their meanings).\n\n" + _table() + "\n", 1)
_opts.from_environment()
