"""Listeners for events, durations and scalars (JAX's public monitoring API).

It lives in core, below the lowering, so that the compiler can report its
compile times with the event names JAX uses.
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Callable, Iterator

_event: list = []          # f(event, **kwargs)
_duration: list = []       # f(event, duration_secs, **kwargs)
_time_span: list = []      # f(event, start_time, end_time, **kwargs)
_scalar: list = []         # f(event, value, **kwargs)

# the durations JAX reports for each compilation (with fun_name=), under JAX's names
JAXPR_TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"
JAXPR_TO_MLIR_MODULE_EVENT = "/jax/core/compile/jaxpr_to_mlir_module_duration"
BACKEND_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


def record_event(event: str, **kwargs: str | int) -> None:
    """Tell every event listener that `event` happened."""
    for f in list(_event):
        f(event, **kwargs)


def record_event_duration_secs(event: str, duration: float, **kwargs: str | int) -> None:
    """Tell every duration listener that `event` took `duration` seconds."""
    for f in list(_duration):
        f(event, duration, **kwargs)


def record_event_time_span(event: str, start_time: float, end_time: float, **kwargs: str | int) -> None:
    """Tell every time-span listener that `event` ran from `start_time` to `end_time`."""
    for f in list(_time_span):
        f(event, start_time, end_time, **kwargs)


def record_scalar(event: str, value: float | int, **kwargs: str | int) -> None:
    """Tell every scalar listener the value `value` of `event`."""
    for f in list(_scalar):
        f(event, value, **kwargs)


def timing() -> bool:
    """Whether any duration or time-span listener is registered."""
    return bool(_duration or _time_span)


def record_duration(event: str, start: float, **kwargs) -> None:
    """Record the time since `start` (a time.perf_counter() reading) as `event`'s
    duration and time span."""
    elapsed = time.perf_counter() - start
    now = time.time()
    record_event_duration_secs(event, elapsed, **kwargs)
    record_event_time_span(event, now - elapsed, now, **kwargs)


@contextmanager
def timed(event: str, **kwargs) -> Iterator[None]:
    """Record the block's wall time as `event`'s duration and time span."""
    if not timing():  # free when nobody listens
        yield
        return
    start = time.perf_counter()
    yield
    record_duration(event, start, **kwargs)


def register_event_listener(callback: Callable[..., None]) -> None:
    """Call `callback(event, **kwargs)` for each recorded event.

    >>> from funcad import monitoring
    >>> seen = []
    >>> def listener(event, **kwargs):
    ...     seen.append(event)
    >>> monitoring.register_event_listener(listener)
    >>> monitoring.record_event("/my/event")
    >>> seen
    ['/my/event']
    >>> monitoring.unregister_event_listener(listener)
    """
    _event.append(callback)


def register_event_duration_secs_listener(callback: Callable[..., None]) -> None:
    """Call `callback(event, duration_secs, **kwargs)` for each recorded duration (jit
    reports JAX's three compile durations).

    >>> from funcad import monitoring
    >>> seen = []
    >>> def listener(event, duration, **kwargs):
    ...     seen.append((event, duration))
    >>> monitoring.register_event_duration_secs_listener(listener)
    >>> monitoring.record_event_duration_secs("/my/step", 0.5)
    >>> seen
    [('/my/step', 0.5)]
    >>> monitoring.unregister_event_duration_listener(listener)
    """
    _duration.append(callback)


def register_event_time_span_listener(callback: Callable[..., None]) -> None:
    """Call `callback(event, start_time, end_time, **kwargs)` for each recorded time span.

    >>> from funcad import monitoring
    >>> seen = []
    >>> def listener(event, start, end, **kwargs):
    ...     seen.append(end - start)
    >>> monitoring.register_event_time_span_listener(listener)
    >>> monitoring.record_event_time_span("/my/span", 1.0, 3.5)
    >>> seen
    [2.5]
    >>> monitoring.unregister_event_time_span_listener(listener)
    """
    _time_span.append(callback)


def register_scalar_listener(callback: Callable[..., None]) -> None:
    """Call `callback(event, value, **kwargs)` for each recorded scalar.

    >>> from funcad import monitoring
    >>> seen = []
    >>> def listener(event, value, **kwargs):
    ...     seen.append((event, value, kwargs))
    >>> monitoring.register_scalar_listener(listener)
    >>> monitoring.record_scalar("/my/loss", 0.25, step=3)
    >>> seen
    [('/my/loss', 0.25, {'step': 3})]
    >>> monitoring.unregister_scalar_listener(listener)
    """
    _scalar.append(callback)


def _unregister(listeners: list, callback, kind: str) -> None:
    if callback not in listeners:
        raise AssertionError(f"{callback!r} is not a registered {kind} listener; register it first "
                             f"with register_{kind}_listener")
    listeners.remove(callback)


def unregister_event_listener(callback: Callable[..., None]) -> None:
    """Stop calling an event listener; AssertionError if it is not registered, as JAX's."""
    _unregister(_event, callback, "event")


def unregister_event_duration_listener(callback: Callable[..., None]) -> None:
    """Stop calling a duration listener; AssertionError if it is not registered, as JAX's."""
    _unregister(_duration, callback, "event_duration_secs")


def unregister_event_time_span_listener(callback: Callable[..., None]) -> None:
    """Stop calling a time-span listener; AssertionError if it is not registered, as JAX's."""
    _unregister(_time_span, callback, "event_time_span")


def unregister_scalar_listener(callback: Callable[..., None]) -> None:
    """Stop calling a scalar listener; AssertionError if it is not registered, as JAX's."""
    _unregister(_scalar, callback, "scalar")


def clear_event_listeners() -> None:
    """Remove every listener of every kind."""
    for listeners in (_event, _duration, _time_span, _scalar):
        listeners.clear()
