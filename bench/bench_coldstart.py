"""Cold start, side by side with JAX (issue 12, part 3): whole fresh processes.

    .venv/bin/python bench/bench_coldstart.py [--runs 9]

1. tiny: `python -c "import funcad, funcad.numpy as fnp; f = funcad.jit(lambda x:
   x * 2.0 + 1.0); f(fnp.ones(3)).block_until_ready()"` against the same with
   jax (target: within 1.2x of JAX)
2. mlp: import, then the first call (trace + compile + run) of jit(grad) of the
   784-512-512-10 MLP loss at batch 128, float32, on the same NumPy data

Each process is timed from outside (interpreter start to exit), in wall time
and in CPU time (user + system, all threads: steadier than wall time on a busy
machine); the MLP processes also report their first call, with and without
funcad's deferred import of jax/jaxlib. funcad and JAX runs alternate,
so a change in the machine's load hits both alike, and the medians are
printed. Bytecode is written and one untimed run of each warms the caches
first, as on a user's machine after the first import (an environment with
PYTHONDONTWRITEBYTECODE=1 would otherwise recompile funcad's sources in every
run, while jax's installed .pyc files are used).
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

TINY = {
    "funcad": "import funcad, funcad.numpy as fnp; f = funcad.jit(lambda x: x * 2.0 + 1.0); "
              "f(fnp.ones(3)).block_until_ready()",
    "jax": "import jax, jax.numpy as jnp; f = jax.jit(lambda x: x * 2.0 + 1.0); "
           "f(jnp.ones(3)).block_until_ready()",
}

_MLP = """
import sys, time
sys.path.insert(0, {bench!r})
from _models import mlp_data, mlp_loss
import {m} as F, {m}.numpy as N
params, x, y = mlp_data()
t0 = time.perf_counter()
{load}
t1 = time.perf_counter()
F.jit(F.grad(mlp_loss(N)))(params, x, y)[-1][0].block_until_ready()
t2 = time.perf_counter()
print(t2 - t0, t2 - t1)
"""
# funcad imports jax/jaxlib on its first jitted call; the MLP program times that
# import apart (the first call is then trace + lower + compile + run, as JAX's).
MLP = {"funcad": _MLP.format(bench=str(ROOT / "bench"), m="funcad",
                             load="from funcad.lowering import xla; xla._load()"),
       "jax": _MLP.format(bench=str(ROOT / "bench"), m="jax", load="pass")}


def _env() -> dict:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


def run_once(code: str, env: dict) -> tuple[float, float, str]:
    """Wall seconds and CPU seconds (user + system, all threads) of one fresh
    `python -c code`, and its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True,
                         text=True, cwd=ROOT)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out.stdout


def side_by_side(progs: dict, runs: int, env: dict) -> dict:
    """Per program name: (wall times, CPU times, and the last two numbers each
    printed) of its processes, the programs alternating."""
    for code in progs.values():
        run_once(code, env)  # write bytecode, warm the file cache
    res = {name: ([], [], [], []) for name in progs}
    for _ in range(runs):
        for name, code in progs.items():
            wall, cpu, out = run_once(code, env)
            res[name][0].append(wall)
            res[name][1].append(cpu)
            for i, v in enumerate(out.split()[-2:]):
                res[name][2 + i].append(float(v))
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9)
    args = ap.parse_args()
    env = _env()
    rows = []
    tiny = side_by_side(TINY, args.runs, env)
    rows.append(("tiny jit, whole process: wall", tiny["funcad"][0], tiny["jax"][0], 1.2))
    rows.append(("tiny jit, whole process: CPU", tiny["funcad"][1], tiny["jax"][1], None))
    mlp = side_by_side(MLP, args.runs, env)
    rows.append(("MLP jit(grad), whole process: wall", mlp["funcad"][0], mlp["jax"][0], None))
    rows.append(("MLP jit(grad), whole process: CPU", mlp["funcad"][1], mlp["jax"][1], None))
    rows.append(("MLP first call, with funcad's jax import", mlp["funcad"][2], mlp["jax"][2], None))
    rows.append(("MLP first call: trace+lower+compile+run", mlp["funcad"][3], mlp["jax"][3], None))

    print(f"{'cold start (median of ' + str(args.runs) + ' runs)':40s} {'funcad':>9s} {'jax':>9s} "
          f"{'ratio':>6s} {'target':>7s}")
    for name, a, b, target in rows:
        ma, mb = statistics.median(a), statistics.median(b)
        flag = "" if target is None else ("<=" + str(target) + (" ok" if ma / mb <= target else " SLOW"))
        print(f"{name:40s} {ma * 1e3:6.0f} ms {mb * 1e3:6.0f} ms {ma / mb:6.2f} {flag:>7s}")
    import jax
    print(f"jax {jax.__version__}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
