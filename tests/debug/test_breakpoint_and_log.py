"""funcad.debug.breakpoint and funcad.debug.log against JAX's: the debugger's commands fed on
stdin (as JAX's own tests do) eagerly, under jit, grad and vmap, its frames and quit, and
the log records under transformations."""
from __future__ import annotations

import io
import logging
import os
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad.core.errors import FuncadTypeError, FuncadValueError


def _debugged(cmds):
    out = io.StringIO()

    def f(x):
        y = fnp.sin(x) * 2
        funcad.debug.breakpoint(stdin=io.StringIO(cmds), stdout=out, backend="cli")
        return y
    return f, out


def _jax_debugged(cmds):
    out = io.StringIO()

    def f(x):
        y = jnp.sin(x) * 2
        jax.debug.breakpoint(stdin=io.StringIO(cmds), stdout=out, backend="cli")
        return y
    return f, out


@pytest.mark.parametrize("wrap", ["eager", "jit", "grad"])
def test_breakpoint_shows_live_values(wrap):
    f, out = _debugged("p y\np x + 1\nc\n")
    t = {"eager": lambda f: f, "jit": funcad.jit, "grad": funcad.grad}[wrap]
    t(f)(np.float64(0.5))
    lines = out.getvalue().splitlines()
    assert lines[0] == "Entering jdb:" and lines[1].startswith("(jdb) ")

    def number(line):  # the value in "(jdb) Array(0.95, dtype=float64)" or "np.float64(1.5)"
        return float(re.search(r"\(([-\d.e+]+)", line).group(1))
    assert number(lines[1]) == pytest.approx(2 * np.sin(0.5))
    assert number(lines[2]) == 1.5


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # JAX flattens the test frames' generators
def test_breakpoint_output_matches_jax_under_jit():
    cmds = "p y\npp {'a': x}\nfoo\nu\nd\nw\nc\n"
    ours, out = _debugged(cmds)
    theirs, jout = _jax_debugged(cmds)
    with jax.enable_x64(True) if hasattr(jax, "enable_x64") else jax.experimental.enable_x64():
        funcad.jit(ours)(np.float64(0.5))
        jax.jit(theirs)(np.float64(0.5))
    a = out.getvalue().replace(__file__, "F").splitlines()
    b = jout.getvalue().replace(__file__, "F").splitlines()
    assert a[0] == b[0] and a[1] == b[1] and a[2] == b[2]   # intro, p y, pp
    assert a[3] == b[3] == "(jdb) *** NameError: name 'foo' is not defined"
    assert "F(" in a[4] and "Traceback:" in "\n".join(a)


def test_breakpoint_under_vmap_stops_once_per_entry():
    f, out = _debugged("p y\nc\np y\nc\n")
    funcad.vmap(f)(np.array([0.0, 0.5]))
    text = out.getvalue()
    assert text.count("Entering jdb:") == 2 and "Array(0., dtype=float64)" in text


def test_breakpoint_token_and_frames():
    out = io.StringIO()

    def f(x):
        y = x * 3
        t = funcad.debug.breakpoint(stdin=io.StringIO("p y\nc\n"), stdout=out, token=y, num_frames=1)
        return t + 1
    assert funcad.jit(f)(2.0) == 7.0
    assert "Array(6., dtype=float64)" in out.getvalue()
    with pytest.raises(FuncadValueError, match="mutually exclusive"):
        funcad.debug.breakpoint(token=1.0, ordered=True)
    # filter_frames=False keeps funcad's own frames, so there are more of them
    out2 = io.StringIO()
    funcad.jit(lambda x: funcad.debug.breakpoint(stdin=io.StringIO("w\nc\n"), stdout=out2,
                                                 filter_frames=False) or x)(1.0)
    assert "funcad" + os.sep in out2.getvalue()


def test_breakpoint_quit_exits():
    f, _ = _debugged("q\n")
    with pytest.raises(SystemExit):
        f(1.0)


def test_debug_log_records_under_transforms(caplog):
    def f(x):
        funcad.debug.log("x = {x}", x=x)
        funcad.debug.log(ordered=True)("two {}", x)
        return fnp.sin(x)
    with caplog.at_level(logging.INFO, logger="funcad.debug"):
        funcad.jit(f)(2.0)
        funcad.vmap(f)(np.arange(2.0))
        funcad.grad(f)(3.0)
    msgs = [r.getMessage() for r in caplog.records if r.name == "funcad.debug"]
    assert msgs == ["x = 2.0", "two 2.0", "x = 0.0", "x = 1.0", "two 0.0", "two 1.0", "x = 3.0", "two 3.0"]
    rec = next(r for r in caplog.records if r.name == "funcad.debug")
    assert rec.levelno == logging.INFO and rec.pathname == __file__
    with pytest.raises(FuncadValueError, match="Unused keyword"):
        funcad.debug.log("x", y=1)
    with pytest.raises(FuncadTypeError, match="two-call form"):
        funcad.debug.log(None, 1)
