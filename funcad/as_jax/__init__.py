"""Run unmodified JAX programs on funcad: `import jax` means funcad.

    python -m funcad.as_jax script.py [args ...]      # run a JAX program on funcad
    python -m funcad.as_jax --check script.py          # list what it uses that funcad lacks

or, in a running interpreter or notebook, before the program imports jax:

>>> import funcad.as_jax
>>> funcad.as_jax.install()
>>> import jax, jax.numpy as jnp
>>> jax is funcad and jnp is funcad.numpy
True
>>> jnp.ones(2).dtype    # JAX's defaults: 32-bit mode unless JAX_ENABLE_X64 is set
dtype('float32')
>>> funcad.as_jax.uninstall()
>>> funcad.numpy.ones(2).dtype
dtype('float64')

How names resolve while the drop-in is installed:

* `jax` and every `jax.X.Y` are funcad's own module objects `funcad.X.Y` (an
  import hook maps the names; nothing is copied or wrapped). A `jax.X` funcad
  does not have fails at import with an ImportError that says so.
* `jax._src...`, JAX's private modules, are the installed jax's own. funcad does
  not imitate JAX's internals: a library that reaches into them for backend
  plumbing (chex's `restrict_backends` imports `jax._src.compiler`) gets jax's
  modules, but funcad's arrays and tracers are not JAX's, so private code that
  inspects them (`isinstance(x, jax._src.core.Tracer)`) sees foreign objects.
* funcad's own device plumbing (funcad/lowering) keeps the real jax: it binds
  it before the hook takes the name.
* JAX's defaults hold: 32-bit mode unless JAX_ENABLE_X64 says otherwise, eager
  operations that NumPy may round differently run through XLA, as JAX's
  (`eager_backend="xla"`, unless FUNCAD_EAGER_BACKEND=numpy), and
  `jax.__version__`/`__version_info__` give the installed jax's version, the
  release whose API funcad follows (libraries choose code paths by it; funcad's
  own version is `_funcad.version._version`). `uninstall()` restores all of it.
"""
from __future__ import annotations as _annotations

import importlib as _importlib
import importlib.abc as _abc
import importlib.machinery as _machinery
import os as _os
import sys as _sys

import funcad as _funcad
from funcad.lowering import xla as _xla

__all__ = ["install", "uninstall", "installed"]

_state: dict | None = None


def installed() -> bool:
    """Whether `jax` currently means funcad in this process."""
    return _state is not None


def _is_private(name: str) -> bool:
    return name == "jax._src" or name.startswith("jax._src.")


class _AliasLoader(_abc.Loader):
    """Hands out an already imported funcad module under a `jax` name."""

    def __init__(self, module):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        # The import system set __spec__ to the alias spec; the module keeps its own.
        module.__spec__ = self.spec


class _JaxFinder(_abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if not (name == "jax" or name.startswith("jax.")) or _is_private(name):
            return None
        target_name = "funcad" + name[3:]
        try:
            module = _importlib.import_module(target_name)
        except ModuleNotFoundError as e:
            if e.name is not None and not target_name.startswith(e.name):
                raise  # funcad's module exists but one of its own imports is missing
            raise ModuleNotFoundError(
                f"funcad does not provide {name!r} (no module {target_name!r}); this program "
                f"needs a part of JAX funcad lacks. `python -m funcad.as_jax --check SCRIPT` "
                f"lists every such name a script uses.", name=name) from None
        loader = _AliasLoader(module)
        loader.spec = module.__spec__
        return _machinery.ModuleSpec(name, loader, is_package=hasattr(module, "__path__"))


_FINDER = _JaxFinder()


def _version_of_real_jax(real) -> tuple[str, tuple]:
    version = real.__version__
    return version, tuple(int(p) for p in version.split(".") if p.isdigit())


def install() -> None:
    """Make `import jax` (and every `jax.X.Y`) resolve to funcad in this process.

    Call it before the program imports jax. Starts JAX's defaults (32-bit mode
    unless JAX_ENABLE_X64 is set). Idempotent; `uninstall()` undoes it.
    """
    global _state
    if _state is not None:
        return
    _xla._load()  # jaxlib and the real jax load now, bound for funcad's plumbing
    real = _xla._jax
    # What lowering reads later through the real module object (xla.real_jax_attr).
    _xla.real_jax_attr("extend.backend.get_compile_options")
    if not hasattr(real, "enable_x64"):  # jax < 0.7
        _xla.real_jax_attr("experimental.enable_x64")
    saved = {k: m for k, m in _sys.modules.items() if k == "jax" or k.startswith("jax.")}
    for k in saved:
        if not _is_private(k):
            del _sys.modules[k]
    version, info = _version_of_real_jax(real)
    _state = {"modules": saved, "x64": _funcad.config.read("enable_x64"),
              "eager_backend": _funcad.config.read("eager_backend"),
              "version": (_funcad.__version__, _funcad.__version_info__)}
    _funcad.__version__ = _funcad.version.__version__ = version
    _funcad.__version_info__ = _funcad.version.__version_info__ = info
    raw = _os.environ.get("JAX_ENABLE_X64", "")
    _funcad.config.update("enable_x64", raw.strip().lower() in ("1", "true", "t", "yes", "y", "on"))
    # JAX rounds eager operations as XLA does (FUNCAD_EAGER_BACKEND=numpy keeps NumPy's)
    _funcad.config.update("eager_backend", _os.environ.get("FUNCAD_EAGER_BACKEND", "xla"))
    _sys.modules["jax"] = _funcad
    # `import jax._src.x as y` reads the attribute `_src` of the module named jax.
    _funcad._src = saved["jax._src"]
    _sys.meta_path.insert(0, _FINDER)


def uninstall() -> None:
    """Undo `install()`: `jax` is the real jax again, funcad's defaults return."""
    global _state
    if _state is None:
        return
    if _FINDER in _sys.meta_path:
        _sys.meta_path.remove(_FINDER)
    for k in [k for k in _sys.modules if (k == "jax" or k.startswith("jax.")) and not _is_private(k)]:
        del _sys.modules[k]
    _sys.modules.update(_state["modules"])
    del _funcad._src
    _funcad.__version__ = _funcad.version.__version__ = _state["version"][0]
    _funcad.__version_info__ = _funcad.version.__version_info__ = _state["version"][1]
    _funcad.config.update("enable_x64", _state["x64"])
    _funcad.config.update("eager_backend", _state["eager_backend"])
    _state = None
