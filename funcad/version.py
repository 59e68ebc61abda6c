"""funcad's version, as JAX's `jax.version` module gives jax's (see funcad/core/version.py).

>>> import funcad
>>> funcad.version.__version__ == funcad.__version__
True
>>> funcad.__version_info__
(0, 1, 0)
"""
from .core.version import (__version__, __version_info__, _minimum_jaxlib_version,  # noqa: F401
                           _minimum_jaxlib_version_info, _version, _version_as_tuple)

__all__ = ["__version__", "__version_info__"]
