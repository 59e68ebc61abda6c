"""Listeners for the events funcad records (JAX's monitoring namespace).

funcad reports each XLA compilation as the duration event
``/jax/core/compile/backend_compile_duration``, as JAX does.

>>> import funcad, funcad.numpy as jnp
>>> seen = []
>>> def listener(event, secs, **kw): seen.append(event)
>>> funcad.monitoring.register_event_duration_secs_listener(listener)
>>> _ = funcad.jit(lambda x: x * 7.25 + 1)(jnp.ones(3))
>>> "/jax/core/compile/backend_compile_duration" in seen
True
>>> funcad.monitoring.unregister_event_duration_listener(listener)
"""
from .core.monitoring import (clear_event_listeners, record_event, record_event_duration_secs,
                              record_event_time_span, record_scalar,
                              register_event_duration_secs_listener, register_event_listener,
                              register_event_time_span_listener, register_scalar_listener,
                              unregister_event_duration_listener, unregister_event_listener,
                              unregister_event_time_span_listener, unregister_scalar_listener)

__all__ = ["clear_event_listeners", "record_event", "record_event_duration_secs",
           "record_event_time_span", "record_scalar", "register_event_duration_secs_listener",
           "register_event_listener", "register_event_time_span_listener",
           "register_scalar_listener", "unregister_event_duration_listener",
           "unregister_event_listener", "unregister_event_time_span_listener",
           "unregister_scalar_listener"]
