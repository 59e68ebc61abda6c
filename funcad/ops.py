"""`jax.ops`: reductions over segments of an array's leading axis.

Each is one scatter into an array filled with the reduction's identity, as JAX's: the
`funcad.lax` scatters with dimension numbers, so derivatives, batching and lowering come
from them. segment_max/min carry JAX's derivative convention as a custom_jvp (rows tied
at a segment's extreme share its tangent equally). With `bucket_size` the rows are first scattered into one row of partial
results per bucket, then reduced across buckets (shorter sums, for accuracy).

>>> import numpy as np, funcad.ops
>>> funcad.ops.segment_sum(np.arange(5.0), np.array([0, 0, 1, 1, 2])).tolist()
[1.0, 5.0, 4.0]
"""
from .numpy._segment import segment_max, segment_min, segment_prod, segment_sum

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]
