"""NumPy's floating-point RuntimeWarnings from funcad's own eager code are not shown.

Eagerly funcad computes with NumPy, which warns on the IEEE results it produces
("divide by zero encountered in log", "overflow encountered in exp", "invalid value").
JAX computes the same numbers silently, and funcad's results are the intended IEEE
values, so a warning from funcad's source lines is noise. One `warnings` filter for
funcad's modules does it: it is consulted only when NumPy warns, so an eager op pays
one identity check (`installed`, in `Primitive.bind` and funcad.numpy's fast lane), where an `np.errstate` around
each impl would cost about a microsecond. `warnings.catch_warnings()` swaps in a copy
of the filter list and puts the old one back; the check notices the new list and puts
the filter in it (an `import funcad` inside such a block, as under pytest's collection,
would otherwise lose it). Warnings from the user's own NumPy code are untouched;
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


def install() -> None:
    """Put the filter first in the current filter list (once per list): a list copied by
    `catch_warnings` and then given an "error" filter in front (pytest's
    `filterwarnings = error`, per test) must not turn funcad's IEEE results into errors.
    `filterwarnings` moves an existing equal filter to the front."""
    global installed
    warnings.filterwarnings("ignore", category=RuntimeWarning, module=_MODULES)
    installed = warnings.filters


install()
