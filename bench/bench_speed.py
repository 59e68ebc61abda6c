"""The speed guard (issue 33): eager overhead against NumPy, eager derivatives against
HIPS autograd, eager control flow and compiled calls against JAX and the cold start, in
one run; the table goes into docs/benchmarks.md (between the `bench_speed` markers) with
the machine and versions. `make bench` runs it.

    .venv/bin/python bench/bench_speed.py [--quick] [--no-write]

Every comparison alternates the two libraries in one process (`_timing.best_of`) and keeps
each one's best loop, so that the load of a shared machine hits both alike. Eager overheads
are CPU time of this process; everything else is wall time. The eager Gaussian-process
row is measured twice: with OpenBLAS's threads as they come and with one thread
(NumPy and SciPy each bring their own OpenBLAS with its own thread pool; on 2 busy cores
the pools' spinning threads slow both libraries' LAPACK calls by 5-20x, erratically).
The eager MLP row is measured twice too: as malloc comes, and with glibc's malloc keeping
large arrays in its heap (autograd's time otherwise depends on page faults, see there).
"""
from __future__ import annotations

import datetime
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _models import logistic, logistic_data, mlp_data, mlp_loss, rosenbrock, scan_loss  # noqa: E402
from _timing import best_of  # noqa: E402
import funcad  # noqa: E402
import funcad.numpy as fnp  # noqa: E402

DOC = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- bench_speed: begin -->", "<!-- bench_speed: end -->"


def _pair(fns, quick, sync=None, number=None):
    return best_of(fns, repeat=3 if quick else 7, number=number, min_time=0.1 if quick else 0.2, sync=sync)


# ------------------------------------------------------------------ eager ----

def eager_overhead(quick):
    """(label, funcad µs, NumPy µs, goal) per call, on float64[3]."""
    x = np.ones(3)
    e = fnp.asarray(x)
    cases = [("`e * 2.0`", lambda: e * 2.0, lambda: x * 2.0),
             ("`fnp.multiply(e, 2.0)`", lambda: fnp.multiply(e, 2.0), lambda: np.multiply(x, 2.0)),
             ("`fnp.sin(e)`", lambda: fnp.sin(e), lambda: np.sin(x)),
             ("`e + e`", lambda: e + e, lambda: x + x)]
    rows = []
    for label, f, g in cases:
        t_f, t_g = best_of([f, g], repeat=5 if quick else 15, number=20000, timer=time.process_time)
        rows.append((label, t_f * 1e6, t_g * 1e6, "≤ NumPy + 1 µs", t_f - t_g <= 1e-6))
    t_f, t_g = best_of([lambda: fnp.sum(fnp.sin(x) * 2.0 + 1.0), lambda: np.sum(np.sin(x) * 2.0 + 1.0)],
                       repeat=5 if quick else 15, number=20000, timer=time.process_time)
    rows.append(("`fnp.sum(fnp.sin(x) * 2.0 + 1.0)`", t_f * 1e6, t_g * 1e6, "≤ 12 µs", t_f <= 12e-6))
    return rows


def gp_times(quick):
    """Seconds per eager `grad` of the Gaussian-process NLL at n = 200: funcad, autograd."""
    import autograd
    import autograd.numpy as anp
    import autograd.scipy.linalg as asl
    import funcad.scipy.linalg as fsl
    from bench_linalg import data, nlml
    p, x, y = data(200)
    gp_f, gp_a = funcad.grad(nlml(fnp, fsl.solve_triangular)), autograd.grad(nlml(anp, asl.solve_triangular))
    np.testing.assert_allclose(gp_f(p, x, y), gp_a(p, x, y), rtol=1e-8)
    return _pair([lambda: gp_f(p, x, y), lambda: gp_a(p, x, y)], quick)


def _at_depth(depth: int, fn):
    """fn() called `depth` Python frames deeper. CPython (3.11+) keeps frames in 16 KB
    chunks and frees a chunk as soon as the stack leaves it, so code whose calls go back
    and forth across a chunk's end runs several times slower: how fast deeply nested
    code runs depends on the depth it is called from."""
    return fn() if depth == 0 else _at_depth(depth - 1, fn)


def mlp_times(quick):
    """Seconds per eager `grad` of the 784-512-512-10 MLP at batch 128: funcad, autograd."""
    import autograd
    import autograd.numpy as anp
    params, xb, yb = mlp_data()
    m_f, m_a = funcad.grad(mlp_loss(fnp)), autograd.grad(mlp_loss(anp))
    return _pair([lambda: m_f(params, xb, yb), lambda: m_a(params, xb, yb)], quick)


def eager_ad(quick):
    """(label, funcad ms, autograd ms, goal) for the eager derivatives."""
    import autograd
    import autograd.numpy as anp
    from bench_ad import nth
    rows = []
    d5_f, d5_a = nth(funcad.grad, fnp.tanh, 5), nth(autograd.grad, anp.tanh, 5)
    assert abs(d5_f(0.3) - d5_a(0.3)) < 1e-9 * abs(d5_a(0.3))
    depths = range(0, 16, 5 if quick else 1)
    times = [_at_depth(d, lambda: _pair([lambda: d5_f(0.3), lambda: d5_a(0.3)], True)) for d in depths]
    ratios = [f / a for f, a in times]
    rows.append((f"5th derivative of `tanh` at a scalar, median over caller stack depths "
                 f"{depths[0]}–{depths[-1]} (ratio {min(ratios):.2f}–{max(ratios):.2f})",
                 statistics.median(f for f, _ in times), statistics.median(a for _, a in times), 0.5))
    rows.append(("`grad` Gaussian-process NLL, n = 200, OpenBLAS threads as they come", *gp_times(quick), 1.0))
    if os.environ.get("OPENBLAS_NUM_THREADS") != "1":  # the same in a process with one thread
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
        code = (f"import sys; sys.path[:0] = [{str(ROOT / 'bench')!r}]; import bench_speed; "
                f"print(*bench_speed.gp_times({quick}))")
        t_f, t_a = map(float, subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                             capture_output=True, text=True).stdout.split()[-2:])
        rows.append(("`grad` Gaussian-process NLL, n = 200, one OpenBLAS thread", t_f, t_a, 1.0))
    rows.append(("`grad` MLP 784-512-512-10, batch 128, f32", *mlp_times(quick), 0.5))
    # The same with glibc's malloc taking large arrays from its heap, not from fresh mmap'd
    # pages: autograd sums gradients into new np.zeros in place, and each first touch of a
    # fresh page faults, so its time swings 2-3x with malloc's adaptive mmap threshold.
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="4294967295", MALLOC_TRIM_THRESHOLD_="4294967295")
    code = (f"import sys; sys.path[:0] = [{str(ROOT / 'bench')!r}]; import bench_speed; "
            f"print(*bench_speed.mlp_times({quick}))")
    t_f, t_a = map(float, subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                         capture_output=True, text=True).stdout.split()[-2:])
    rows.append(("`grad` MLP, as above, large arrays from malloc's heap (no page faults)", t_f, t_a, 0.5))
    return [(label, f * 1e3, a * 1e3, f"≤ {goal}× autograd", f / a <= goal) for label, f, a, goal in rows]


def eager_control_flow(quick):
    """(label, funcad, JAX) per eager call of a scan, a cond and a while_loop: each compiles
    its body through XLA once, and a repeated call with the same function reuses it."""
    import jax
    import jax.lax as jl
    import funcad.lax as fl
    xs, x = np.linspace(0.0, 1.0, 100, dtype=np.float32), np.float32(0.5)

    def programs(L, np_):
        step = lambda c, v: (np_.sin(c) + v, c * 2.0)  # noqa: E731
        branches = (lambda v: np_.sin(v), lambda v: np_.cos(v))
        cond_fun, body_fun = (lambda v: v < 10.0), (lambda v: v * 1.5 + 0.1)
        return [lambda: L.scan(step, x, xs), lambda: L.cond(x > 0, *branches, x),
                lambda: L.while_loop(cond_fun, body_fun, x)]
    rows = []
    labels = ("`lax.scan`, 100 steps of a f32 scalar", "`lax.cond` on a f32 scalar",
              "`lax.while_loop`, 7 steps of a f32 scalar")
    for label, f, j in zip(labels, programs(fl, fnp), programs(jl, jax.numpy)):
        for u, v in zip(jax.tree_util.tree_leaves(f()), jax.tree_util.tree_leaves(j())):
            np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=1e-5)
        rows.append((label, *_pair([f, j], quick, sync=jax.block_until_ready)))
    return rows


# --------------------------------------------------------------- compiled ----

def compiled(quick):
    """(label, funcad, JAX, goal) per call of the issue's compiled programs."""
    import jax
    import jax.numpy as jnp
    import funcad.lax as flax
    import funcad.scipy.linalg as fsl
    import jax.scipy.linalg as jsl
    from bench_cnn import bench_cnn
    from bench_linalg import data, nlml
    rows = []

    def row(label, f, j, args_f, args_j, number=None):
        a, b = f(*args_f), j(*args_j)
        for u, v in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
            np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=2e-3, atol=1e-4)
        t_f, t_j = _pair([lambda: f(*args_f), lambda: j(*args_j)], quick, number=number,
                         sync=jax.block_until_ready)
        rows.append((label, t_f, t_j))

    on_f, on_j = funcad.device_put, jax.device_put
    s32 = np.float32(3.0)
    row("tiny `jit(lambda x: x * 2.0 + 1.0)`, NumPy f32 scalar", funcad.jit(lambda v: v * 2.0 + 1.0),
        jax.jit(lambda v: v * 2.0 + 1.0), (s32,), (s32,), number=1000)
    lg = [on_f(a) for a in logistic_data()], [on_j(a) for a in logistic_data()]
    row("`jit(vmap(grad(logistic loss)))`, 1000×100 f32",
        funcad.jit(funcad.vmap(funcad.grad(logistic(fnp)), in_axes=(None, 0, 0))),
        jax.jit(jax.vmap(jax.grad(logistic(jnp)), in_axes=(None, 0, 0))), *lg, number=50)
    r = np.linspace(-1, 1, 200, dtype=np.float32)
    row("`jit(hessian)` Rosenbrock 200-d f32", funcad.jit(funcad.hessian(rosenbrock(fnp))),
        jax.jit(jax.hessian(rosenbrock(jnp))), (on_f(r),), (on_j(r),), number=50)
    params, xb, yb = mlp_data()
    row("`jit(grad)` MLP 784-512-512-10, batch 128, f32", funcad.jit(funcad.grad(mlp_loss(fnp))),
        jax.jit(jax.grad(mlp_loss(jnp))), on_f((params, xb, yb)), on_j((params, xb, yb)), number=10)
    w, xs = np.float32(0.9), np.random.default_rng(0).standard_normal((10**5, 4)).astype(np.float32)
    row("`jit(grad(scan))`, 10⁵ steps of a 4-vector, f32", funcad.jit(funcad.grad(scan_loss(fnp, flax.scan))),
        jax.jit(jax.grad(scan_loss(jnp, jax.lax.scan))), (w, on_f(xs)), (w, on_j(xs)), number=3)
    p, x, y = data(1000)
    row("`jit(grad)` Gaussian-process NLL, n = 1000, f64",
        funcad.jit(funcad.grad(nlml(fnp, fsl.solve_triangular))), jax.jit(jax.grad(nlml(jnp, jsl.solve_triangular))),
        on_f((p, x, y)), on_j((p, x, y)), number=2)
    t_f, t_j = bench_cnn(3 if quick else 5)
    rows.append(("`jit(grad)` CNN, 2× conv3×3/32ch, 64×28×28, f32", t_f, t_j))
    return rows


def cold_start(quick):
    from bench_coldstart import TINY, _env, side_by_side
    res = side_by_side(TINY, 3 if quick else 7, _env())
    return statistics.median(res["funcad"][0]), statistics.median(res["jax"][0])


# ------------------------------------------------------------------ table ----

def _fmt(t):
    return f"{t * 1e3:.2f} ms" if t >= 1e-3 else f"{t * 1e6:.1f} µs"


def _machine() -> str:
    import jax
    import jaxlib
    cpu = platform.processor() or platform.machine()
    try:
        cpu = re.search(r"model name\s*:\s*(.*)", Path("/proc/cpuinfo").read_text()).group(1)
    except (OSError, AttributeError):
        pass
    try:
        import autograd
        ag = getattr(autograd, "__version__", None) or subprocess.run(
            [sys.executable, "-m", "pip", "show", "autograd"], capture_output=True, text=True
        ).stdout.split("Version: ")[1].split()[0]
    except (ImportError, IndexError):
        ag = "not installed"
    return (f"{cpu}, {os.cpu_count()} cores (load average {os.getloadavg()[0]:.1f} at the end); "
            f"Python {platform.python_version()}, NumPy {np.__version__}, jax {jax.__version__}, "
            f"jaxlib {jaxlib.__version__}, autograd {ag}; "
            f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC")


def table(quick) -> str:
    import jax
    jax.config.update("jax_enable_x64", True)  # the GP is float64; the other programs are float32
    out = ["### Eager overhead against NumPy (float64[3], CPU time per call)", "",
           "| op | funcad | NumPy | overhead | goal | met |", "| --- | --- | --- | --- | --- | --- |"]
    for label, f, g, goal, ok in eager_overhead(quick):
        out.append(f"| {label} | {f:.2f} µs | {g:.2f} µs | {f - g:.2f} µs | {goal} | {'yes' if ok else 'no'} |")
    out += ["", "### Eager derivatives against HIPS autograd", "",
            "| workload | funcad | autograd | ratio | goal | met |", "| --- | --- | --- | --- | --- | --- |"]
    for label, f, a, goal, ok in eager_ad(quick):
        out.append(f"| {label} | {f:.2f} ms | {a:.2f} ms | {f / a:.2f}× | {goal} | {'yes' if ok else 'no'} |")
    out += ["", "### Eager control flow against JAX (a repeated call of the same function)", "",
            "| workload | funcad | JAX | ratio | goal | met |", "| --- | --- | --- | --- | --- | --- |"]
    for label, f, j in eager_control_flow(quick):
        out.append(f"| {label} | {_fmt(f)} | {_fmt(j)} | {f / j:.2f}× | ≤ 1.0× | {'yes' if f <= j else 'no'} |")
    out += ["", "### Compiled calls against JAX (steady state, results synchronised)", "",
            "| workload | funcad | JAX | ratio | goal | met |", "| --- | --- | --- | --- | --- | --- |"]
    for label, f, j in compiled(quick):
        out.append(f"| {label} | {_fmt(f)} | {_fmt(j)} | {f / j:.2f}× | ≤ 1.0× | {'yes' if f <= j else 'no'} |")
    f, j = cold_start(quick)
    out.append(f"| cold start: a fresh `python -c` importing and making the first tiny jit call, median | "
               f"{_fmt(f)} | {_fmt(j)} | {f / j:.2f}× | ≤ 1.2× | {'yes' if f <= 1.2 * j else 'no'} |")
    out += ["", f"Machine: {_machine()}." + (" (`--quick`: fewer repeats.)" if quick else "")]
    return "\n".join(out)


def write(text: str) -> None:
    doc = DOC.read_text()
    block = f"{BEGIN}\n{text}\n{END}"
    if BEGIN in doc:
        doc = doc[:doc.index(BEGIN)] + block + doc[doc.index(END) + len(END):]
    else:
        doc = doc.rstrip("\n") + "\n\n## The speed guard (issue 33): `bench/bench_speed.py`\n\n" + block + "\n"
    DOC.write_text(doc)


def main(argv) -> None:
    text = table("--quick" in argv)
    print(text)
    if "--no-write" not in argv:
        write(text)
        print(f"\nwritten into {DOC.relative_to(ROOT)}")


if __name__ == "__main__":
    main(sys.argv[1:])
