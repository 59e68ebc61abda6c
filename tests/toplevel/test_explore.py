"""Exploration aids: to_python source, Graphviz drawings, HTML display of jaxprs."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad.core.trace import eval_jaxpr
from tests.op_table import OPS


def _run_source(closed, args):
    src = funcad.to_python(closed)
    ns: dict = {}
    exec(compile(src, "<to_python>", "exec"), ns)
    out = ns["f"](*closed.consts, *args)
    return out if isinstance(out, tuple) else (out,)


def _flat_outs(y):
    return list(y) if isinstance(y, (tuple, list)) else [y]


@pytest.mark.parametrize("spec", OPS, ids=lambda s: s.name)
def test_to_python_matches_interpreter(spec):
    dtype = np.float64 if np.float64 in spec.dtypes else spec.dtypes[-1]
    args = spec.args(np.random.default_rng(0), dtype)
    closed = funcad.make_jaxpr(lambda *a: _flat_outs(spec.fun(*a)))(*args)
    want = eval_jaxpr(closed.jaxpr, closed.consts, *args)
    got = _run_source(closed, args)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype
        if w.dtype.kind in "fc":  # einsum may round differently from the interpreter's matmul
            np.testing.assert_allclose(g, w, rtol=1e-12 if w.dtype in (np.float64, np.complex128) else 1e-5)
        else:
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("spec", [s for s in OPS if s.diff and np.float64 in s.dtypes][::2],
                         ids=lambda s: s.name)
def test_to_python_of_backward_pass(spec):
    args = spec.args(np.random.default_rng(1), np.float64)
    fl = tuple(i for i, a in enumerate(args) if np.asarray(a).dtype.kind == "f")
    loss = lambda *a: sum(fnp.sum(fnp.sin(o)) for o in _flat_outs(spec.fun(*a)))
    closed = funcad.make_jaxpr(funcad.grad(loss, argnums=fl))(*args)
    want = funcad.grad(loss, argnums=fl)(*args)
    got = _run_source(closed, args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12, atol=1e-14)


def test_to_python_reads_well():
    src = funcad.to_python(funcad.make_jaxpr(lambda x: fnp.tanh(x) * 2.0)(np.ones(3)), name="double_tanh")
    assert "def double_tanh(a):" in src
    assert "np.tanh(a)" in src and "import numpy as np" in src
    with pytest.raises(ValueError, match="valid Python function name"):
        funcad.to_python(funcad.make_jaxpr(fnp.sin)(1.0), name="not a name")


def test_graph_source_lists_inputs_primitives_outputs():
    g = funcad.viz.graph(funcad.make_jaxpr(lambda x, y: fnp.sin(x) * y)(np.ones(2), np.ones(2)))
    src = g.source
    for piece in ("a: f64[2]", "b: f64[2]", "sin", "mul", "out 0: f64[2]"):
        assert piece in src
    assert src.count("->") == 4  # a->sin, sin->mul, b->mul, mul->out


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")
def test_graph_renders_svg_and_png(tmp_path):
    g = funcad.viz.graph(funcad.make_jaxpr(funcad.grad(lambda x: fnp.sum(x ** 3)))(np.ones(3)))
    svg = g.pipe(format="svg").decode()
    assert svg.lstrip().startswith("<?xml") and "integer_pow" in svg
    path = g.render(tmp_path / "grad", format="png")
    assert open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_graph_without_dot_says_how_to_install(monkeypatch):
    g = funcad.viz.graph(funcad.make_jaxpr(fnp.sin)(1.0))
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(funcad.viz.GraphvizMissingError, match="apt-get install graphviz"):
        g.pipe(format="svg")


def test_jaxpr_html_highlights_types_and_primitives():
    closed = funcad.make_jaxpr(lambda x: fnp.exp(x) + 1.0)(np.ones(2, np.float32))
    html = closed._repr_html_()
    assert '<span class="pr">exp</span>' in html and '<span class="ty">f32[2]</span>' in html
    assert str(closed).splitlines()[0] in html.replace('<span class="kw">', "").replace(
        '<span class="ty">', "").replace("</span>", "").replace('<span class="pr">', "")
