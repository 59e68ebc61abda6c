"""NumPy's floating-point RuntimeWarnings from funcad's own eager code are not shown.

Eagerly funcad computes with NumPy, which warns on the IEEE results it produces
("divide by zero encountered in log", "overflow encountered in exp", "invalid value").
JAX computes the same numbers silently, and funcad's results are the intended IEEE
values, so a warning from funcad's source lines is noise. One `warnings` filter for
funcad's modules does it: it is consulted only when NumPy warns, so an eager op pays
two identity checks (`installed`, `first`, in `Primitive.bind` and funcad.numpy's fast
lanes), where an `np.errstate` around each impl would cost about a microsecond.
`warnings.catch_warnings()` swaps in a copy of the filter list and puts the old one back,
and `simplefilter("error")` puts a filter before funcad's; the checks notice either and
put the filter first again (an `import funcad` inside such a block, as under pytest's
collection, would otherwise lose it). Warnings from the user's own NumPy code are untouched;
`debug_nans`/`debug_infs` are the way to ask for errors.

>>> import warnings, funcad.numpy as fnp
>>> with warnings.catch_warnings(record=True) as log:
...     y = fnp.log(fnp.zeros(2))
>>> y.tolist(), [w.message for w in log]
([-inf, -inf], [])
"""
import warnings

_MODULES = r"funcad(\.|$)"
installed = None  # the filter list the filter was last put in
first = None  # the filter, while it is the list's first entry
NONE = [None]  # stands for an emptied list (warnings.resetwarnings) in the checks:
# `filters is not installed or (installed or NONE)[0] is not first` -> install()


def install() -> None:
    """Put the filter first in the current filter list: ahead of a user's "error" or
    "always" filter (`-W error`, `simplefilter`), which would otherwise turn funcad's IEEE
    results into exceptions that JAX never raises."""
    global installed, first
    warnings.filterwarnings("ignore", category=RuntimeWarning, module=_MODULES)  # moved to the front
    installed = warnings.filters
    first = installed[0]


def ensure() -> None:
    """`install` unless the filter is first in the current list (for the paths off the
    hot ones, which check inline)."""
    if warnings.filters is not installed or (installed or NONE)[0] is not first:
        install()


install()
