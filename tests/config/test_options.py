"""Options are declared once (funcad/core/options.py) and everything else follows:
config names, JAX's `jax_` names, top-level scopes, environment variables, jit's cache
key and the names explain_cache_misses gives its entries."""
from __future__ import annotations

import logging
import os
import subprocess
import sys

import numpy as np
import pytest

import funcad
from funcad.core import options


def test_every_declaration_is_a_config_option_under_both_names():
    for name, opt in options.OPTIONS.items():
        assert funcad.config.read(name) == funcad.config.read("jax_" + name) == getattr(funcad.config, name)
        assert opt.env.startswith("FUNCAD_") and opt.doc
        assert name in funcad.config.describe() and name in funcad.config.__doc__


def test_scopes_come_from_the_declarations():
    declared = {n for n, o in options.OPTIONS.items() if o.scope is not options.NO_SCOPE}
    assert declared == set(funcad.config.scopes)
    for name in declared | {"transfer_guard"}:
        assert name in funcad.__all__ and callable(getattr(funcad, name)), name
    with funcad.softmax_custom_jvp(True):
        assert funcad.softmax_custom_jvp.value is True and options.softmax_custom_jvp is True
    assert funcad.softmax_custom_jvp.value is False
    with pytest.raises(TypeError, match="needs the value"):
        with funcad.numpy_rank_promotion():
            pass


def test_jit_key_follows_the_declarations():
    names = [o.name for o in options.OPTIONS.values() if o.jit_key]
    assert options.jit_key_names == tuple("jax_" + n for n in names)
    assert options.jit_key == tuple(funcad.config.read(n) for n in names)
    with funcad.numpy_rank_promotion("warn"):
        assert options.jit_key[names.index("numpy_rank_promotion")] == "warn"
    assert options.jit_key == tuple(funcad.config.read(n) for n in names)


def test_a_jit_key_option_retraces_and_is_named(caplog):
    traces = []
    f = funcad.jit(lambda x: traces.append(1) or x * 2)
    f(np.ones(2))
    with funcad.explain_cache_misses(True), caplog.at_level(logging.WARNING, logger="funcad"):
        with funcad.softmax_custom_jvp(True):
            f(np.ones(2))
    assert len(traces) == 2
    assert "jax_softmax_custom_jvp differs: now True and before False" in caplog.text


def test_validators_refuse_bad_values():
    with pytest.raises(funcad.FuncadTypeError, match="softmax_custom_jvp takes True or False"):
        funcad.config.update("softmax_custom_jvp", "maybe")
    with pytest.raises(funcad.FuncadTypeError, match="numpy_rank_promotion takes one of 'allow'"):
        funcad.config.update("jax_numpy_rank_promotion", "loud")
    with pytest.raises(AttributeError, match="Did you mean 'softmax_custom_jvp'"):
        funcad.config.update("softmax_custom_jv", True)


@pytest.mark.slow  # a fresh interpreter (seconds); the in-process checks above stay
def test_environment_variables_set_options_at_start_up():
    env = dict(os.environ, FUNCAD_SOFTMAX_CUSTOM_JVP="1", JAX_ENABLE_X64="0",
               FUNCAD_NUMPY_RANK_PROMOTION="raise")
    code = ("import funcad; from funcad.core import options as o; "
            "print(funcad.config.softmax_custom_jvp, funcad.config.enable_x64, "
            "o.numpy_rank_promotion, o.jit_key[o.jit_key_names.index('jax_enable_x64')])")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    assert out.stdout.split() == ["True", "False", "raise", "False"]
