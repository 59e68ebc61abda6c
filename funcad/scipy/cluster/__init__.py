"""funcad.scipy.cluster: vector quantization (funcad.scipy.cluster.vq), as JAX's."""
from . import vq  # noqa: F401

__all__ = ["vq"]
