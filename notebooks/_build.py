"""Build the example notebooks from notebooks/src/*.py and execute them.

    .venv/bin/python notebooks/_build.py              # all notebooks
    .venv/bin/python notebooks/_build.py 03 05        # those whose name starts so

Each notebook's source is a plain Python file in jupytext's "percent" format:
`# %% [markdown]` starts a markdown cell written as `# ` comment lines, `# %%`
starts a code cell, and IPython magics in code are commented (`# %matplotlib
inline`). The notebooks are stored executed, with their outputs (text, small
PNG plots), so that they read well on a code host; tests/docs/test_notebooks.py
runs each one again in a fresh kernel. Edit the sources, never the .ipynb files.
"""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE / "src"


def parse_percent(text: str) -> list[tuple[str, str]]:
    """(kind, source) pairs of a percent-format file; text before the first `# %%` is ignored."""
    cells: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("# %%"):
            cells.append(("markdown" if "[markdown]" in line else "code", []))
        elif cells:
            cells[-1][1].append(line)
    out = []
    for kind, lines in cells:
        if kind == "markdown":
            lines = [re.sub(r"^# ?", "", line) for line in lines]
        else:  # a magic is commented so that the source stays valid Python
            lines = [line[2:] if re.match(r"# %\w", line) else line for line in lines]
        out.append((kind, "\n".join(lines).strip()))
    return out


NOTEBOOKS = {p.stem: parse_percent(p.read_text(encoding="utf-8")) for p in sorted(SRC.glob("*.py"))}


def make_notebook(cells):
    """An nbformat v4 notebook (not executed) from (kind, source) pairs."""
    import nbformat.v4 as v4

    nb = v4.new_notebook()
    nb.cells = [v4.new_markdown_cell(src) if kind == "markdown" else v4.new_code_cell(src)
                for kind, src in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def execute(nb, timeout: int = 300, **env_overrides: str):
    """Run every cell in a fresh kernel started in notebooks/; raises on a cell error."""
    from nbclient import NotebookClient

    # The kernel imports this checkout's funcad even where it is not pip-installed.
    env = {**os.environ, **env_overrides}
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(HERE.parent), env.get("PYTHONPATH")] if p)
    NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                   resources={"metadata": {"path": str(HERE)}}).execute(env=env)
    return nb


def main(prefixes: list[str]) -> None:
    import nbformat

    for name, cells in NOTEBOOKS.items():
        if prefixes and not any(name.startswith(p) for p in prefixes):
            continue
        # Multi-threaded OpenBLAS spins badly on a machine whose cores are busy
        # with other work; one BLAS thread keeps the stored timings meaningful.
        nb = execute(make_notebook(cells), OPENBLAS_NUM_THREADS=os.environ.get("OPENBLAS_NUM_THREADS", "1"))
        # Cell ids are random per build; number them so rebuilds diff cleanly.
        for i, cell in enumerate(nb.cells):
            cell["id"] = f"c{i:02d}"
        nbformat.write(nb, HERE / f"{name}.ipynb")
        print("wrote", name + ".ipynb")


if __name__ == "__main__":
    main(sys.argv[1:])
