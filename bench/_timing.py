"""The one timer the benchmarks share: best-of-N loops, interleaved.

`best_of([f, g])` times loops of calls of f and of g in alternating rounds, so
that a change in the machine's load (it is often shared) hits them alike, and
keeps each function's best loop: the least disturbed measurement.
"""
from __future__ import annotations

import time
from typing import Callable, Sequence


def _calibrate(fn: Callable, min_time: float, timer: Callable) -> int:
    """A number of calls of `fn` that takes about `min_time` seconds."""
    n = 1
    while True:
        t0 = timer()
        for _ in range(n):
            fn()
        t = timer() - t0
        if t >= min_time / 5:
            return max(1, int(n * min_time / max(t, 1e-9)))
        n *= 2


def best_of(fns: Sequence[Callable], *, repeat: int = 15, number: int | None = 1,
            min_time: float = 0.2, timer: Callable = time.perf_counter,
            sync: Callable | None = None, setup: Callable | None = None,
            warmup: bool = True) -> list[float]:
    """Seconds per call of each of `fns` (callables of no arguments): the best of
    `repeat` rounds, each round timing `number` calls of every function in turn.

    number=None picks per function a count of calls lasting about `min_time`.
    `sync(result)` runs on each loop's last result inside the timing (to wait for
    asynchronous work); `setup()` runs untimed before every loop; `warmup` calls
    each function once first (caches, compilation). `timer=time.process_time`
    counts this process's CPU time only.

    >>> best_of([lambda: sum(range(10))], repeat=3, number=10)[0] < 1.0
    True
    """
    if warmup:
        for fn in fns:
            fn()
    numbers = [number or _calibrate(fn, min_time, timer) for fn in fns]
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, (fn, n) in enumerate(zip(fns, numbers)):
            if setup is not None:
                setup()
            t0 = timer()
            for _ in range(n):
                out = fn()
            if sync is not None:
                sync(out)
            best[i] = min(best[i], (timer() - t0) / n)
    return best
