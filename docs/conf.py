"""Sphinx configuration of funcad's documentation site (`make docs`)."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

project = "funcad"
author = "the funcad authors"
copyright = "the funcad authors"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "myst_nb",          # Markdown pages (MyST) and the notebooks, with their stored outputs
    "funcad_api",       # docs/_ext/funcad_api.py: the API reference and the coverage page
]

exclude_patterns = ["_build", "requirements.txt", "**/.ipynb_checkpoints"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}

# The notebooks are stored executed (notebooks/_build.py; tests/docs/test_notebooks.py runs
# them): the site shows their outputs and plots without running them again.
nb_execution_mode = "off"
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

autosummary_generate = False      # funcad_api writes the pages itself
autodoc_typehints = "signature"
autodoc_member_order = "bysource"
autodoc_default_options = {"show-inheritance": False}
napoleon_numpy_docstring = False  # funcad's docstrings are prose with Google-style sections

html_theme = "furo"
html_title = "funcad"
html_static_path: list[str] = []


def _copy_notebooks(app) -> None:
    # The notebooks live in notebooks/ (next to their sources); the site renders copies.
    src, dst = HERE.parent / "notebooks", HERE / "notebooks"
    dst.mkdir(exist_ok=True)
    for nb in sorted(src.glob("*.ipynb")):
        target = dst / nb.name
        if not target.exists() or target.read_bytes() != nb.read_bytes():
            shutil.copyfile(nb, target)


def _ecosystem_pages(app, docname, source) -> None:
    # docs/ecosystem/*.md come from the ecosystem work; until the first one arrives the
    # page says so instead of holding a glob that matches nothing (a warning).
    if docname == "ecosystem" and not any((HERE / "ecosystem").glob("*.md")):
        text = source[0]
        source[0] = text[:text.index("```{toctree}")] + "None yet.\n"


def setup(app):
    app.connect("builder-inited", _copy_notebooks, priority=400)
    app.connect("source-read", _ecosystem_pages)
