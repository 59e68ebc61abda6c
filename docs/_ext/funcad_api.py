"""The API reference and the JAX coverage page, generated from the code at build time.

Sphinx calls `generate` when the build starts; it writes, under docs/api/ (ignored
by git):

- one page per public name, `api/<namespace>.<name>.rst`, with its signature and
  docstring (autodoc) and a link to JAX's function of the same name where the
  installed jax has one;
- one page per public namespace, listing its names in an autosummary table;
- `api/coverage.md`: per JAX namespace, how many of the installed jax's names and
  parameters funcad has, and which it lacks.

A public namespace is `funcad` and every module under it with no component starting
with an underscore, outside the implementation packages; its public names are its
`__all__` (tests/api/test_namespaces.py checks that this is all it exports).
tests/docs/test_docs.py checks that every public name gets a page and has a docstring.
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import types
from dataclasses import dataclass
from pathlib import Path

INTERNAL = {"core", "primitives", "transforms", "lowering", "arrays"}  # implementation, not namespaces
JAX_DOCS = "https://docs.jax.dev/en/latest/_autosummary/{}.html"


def namespaces() -> list[str]:
    """Every public namespace of funcad, `funcad` first, then sorted."""
    import funcad

    found = ["funcad"]
    for info in pkgutil.walk_packages(funcad.__path__, "funcad."):
        parts = info.name.split(".")[1:]
        if parts[0] not in INTERNAL and not any(p.startswith("_") for p in parts):
            found.append(info.name)
    return ["funcad"] + sorted(set(found) - {"funcad"})


@dataclass(frozen=True)
class Entry:
    namespace: str
    name: str
    obj: object

    @property
    def fullname(self) -> str:
        return f"{self.namespace}.{self.name}"

    @property
    def jax_name(self) -> str:
        return "jax" + self.fullname[len("funcad"):]


def public_entries(namespace: str) -> list[Entry]:
    """The public names of one namespace, without its child namespaces (they have their own page)."""
    mod = importlib.import_module(namespace)
    return [Entry(namespace, n, getattr(mod, n)) for n in sorted(mod.__all__)
            if not isinstance(getattr(mod, n), types.ModuleType)]


def needs_docstring(entry: Entry) -> bool:
    """Public functions and classes carry their own docstring; constants, dtypes and
    primitive objects are described by their namespace and their JAX counterpart."""
    obj = entry.obj
    if isinstance(obj, type):
        return obj.__module__.split(".")[0] == "funcad"  # not NumPy's scalar types
    return inspect.isfunction(obj) or inspect.ismethod(obj)


def jax_object(jax_name: str):
    """The installed jax's object of that dotted name, or None."""
    parts = jax_name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except Exception:  # noqa: BLE001 - a jax module may fail to import without a GPU
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except Exception:  # noqa: BLE001 - jax raises its own errors for removed names
            return None
        return obj
    return None


def _directive(obj) -> str | None:
    """The autodoc directive for `obj`, or None where autodoc would show another
    project's docstring (a NumPy scalar type, a dict's, a primitive's class)."""
    if isinstance(obj, type):
        return "autoclass" if obj.__module__.split(".")[0] == "funcad" else None
    if inspect.isroutine(obj):
        module = getattr(obj, "__module__", None) or ""
        return "autofunction" if module.split(".")[0] == "funcad" else None
    own = getattr(obj, "__doc__", None)
    borrowed = {getattr(type(obj), "__doc__", None), getattr(getattr(obj, "__origin__", None), "__doc__", None)}
    if own and own not in borrowed:
        return "autodata"   # an instance with its own docstring (an option scope, custom_jvp)
    return None


def _described(entry: Entry) -> list[str]:
    """A page body for a name autodoc cannot describe: what it is, from its value."""
    obj = entry.obj
    if isinstance(obj, type):
        what = f"The class ``{obj.__module__}.{obj.__qualname__}``, as in JAX."
        return [f".. py:class:: {entry.name}", "", f"   {what}"]
    kind = type(obj).__name__
    if inspect.isroutine(obj):
        what = f"``{obj.__module__}.{obj.__qualname__}``, the same function as in JAX."
        return [f".. py:function:: {entry.name}", "", f"   {what}"]
    if kind == "Primitive":
        what = f"The primitive ``{obj}``: equations of a jaxpr that apply it have it as ``eqn.primitive``."
    else:
        text = repr(obj)
        text = text if len(text) <= 120 else text[:117] + "..."
        what = f"A value of type ``{kind}``: ``{text}``." if "``" not in text else f"A value of type ``{kind}``."
    return [f".. py:data:: {entry.name}", "", f"   {what}"]


def _title(text: str) -> str:
    return f"{text}\n{'=' * len(text)}\n"


def entry_page(entry: Entry, first: str | None = None) -> str:
    """The page of one public name; `first` names the page of a class seen before under
    another name."""
    # Orphan: the pages are reached from their namespace's table, and kept out of the
    # navigation tree, which every page of the site would otherwise carry whole.
    lines = [":orphan:\n", _title(entry.fullname), f".. currentmodule:: {entry.namespace}\n"]
    directive = _directive(entry.obj)
    if first is not None:  # a second name of one class: autodoc would describe it twice
        lines += [f".. py:class:: {entry.name}", "", f"   The same class as :class:`{first}`."]
    elif directive is None:
        lines += _described(entry)
    else:
        lines.append(f".. {directive}:: {entry.name}")
        if directive == "autoclass":
            lines.append("   :members:")
        if directive == "autodata":
            lines.append("   :no-value:")
    lines.append("")
    if jax_object(entry.jax_name) is not None:
        lines.append(f"JAX's counterpart: `{entry.jax_name} <{JAX_DOCS.format(entry.jax_name)}>`_\n")
    lines.append(f"Namespace: :doc:`{entry.namespace}`\n")
    return "\n".join(lines)


def namespace_page(namespace: str, children: list[str]) -> str:
    entries = public_entries(namespace)
    doc = inspect.getdoc(importlib.import_module(namespace)) or ""
    summary = " ".join(escape_docstring(doc.split("\n\n")[0].splitlines())).strip()
    lines = [_title(namespace), f".. module:: {namespace}\n"]
    if summary:
        lines.append(f"{summary}\n")
    if children:
        lines.append("Namespaces inside: " + ", ".join(f":doc:`{c}`" for c in children) + "\n")
    if entries:
        lines += [f"{len(entries)} names.\n", ".. autosummary::", "   :nosignatures:", ""]
        lines += [f"   {e.name}" for e in entries]
    return "\n".join(lines) + "\n"


def index_page(groups: list[str]) -> str:
    lines = [_title("API reference"),
             "One page per public name, generated from funcad's code: its signature, its",
             "docstring and a link to JAX's function of the same name where there is one.",
             "The :doc:`coverage` page lists what funcad has of the installed jax.\n",
             ".. toctree::", "   :hidden:", "", "   coverage"]
    lines += [f"   {ns}" for ns in groups]
    lines.append("")
    for ns in groups:
        lines.append(f"- :doc:`{ns}` ({len(public_entries(ns))} names)")
    return "\n".join(lines) + "\n"


# -- coverage against the installed jax -------------------------------------------------

_HELPERS = {"typing", "functools", "collections", "weakref", "__future__", "dataclasses",
            "jax._src.util", "jaxlib.utils"}


def _jax_own(obj) -> bool:
    module = getattr(obj, "__module__", None)
    if not isinstance(module, str):   # a constant (pi, newaxis) or an instance
        return True
    return module not in _HELPERS and module.split(".")[0] not in _HELPERS


def _jax_public(mod) -> list[str]:
    """A jax module's public names: its `__all__`, or where it has none (most of them) the
    names of jax's own objects there, not the helpers a module imports from other packages
    (typing's Any, functools' partial) or from jax's internal utilities (safe_map, unzip2)."""
    names = getattr(mod, "__all__", None)
    if names is None:
        names = [n for n, v in vars(mod).items() if _jax_own(v)]
    return sorted(n for n in set(names) if not n.startswith("_")
                  and not isinstance(getattr(mod, n, None), types.ModuleType))


def _params(obj) -> set[str] | None:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    return {p.name for p in sig.parameters.values()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}


def _has_var_keyword(obj) -> bool:
    try:
        return any(p.kind == p.VAR_KEYWORD for p in inspect.signature(obj).parameters.values())
    except (TypeError, ValueError):
        return False


@dataclass
class Coverage:
    namespace: str            # funcad's
    jax_names: list[str]
    missing: list[str]
    param_gaps: dict[str, list[str]]  # name -> JAX parameters funcad's lacks

    @property
    def present(self) -> int:
        return len(self.jax_names) - len(self.missing)


def coverage(namespace: str) -> Coverage | None:
    """What funcad's `namespace` has of the installed jax's module of the same name."""
    jmod = jax_object("jax" + namespace[len("funcad"):])
    if not isinstance(jmod, types.ModuleType):
        return None
    fmod = importlib.import_module(namespace)
    names = _jax_public(jmod)
    missing, gaps = [], {}
    for n in names:
        try:
            ours = getattr(fmod, n)
        except AttributeError:  # funcad's UnsupportedError is an AttributeError too
            missing.append(n)
            continue
        theirs = getattr(jmod, n, None)
        if callable(theirs) and callable(ours) and not _has_var_keyword(ours):
            jp, fp = _params(theirs), _params(ours)
            if jp is not None and fp is not None and jp - fp:
                gaps[n] = sorted(jp - fp)
    return Coverage(namespace, names, missing, gaps)


def coverage_page(groups: list[str], total_pages: int) -> str:
    import jax

    rows, sections = [], []
    for ns in groups:
        cov = coverage(ns)
        if cov is None or not cov.jax_names:
            continue
        jname = "jax" + ns[len("funcad"):]
        rows.append(f"| [`{jname}`]({ns}.rst) | {cov.present} of {len(cov.jax_names)} | "
                    f"{cov.present - len(cov.param_gaps)} |")
        if cov.missing or cov.param_gaps:
            body = [f"### `{jname}`\n"]
            if cov.missing:
                body.append("Names funcad lacks: " + ", ".join(f"`{n}`" for n in cov.missing) + "\n")
            for n, ps in sorted(cov.param_gaps.items()):
                body.append(f"- `{n}`: no parameter " + ", ".join(f"`{p}`" for p in ps))
            sections.append("\n".join(body) + "\n")
    head = [
        "# JAX API coverage\n",
        f"Generated when this site was built, from funcad's code and the installed jax "
        f"{jax.__version__}: for each JAX namespace, how many of its public names funcad's "
        "namespace of the same name has, and how many of those take every parameter JAX's "
        "takes (a funcad function that takes `**kwargs` counts as taking them). Names that "
        "raise `funcad.UnsupportedError` on access count as missing. The API reference has "
        f"{total_pages} pages, one per public name of funcad.\n",
        "Each namespace links to funcad's page for it. A jax module without `__all__` counts "
        "jax's own objects in it, which can include helpers JAX does not document (such as "
        "`jax.experimental.ode.runge_kutta_step`).\n",
        "| JAX namespace | names funcad has | with all of JAX's parameters |",
        "| --- | --- | --- |",
    ]
    tail = ["", "## What is missing\n",
            "Each name or parameter below is a gap the for-JAX-users guide explains where it "
            "is known ([Not supported yet](../guides/for_jax_users.md#not-supported-yet)).\n"]
    return "\n".join(head + rows + tail) + "\n" + "\n".join(sections or ["Nothing.\n"])


# -- writing -----------------------------------------------------------------------------

def _write(path: Path, text: str) -> None:
    # Unchanged pages keep their timestamps, so an incremental build rereads only what changed.
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def write_pages(outdir: Path) -> set[str]:
    """Write a page per public name and per namespace, and the index; returns the file names."""
    outdir.mkdir(parents=True, exist_ok=True)
    groups = namespaces()
    written = {"index.rst"}
    classes: dict[int, str] = {}   # id of a class -> the first full name documenting it
    for ns in groups:
        children = [g for g in groups if g.rpartition(".")[0] == ns]
        _write(outdir / f"{ns}.rst", namespace_page(ns, children))
        written.add(f"{ns}.rst")
        for entry in public_entries(ns):
            first = None
            if isinstance(entry.obj, type) and _directive(entry.obj) == "autoclass":
                first = classes.setdefault(id(entry.obj), entry.fullname)
                first = None if first == entry.fullname else first
            _write(outdir / f"{entry.fullname}.rst", entry_page(entry, first))
            written.add(f"{entry.fullname}.rst")
    _write(outdir / "index.rst", index_page(groups))
    return written


def generate(outdir: Path) -> None:
    """The reference and the coverage page under `outdir`; pages of removed names go."""
    written = write_pages(outdir) | {"coverage.md"}
    pages = sum(len(public_entries(ns)) for ns in namespaces())
    _write(outdir / "coverage.md", coverage_page(namespaces(), pages))
    for stale in outdir.iterdir():
        if stale.name not in written:
            stale.unlink()


# -- docstrings as reStructuredText ---------------------------------------------------------

# funcad's docstrings are reStructuredText written with the habits of Python prose:
# `name` in single backticks means code (as in Markdown; reST would set it in italics and
# reject `name`s), |x| is an absolute value (not a substitution), f(*args) and **kwargs
# are calls (not emphasis), numpy.r_ a name (not a link target). Outside doctest and
# literal blocks these are rewritten to the reST that says so; every other reST error
# still fails the build.
_TICKS = re.compile(r"(?<!`)`([^`]+)`(?!`)")
_LITERAL = re.compile(r"(``.+?``)", re.S)
_STAR = re.compile(r"(?<![\\\w*])(\*\*?)(?=[A-Za-z_(])(?![A-Za-z_]+\*)")
_BAR = re.compile(r"(?<!\\)\|")
_TARGET = re.compile(r"(?<=[A-Za-z0-9])_(?![A-Za-z0-9_])")


def _literal(m: re.Match) -> str:
    # an inline literal must stand apart from the words around it: `x`s -> ``x``\ s
    before = m.string[m.start() - 1] if m.start() else " "
    after = m.string[m.end()] if m.end() < len(m.string) else " "
    text = m.group(1).replace("\n", " ")
    return ("\\ " if before.isalnum() or before in ")_" else "") + f"``{text}``" \
        + ("\\ " if after.isalnum() or after in "(_" else "")


def _escape_prose(text: str) -> str:
    text = _TICKS.sub(_literal, text)
    parts = _LITERAL.split(text)
    for i in range(0, len(parts), 2):  # even parts are outside literals
        t = _STAR.sub(lambda m: "\\" + "\\".join(m.group(1)), parts[i])
        parts[i] = _TARGET.sub(r"\\_", _BAR.sub(r"\\|", t))
    return "".join(parts)


def escape_docstring(lines: list[str]) -> list[str]:
    """The docstring's lines with its prose habits written as reST (see above)."""
    blocks: list[list[str]] = [[]]
    for line in lines:
        if line.strip():
            blocks[-1].append(line)
        elif blocks[-1]:
            blocks.append([])
    out: list[str] = []
    literal_next = False
    for block in blocks:
        if not block:
            continue
        indent = min(len(b) - len(b.lstrip()) for b in block)
        code = block[0].lstrip().startswith(">>>") or (literal_next and indent > 0)
        out += block if code else _escape_prose("\n".join(block)).split("\n")
        out.append("")
        literal_next = block[-1].rstrip().endswith("::") or (literal_next and code)
    return out


def _process_docstring(app, what, name, obj, options, lines):
    if not name.startswith("funcad"):
        return
    if what in ("data", "attribute", "class", "function") and _directive(obj) is None \
            and name.count(".") >= 1:
        # autosummary reads the docstring of NumPy's types, a dict's, a primitive's class:
        # its table shows what the page says instead
        ns, _, short = name.rpartition(".")
        body = _described(Entry(ns, short, obj))
        lines[:] = [body[-1].strip()]
        return
    lines[:] = escape_docstring(lines)


def _check_pages(app, exception) -> None:
    """The built reference has a page for every public name (and says how many)."""
    if exception is not None or app.builder.format != "html":
        return
    built = Path(app.outdir) / "api"
    names = [e.fullname for ns in namespaces() for e in public_entries(ns)]
    missing = [n for n in names if not (built / f"{n}.html").exists()]
    if missing:
        raise RuntimeError(f"the API reference lacks pages for {len(missing)} public names: {missing[:10]}")
    print(f"funcad API reference: a page for each of the {len(names)} public names")


def setup(app):
    # before napoleon (priority 500), which reads `a: b` in a first line as a type
    app.connect("autodoc-process-docstring", _process_docstring, priority=400)
    app.connect("build-finished", _check_pages)
    def on_init(app):
        generate(Path(app.srcdir) / "api")

    app.connect("builder-inited", on_init)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
