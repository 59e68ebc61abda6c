"""How much of jax.numpy and jax.lax's public surface funcad provides, measured
against the installed jax; fails if coverage drops below the floors."""
import jax.lax as jlax
import jax.numpy as jnp
import jax.scipy.special as jspecial
import jax.scipy.stats as jstats

import funcad.lax as flax
import funcad.numpy as fnp
import funcad.scipy.special as fspecial
import funcad.scipy.stats as fstats

# Measured against jax 0.12.0.1: funcad.numpy 416/416, funcad.lax 208/220 non-primitive
# names, scipy.special 54/54 and scipy.stats 30/30. linalg and fft are excluded: they are
# their own namespaces. Raise the floors as names are added.
NUMPY_FLOOR = 1.0
LAX_FLOOR = 0.96
SPECIAL_FLOOR = 0.98   # a name new in a jax patch release should not break the suite at once
STATS_FLOOR = 0.96


def _public(mod):
    return sorted(n for n in dir(mod) if not n.startswith("_"))


def _has(mod, name):
    try:
        getattr(mod, name)
        return True
    except AttributeError:  # funcad's UnsupportedError is an AttributeError
        return False


def _coverage(ref, ours, names):
    missing = [n for n in names if not _has(ours, n)]
    return (len(names) - len(missing)) / len(names), missing


def test_numpy_coverage():
    names = [n for n in _public(jnp) if n not in ("linalg", "fft")]
    frac, missing = _coverage(jnp, fnp, names)
    print(f"\nfuncad.numpy: {len(names) - len(missing)}/{len(names)} = {frac:.1%}; missing: {' '.join(missing)}")
    assert frac >= NUMPY_FLOOR, f"funcad.numpy coverage fell to {frac:.1%}; missing: {missing}"


def test_lax_coverage():
    names = [n for n in _public(jlax) if not n.endswith("_p")]
    frac, missing = _coverage(jlax, flax, names)
    print(f"\nfuncad.lax: {len(names) - len(missing)}/{len(names)} = {frac:.1%}; missing: {' '.join(missing)}")
    assert frac >= LAX_FLOOR, f"funcad.lax coverage fell to {frac:.1%}; missing: {missing}"


def test_scipy_special_and_stats_coverage():
    for ref, ours, floor in ((jspecial, fspecial, SPECIAL_FLOOR), (jstats, fstats, STATS_FLOOR)):
        names = _public(ref)
        frac, missing = _coverage(ref, ours, names)
        print(f"\n{ours.__name__}: {len(names) - len(missing)}/{len(names)} = {frac:.1%}; missing: {' '.join(missing)}")
        assert frac >= floor, f"{ours.__name__} coverage fell to {frac:.1%}; missing: {missing}"


def test_lax_names_funcad_leaves_out_say_what_to_use():
    import pytest
    from funcad import UnsupportedError
    for name, hint in (("psum_scatter_start", "psum_scatter"), ("ragged_all_to_all", "all_to_all")):
        with pytest.raises(UnsupportedError, match=hint):
            getattr(flax, name)
