"""Where libraries register the rules of their primitives (JAX's `interpreters`
namespace): `ad` (jvp and transpose), `batching` (vmap), `mlir` (lowering) and
`partial_eval` (staging). Every table here is a view of funcad's own rule table,
with JAX's calling conventions adapted onto funcad's."""
from . import ad, batching, mlir, partial_eval

__all__ = ["ad", "batching", "mlir", "partial_eval"]
