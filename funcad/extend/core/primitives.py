"""funcad's primitives under JAX's names (`add_p`, `sin_p`, ...)."""
from .._primitives import *  # noqa: F401,F403 (every primitive by its name)
from .._primitives import __all__


def __getattr__(name: str):
    if name.endswith("_p"):
        raise AttributeError(f"funcad has no primitive `{name}`; funcad.extend.core.primitives "
                             "lists the ones it has")
    raise AttributeError(name)
