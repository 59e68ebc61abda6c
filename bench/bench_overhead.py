"""Eager dispatch overhead: funcad.numpy op vs the NumPy call it wraps.

With no transformation active, `fnp.sin(x)` should be NumPy's `sin` plus one
dispatch. This prints the per-call time of both and the difference.

    .venv/bin/python bench/bench_overhead.py
"""
from __future__ import annotations

import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # run from a checkout
import funcad.numpy as fnp  # noqa: E402
from _timing import best_of  # noqa: E402


def per_call_us(fns, args, number=20000, repeat=15) -> list[float]:
    """Best-of-`repeat` time per call in microseconds for each of `fns`: CPU time of this
    process, measured in alternation, so that other processes' load affects them alike."""
    calls = [lambda fn=fn: fn(*args) for fn in fns]
    return [t * 1e6 for t in best_of(calls, repeat=repeat, number=number, timer=time.process_time,
                                     warmup=False)]


CASES = [
    # (label, funcad function, numpy function, args)
    ("sin f64[3]", fnp.sin, np.sin, (np.ones(3),)),
    ("sin f32[3]", fnp.sin, np.sin, (np.ones(3, np.float32),)),
    ("sin f64[] (0-d array)", fnp.sin, np.sin, (np.array(0.5),)),
    ("sin python float", fnp.sin, np.sin, (0.5,)),
    ("sin f64[100,100]", fnp.sin, np.sin, (np.ones((100, 100)),)),
    ("exp f64[3]", fnp.exp, np.exp, (np.ones(3),)),
    ("add f64[3] f64[3]", fnp.add, np.add, (np.ones(3), np.ones(3))),
    ("multiply f32[3] * 2.0", fnp.multiply, np.multiply, (np.ones(3, np.float32), 2.0)),
    ("add f32[3] f64[3]", fnp.add, np.add, (np.ones(3, np.float32), np.ones(3))),
    ("maximum f64[3] 0.0", fnp.maximum, np.maximum, (np.ones(3), 0.0)),
    ("sum f64[3]", fnp.sum, np.sum, (np.ones(3),)),
    ("matmul f64[3,3]", fnp.matmul, np.matmul, (np.ones((3, 3)), np.ones((3, 3)))),
]


def main() -> None:
    print(f"{'op':<26}{'numpy µs':>10}{'funcad µs':>11}{'overhead µs':>13}")
    for label, f, g, args in CASES:
        t_np, t_fa = per_call_us([g, f], args)
        print(f"{label:<26}{t_np:>10.2f}{t_fa:>11.2f}{t_fa - t_np:>13.2f}")


if __name__ == "__main__":
    main()
