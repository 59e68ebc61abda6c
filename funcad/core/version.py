"""funcad's version, as JAX's `jax.version` module gives jax's.

>>> import funcad
>>> funcad.version.__version__ == funcad.__version__
True
>>> funcad.__version_info__
(0, 1, 0)
"""
import functools
import importlib.metadata

__all__ = ["__version__", "__version_info__"]

# Keep in step with pyproject.toml (tests/toplevel/test_stages_dlpack.py checks that).
_version = "0.1.0"
__version__ = _version

# The oldest jaxlib funcad's jit runs on (funcad/lowering/xla.py's SUPPORTED_JAXLIB).
_minimum_jaxlib_version = "0.6.0"


def _version_as_tuple(version_str: str) -> tuple:
    """The numeric parts of a version string: "0.12.0.1" -> (0, 12, 0, 1) (JAX's rule:
    parts that are not all digits, such as "dev2024", are left out)."""
    return tuple(int(i) for i in version_str.split(".") if i.isdigit())


@functools.lru_cache(maxsize=None)
def installed_jaxlib_version() -> str:
    """The installed jaxlib's version string, read from its metadata (jaxlib is not imported)."""
    return importlib.metadata.version("jaxlib")


__version_info__ = _version_as_tuple(__version__)
_minimum_jaxlib_version_info = _version_as_tuple(_minimum_jaxlib_version)
