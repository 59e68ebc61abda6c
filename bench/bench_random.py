"""funcad.random vs jax.random, side by side: jit normal of 10^7 and eager normal of 10^6."""
import time

import numpy as np


def _best(f, n=5):
    f()
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return min(ts)


def main():
    import jax
    import jax.random as jr
    import funcad
    import funcad.random as fr
    jax.config.update("jax_enable_x64", True)
    k, kj = fr.PRNGKey(0), jr.PRNGKey(0)
    for dt in (np.float32, np.float64):
        ff = funcad.jit(lambda k: fr.normal(k, (10_000_000,), dt))
        fj = jax.jit(lambda k: jr.normal(k, (10_000_000,), dt))
        tf = _best(lambda: ff(k).block_until_ready())
        tj = _best(lambda: fj(kj).block_until_ready())
        print(f"jit normal 1e7 {np.dtype(dt).name}: funcad {tf * 1e3:.1f} ms, jax {tj * 1e3:.1f} ms, ratio {tf / tj:.2f}")
    for dt in (np.float32, np.float64):
        tf = _best(lambda: fr.normal(k, (1_000_000,), dt).block_until_ready())
        tj = _best(lambda: jr.normal(kj, (1_000_000,), dt).block_until_ready())
        print(f"eager normal 1e6 {np.dtype(dt).name}: funcad {tf * 1e3:.1f} ms, jax {tj * 1e3:.1f} ms, ratio {tf / tj:.2f}")


if __name__ == "__main__":
    main()
