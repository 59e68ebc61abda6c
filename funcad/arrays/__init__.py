"""The array operations that `funcad.lax` and `funcad.numpy` share, below both (internal;
the public names are funcad.numpy's): dtype promotion and conversion of user values
(dtypes), shape manipulation (shape, manip), indexing, ufuncs, reductions, creation,
linear-algebra products, sets, statistics, complex parts, device placement, and the
precision arguments of products (precision). They use core, primitives and transforms only.
"""
