"""The explain_cache_misses option against JAX's: the explanation of each tracing cache miss in
JAX's words, static arguments and keyword names, and no explanation for funcad's own calls."""
from __future__ import annotations

import logging

import jax
import jax.numpy as jnp
import numpy as np

import funcad
import funcad.numpy as fnp

# funcad writes JAX 0.12's texts; older JAX words some messages differently
JAX_TEXTS = tuple(int(p) for p in jax.__version__.split(".")[:2]) >= (0, 12)


def _misses(caplog, logger, run) -> list[str]:
    """The explanation lines of each TRACING CACHE MISS record, without the call site
    and function-id lines (which differ between the two libraries' calls)."""
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger=logger):
        run()
    out = []
    for r in caplog.records:
        msg = r.getMessage()
        if msg.startswith("TRACING CACHE MISS"):
            lines = msg.split("\n")[1:]
            out.append("\n".join(l for l in lines if " id=" not in l and "defined at" not in l))
    return out


def _scenario(lib, np_mod):
    def run():
        @lib.jit
        def f(x, y):
            return x
        f(np.ones(3, np.float32), {"a": 1.0})
        f(np.ones(3, np.float32), {"a": 1.0})  # a hit: nothing logged
        f(np.ones(3, np.int32), {"a": 1.0})
        f(np.ones(3, np.int32), {"b": 1.0})
        f(np.ones(3, np.int32), [1.0])
        f(np.float32(1.0), {"a": 1.0})
        with lib.default_matmul_precision("float32"):
            f(np.ones(3, np.float32), {"a": 1.0})
        f(np.ones(3, np.float32), {"a": np.float32(1.0)})
    return run


def test_explain_cache_misses_in_jaxs_words(caplog):
    with jax.explain_cache_misses(True):
        want = _misses(caplog, "jax", _scenario(jax, jnp))
    with funcad.explain_cache_misses(True), funcad.enable_x64(False):
        got = _misses(caplog, "funcad", _scenario(funcad, fnp))
    assert len(got) == 7 and got[0] == "  never seen function:"
    if JAX_TEXTS:
        assert got == want
    assert got[2].endswith("different input pytree:\n  * at input path [0][1], now <class 'dict'> with "
                           "pytree metadata ('b',) and before <class 'dict'> with pytree metadata "
                           "('a',), so the pytree node metadata does not match")
    assert got[1].endswith("different input types:\n  * at x, now i32[3] and before f32[3]")
    with funcad.enable_x64(False):  # off: nothing logged
        assert _misses(caplog, "funcad", _scenario(funcad, fnp)) == []


def test_explain_static_arguments_and_keyword_names(caplog):
    g = funcad.jit(lambda x, n, *rest, scale=1.0: x * n, static_argnums=1)
    with funcad.explain_cache_misses(True):
        got = _misses(caplog, "funcad", lambda: (g(1.0, 2), g(1.0, 3), g(1.0, 3, np.ones(2), scale=2.0),
                                                  g(1.0, 3, np.ones(3), scale=np.ones(2))))
    assert got[1].endswith("different static arguments:\n  * at argument 1, now 3 and before 2")
    assert "* at input path [0], now tuple of length 2 and before tuple of length 1" in got[2]
    h = funcad.jit(lambda x, *rest, scale=1.0: x)
    with funcad.explain_cache_misses(True):
        got = _misses(caplog, "funcad", lambda: (h(1.0, np.ones(2), scale=2.0),
                                                  h(1.0, np.ones(3), scale=np.ones(2))))
    assert got[1].endswith("different input types:\n  * at rest[0], now f64[3] and before f64[2]\n"
                           "  * at scale, now f64[2]{weak_type=False} and before f64[]{weak_type=True}"
                           "https://docs.jax.dev/en/latest/101/type_promotion.html#weak-types")
    with funcad.explain_cache_misses(True):
        assert _misses(caplog, "funcad", lambda: funcad.jit(fnp.sin)(1.0)) == []  # funcad's own
