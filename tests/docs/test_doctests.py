"""Every docstring example in funcad runs: the modules are found by walking
the package, so a new module's examples run without being listed anywhere."""
from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import funcad

MODULES = ["funcad"] + sorted(info.name for info in pkgutil.walk_packages(funcad.__path__, "funcad.")
                              if info.name != "funcad.__main__")


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples(module):
    mod = importlib.import_module(module)
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {module} failed"


def test_the_walk_finds_every_layer():
    assert len(MODULES) > 200
    assert {"funcad.core.options", "funcad.transforms.api", "funcad.numpy", "funcad.random._gamma",
            "funcad.scipy.linalg._special_matrices"} <= set(MODULES)


def test_a_stale_example_fails(tmp_path, monkeypatch):
    # The check can fail: an example whose printed value is wrong is reported.
    (tmp_path / "stale_doc_probe.py").write_text('def f():\n    """\n    >>> 1 + 1\n    3\n    """\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(AssertionError, match="1 of 1 examples"):
        test_docstring_examples("stale_doc_probe")
