"""Transformations: jvp, linearize, transpose, vjp/grad, vmap, jacobians, jit,
custom derivatives, checkpointing, and the jaxpr optimisation passes."""
