"""The notebooks in notebooks/ run top to bottom in a fresh kernel.

Each notebook asserts its own numbers (gradients against closed forms,
finite differences, JAX); here each one is executed with nbclient and a few
of its printed results are checked. The stored notebooks must be the
executed output of notebooks/_build.py: rebuild them with
`.venv/bin/python notebooks/_build.py` after editing their sources in
notebooks/src/ (jupytext percent format).
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")
nbformat = pytest.importorskip("nbformat")

pytestmark = pytest.mark.notebooks

NB_DIR = Path(__file__).resolve().parents[2] / "notebooks"


def _load_build():
    spec = importlib.util.spec_from_file_location("notebooks_build", NB_DIR / "_build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build = _load_build()

# Text that each notebook must print when run afresh (real results, not prose).
EXPECTED = {
    "01_quickstart": ["[0.0, 1.0, 0.0, -2.0, 0.0, 16.0, 0.0]", "f'(x) = 2.95732430246"],
    "02_jaxprs": ["def grad_f(a):", "same values: [0.     0.9182 1.3818]"],
    "03_jit_and_xla": ["module @jit_f", "Array float32 [-0.6397 -0.5766  0.5766  0.6397]"],
    "04_vmap_and_jacobians": ["[[1330.  480.    0.    0.]", "Newton step 9: |grad| ="],
    "05_training": ["training accuracy: 100.0%", "derivatives check out"],
    "06_control_flow": ["with last step: [2.5    0.9571 0.6807 0.625  0.6807 0.9571 2.5   ]",
                        "dE/de: eager 0.982515690939, jit 0.982515690939, implicit 0.982515690939"],
    "07_sharding": ["│  CPU 0   │  CPU 1   │", "the trained parameters match the one-device run",
                    "shard_map: loss 1.9948 -> 0.0063, same as one device"],
}


def _text(nb) -> str:
    """All stream and text/plain outputs of a notebook, joined."""
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.output_type == "stream":
                parts.append(out.text)
            elif "data" in out and "text/plain" in out.data:
                parts.append(out.data["text/plain"])
    return "\n".join(parts)


def test_stored_notebooks_are_the_executed_build():
    stored = sorted(p.stem for p in NB_DIR.glob("*.ipynb"))
    assert stored == sorted(build.NOTEBOOKS) == sorted(EXPECTED)
    for name, cells in build.NOTEBOOKS.items():
        nb = nbformat.read(NB_DIR / f"{name}.ipynb", as_version=4)
        assert [(c.cell_type, c.source) for c in nb.cells] == list(cells), \
            f"{name}.ipynb is stale: run notebooks/_build.py {name}"
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert all(c.execution_count for c in code), f"{name}.ipynb is stored unexecuted"
        assert not any(o.output_type == "error" for c in code for o in c.outputs)
        for expected in EXPECTED[name]:
            assert expected in _text(nb), f"{name}.ipynb: stored outputs lack {expected!r}"
    plots = sum("image/png" in o.get("data", {}) for name in build.NOTEBOOKS
                for c in nbformat.read(NB_DIR / f"{name}.ipynb", as_version=4).cells
                for o in c.get("outputs", []))
    assert plots >= 6


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_notebook_runs_in_a_fresh_kernel(name):
    nb = nbformat.read(NB_DIR / f"{name}.ipynb", as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    build.execute(nb, timeout=120)  # raises CellExecutionError, with the cell, on any failure
    text = _text(nb)
    for expected in EXPECTED[name]:
        assert expected in text
    if name == "03_jit_and_xla":
        from funcad.lowering import xla
        assert ("No GPU present" in text) != xla.gpu_available()


def test_percent_format_parser():
    text = ("preamble ignored\n# %% [markdown]\n# # Title\n#\n# text with `code`\n\n"
            "# %%\n# %matplotlib inline\nx = 1\n\n# a comment\ny = 2\n\n\n# %%\nprint(x)\n")
    assert build.parse_percent(text) == [
        ("markdown", "# Title\n\ntext with `code`"),
        ("code", "%matplotlib inline\nx = 1\n\n# a comment\ny = 2"),
        ("code", "print(x)"),
    ]


def test_notebook_sources_are_valid_python():
    import ast

    for path in sorted((NB_DIR / "src").glob("*.py")):
        ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
