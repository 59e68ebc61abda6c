"""funcad.as_jax, the drop-in `jax`: names resolve to funcad's modules, JAX's
defaults hold while it is installed and funcad's return after, funcad's own
plumbing keeps the real jax, and `--check` finds what a script uses that funcad
lacks. The corpus in tests/programs/ runs through it (tests/as_jax/test_programs.py)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import jax  # noqa: F401  (the real jax, for the round-trip check)
import numpy as np
import pytest

import funcad
import funcad.as_jax as as_jax
from funcad.as_jax._check import check_source

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def dropin(monkeypatch):
    monkeypatch.delenv("JAX_ENABLE_X64", raising=False)
    real_jax = sys.modules["jax"]
    as_jax.install()
    try:
        yield
    finally:
        as_jax.uninstall()
    assert sys.modules["jax"] is real_jax


def test_names_are_funcads_own_modules(dropin):
    import jax
    import jax.numpy as jnp
    import jax.scipy.special as jss
    from jax import lax, random
    from jax.tree_util import tree_map
    assert jax is funcad and jnp is funcad.numpy and lax is funcad.lax and random is funcad.random
    assert jss is sys.modules["funcad.scipy.special"] and tree_map is funcad.tree_util.tree_map
    assert funcad.numpy.__spec__.name == "funcad.numpy"  # the alias leaves the module's spec alone


def test_defaults_are_jaxs_and_uninstall_restores_funcads(dropin):
    import jax
    import jax.numpy as jnp
    import importlib.metadata
    assert jnp.ones(2).dtype == np.float32 and jnp.arange(3).dtype == np.int32
    assert jax.__version__ == importlib.metadata.version("jax")
    assert jax.__version_info__ >= (0, 6)
    as_jax.uninstall()
    assert funcad.numpy.ones(2).dtype == np.float64 and funcad.__version__ == funcad.version._version
    assert not hasattr(funcad, "_src") and not as_jax.installed()
    as_jax.install()  # for the fixture's uninstall


def test_transforms_and_jit_through_import_jax(dropin):
    import jax
    import jax.numpy as jnp
    f = lambda x: jnp.sum(jnp.tanh(x) ** 2)  # noqa: E731
    x = jnp.linspace(-1.0, 1.0, 4)
    g = jax.jit(jax.grad(f))(x)
    want = 2 * np.tanh(np.linspace(-1, 1, 4, dtype=np.float32)) / np.cosh(np.linspace(-1, 1, 4, dtype=np.float32)) ** 2
    assert g.dtype == np.float32
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(f))(x[:, None])[:, 0]), want, rtol=1e-6)


def test_private_modules_are_the_installed_jaxs(dropin):
    import jax._src.compiler as compiler
    assert "site-packages" in compiler.__file__ or "jax" in Path(compiler.__file__).parts


def test_plumbing_keeps_the_real_jax(dropin):
    from funcad.lowering import xla
    real = as_jax._state["modules"]["jax"]
    assert xla._jax is real and sys.modules["jax"] is funcad
    get = xla.real_jax_attr("extend.backend.get_compile_options")
    assert get is real.extend.backend.get_compile_options and get.__module__.startswith("jax.")
    assert xla.real_jax_attr("extend.no_such_module.f") is None
    with xla.jax_x64_scope():  # the real jax's switch, not funcad's
        assert real.config.jax_enable_x64 and funcad.numpy.ones(1).dtype == np.float32


def test_a_missing_module_names_itself(dropin):
    with pytest.raises(ModuleNotFoundError, match=r"funcad does not provide 'jax.no_such_module'.*--check"):
        import jax.no_such_module  # noqa: F401


SCRIPT = textwrap.dedent("""
    import sys
    import jax
    import jax.numpy as jnp
    print(__name__, sys.argv[1:], jnp.ones(2).dtype, jax.jit(lambda x: x * 2.0 + 1.0)(jnp.arange(3.0)))
""")


def test_command_line_runs_a_script_unmodified(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("JAX_ENABLE_X64", None)
    out = subprocess.run([sys.executable, "-m", "funcad.as_jax", str(script), "a", "b"], capture_output=True,
                         text=True, cwd=ROOT, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["__main__", "['a',", "'b']", "float32", "[1.", "3.", "5.]"]
    env["JAX_ENABLE_X64"] = "1"
    out = subprocess.run([sys.executable, "-m", "funcad.as_jax", str(script)], capture_output=True,
                         text=True, cwd=ROOT, env=env, timeout=300)
    assert "float64" in out.stdout, out.stderr
    # An uncaught error prints the traceback `python prog.py` prints: it starts at the program.
    script.write_text("import jax\ndef f():\n    raise ValueError('boom')\nf()\n")
    out = subprocess.run([sys.executable, "-m", "funcad.as_jax", str(script)], capture_output=True,
                         text=True, cwd=ROOT, env=env, timeout=300)
    frames = [line.split(",")[0].strip() for line in out.stderr.splitlines() if line.strip().startswith("File ")]
    assert out.returncode == 1 and frames == [f'File "{script}"'] * 2, out.stderr
    assert out.stderr.rstrip().endswith("ValueError: boom")


def test_check_lists_missing_names_and_keywords(tmp_path):
    src = textwrap.dedent("""
        import jax
        import jax.numpy as jnp
        from jax import lax
        y = jnp.sum(jnp.ones(3), axis=0, no_such_keyword=1)
        z = jax.no_such_function(y)
        w = lax.cumsum(y, reverse=True)
        import jax._src.core   # private: not funcad's to provide
    """)
    gaps = [str(g) for g in check_source(src)]
    assert gaps == ["5: jax.numpy.sum(no_such_keyword=...): funcad's jax.numpy.sum takes no parameter 'no_such_keyword'",
                    "6: jax.no_such_function: funcad has no such name"]
    script = tmp_path / "prog.py"
    script.write_text(src)
    out = subprocess.run([sys.executable, "-m", "funcad.as_jax", "--check", str(script)], capture_output=True,
                         text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 1 and "no_such_function" in out.stdout and "2 JAX name" in out.stdout
    script.write_text(SCRIPT)
    out = subprocess.run([sys.executable, "-m", "funcad.as_jax", "--check", str(script)], capture_output=True,
                         text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stdout


def test_submodules_are_attributes_after_a_bare_import():
    # Libraries write `jax.interpreters.ad....` after `import jax` alone (distrax does).
    code = ("import funcad as jax; print(jax.interpreters.ad.__name__, jax.extend.core.__name__, "
            "jax.api_util.__name__, jax.monitoring.__name__, jax.experimental.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["funcad.interpreters.ad", "funcad.extend.core", "funcad.api_util",
                                  "funcad.monitoring", "funcad.experimental"]
