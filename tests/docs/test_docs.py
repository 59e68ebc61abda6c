"""Every public name is documented.

- every public function and class of every namespace has its own docstring, and the
  number without a runnable example only falls;
- the examples that test_doctests.py's walk over modules cannot reach (functions made by
  a factory, or wrapped, live in no module's globals under their name) run here;
- the API reference (docs/_ext/funcad_api.py, built by `make docs`) has one page per
  public name and no other, and docstrings written in funcad's prose habits become reST.
"""
from __future__ import annotations

import doctest
import importlib.util
import inspect
import re
import sys
from pathlib import Path

import pytest

import funcad.lax
import funcad.numpy

ROOT = Path(__file__).resolve().parents[2]


def _load_api():
    spec = importlib.util.spec_from_file_location("funcad_api", ROOT / "docs" / "_ext" / "funcad_api.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["funcad_api"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


api = _load_api()
ENTRIES = [e for ns in api.namespaces() for e in api.public_entries(ns)]
DOCUMENTED = [e for e in ENTRIES if api.needs_docstring(e)]

# Public functions and classes whose docstring has no example yet (measured 2026-11-28:
# 489 of 1,490); lower it as examples are added.
MAX_WITHOUT_EXAMPLE = 489


def test_the_reference_and_the_namespace_test_agree_on_the_namespaces():
    from tests.api.test_namespaces import NAMESPACES
    assert api.namespaces() == ["funcad"] + sorted(set(NAMESPACES) - {"funcad"})


def _own_doc(obj) -> str:
    # inspect.getdoc would hand a class without a docstring its base class's
    return (obj.__dict__.get("__doc__") if isinstance(obj, type) else obj.__doc__) or ""


def test_every_public_function_and_class_has_a_docstring():
    missing = [e.fullname for e in DOCUMENTED if not _own_doc(e.obj).strip()]
    assert not missing, f"{len(missing)} public names have no docstring: {missing}"


def test_examples_do_not_become_rarer():
    without = [e.fullname for e in DOCUMENTED if ">>>" not in _own_doc(e.obj)]
    print(f"\n{len(DOCUMENTED) - len(without)} of {len(DOCUMENTED)} public functions and classes have an example")
    assert len(without) <= MAX_WITHOUT_EXAMPLE, (
        f"{len(without)} public functions and classes lack an example (at most {MAX_WITHOUT_EXAMPLE}); "
        f"give new ones a >>> example")


def _found_by_module_walk(obj) -> bool:
    # doctest collects a module's functions whose globals are that module's: a function
    # made by a factory is in no module's globals under its own identity.
    if not inspect.isfunction(obj):
        return True
    return any(v is obj for v in obj.__globals__.values())


def _unreached():
    seen, out = set(), []
    for e in DOCUMENTED:
        if id(e.obj) not in seen and ">>>" in _own_doc(e.obj) and not _found_by_module_walk(e.obj):
            seen.add(id(e.obj))
            out.append(e)
    return out


UNREACHED = _unreached()


def test_the_unreached_examples_are_found():
    names = {e.fullname for e in UNREACHED}
    assert {"funcad.lax.exp", "funcad.numpy.zeros"} <= names
    assert "funcad.numpy.shape" not in names  # a plain function: test_doctests.py runs it


# funcad.random's examples sample, jit and compile: tens of seconds, so behind -m slow
SLOW_EXAMPLES = {"funcad.random"}


@pytest.mark.parametrize("namespace", [
    pytest.param(ns, marks=pytest.mark.slow) if ns in SLOW_EXAMPLES else ns
    for ns in sorted({e.namespace for e in UNREACHED})])
def test_examples_outside_the_module_walk(namespace):
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for e in (e for e in UNREACHED if e.namespace == namespace):
        for test in finder.find(e.obj, e.fullname, globs=dict(inspect.unwrap(e.obj).__globals__)):
            runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {namespace} failed"


@pytest.mark.parametrize("module", [funcad.numpy, funcad.lax])
def test_docstring_tables_have_no_stale_entries(module):
    # An entry whose function gained its own docstring is dead text: remove it.
    table = importlib.import_module(module.__name__ + "._docstrings").DOCSTRINGS
    stale = [n for n, doc in table.items() if getattr(module, n).__doc__ is not doc]
    assert not stale, f"{module.__name__}._docstrings has entries for documented functions: {stale}"


def test_the_reference_has_a_page_for_every_public_name(tmp_path):
    written = api.write_pages(tmp_path)
    pages = {f[:-len(".rst")] for f in written}
    names = {e.fullname for e in ENTRIES}
    assert names <= pages, f"no page for {sorted(names - pages)[:10]}"
    extra = pages - names - set(api.namespaces()) - {"index"}
    assert not extra, f"pages for names that are not public: {sorted(extra)[:10]}"
    assert len(names) > 1800
    sin = (tmp_path / "funcad.numpy.sin.rst").read_text()
    assert ".. autofunction:: sin" in sin and "_autosummary/jax.numpy.sin.html" in sin


@pytest.mark.parametrize("prose, rest", [
    ("near |x| = 1", r"near \|x\| = 1"),
    ("fun(*primals) and **kwargs", r"fun(\*primals) and \*\*kwargs"),
    ("numpy.r_ and int_-inf", r"numpy.r\_ and int\_-inf"),
    ("`ShapeDtypeStruct`s and `a`", r"``ShapeDtypeStruct``\ s and ``a``"),
    ("*emphasis* stays", "*emphasis* stays"),
])
def test_prose_habits_become_rest(prose, rest):
    assert api.escape_docstring([prose]) == [rest, ""]


def test_summaries_close_their_literals():
    # The reference's tables show each docstring up to its first ". " (Sphinx's
    # autosummary): a literal cut there breaks the page's reST.
    broken = []
    for e in ENTRIES:
        lines = api.escape_docstring((_own_doc(e.obj) if api.needs_docstring(e) else "").splitlines())
        paragraph = " ".join(line.strip() for line in lines[:lines.index("")]) if lines else ""
        if re.split(r"\.\s+", paragraph)[0].count("``") % 2:
            broken.append(e.fullname)
    assert not broken, f"a summary sentence ends inside a `code` span: {broken}"


def test_doctest_blocks_are_left_alone():
    lines = ["Example:", "", ">>> f(*a) | b_", "1", "", "|x|"]
    assert api.escape_docstring(lines) == ["Example:", "", ">>> f(*a) | b_", "1", "", r"\|x\|", ""]
