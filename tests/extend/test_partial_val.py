"""partial_eval.PartialVal against JAX's."""
import numpy as np
import pytest
from jax.interpreters import partial_eval as jpe
import jax.core as jcore

from funcad.core.avals import ShapedArray
from funcad.interpreters import partial_eval as pe


def test_unknown_and_known_match_jax():
    u, ju = pe.PartialVal.unknown(ShapedArray((2, 3), np.float32)), jpe.PartialVal.unknown(jcore.ShapedArray((2, 3), np.float32))
    assert (u.is_known(), u.get_known()) == (ju.is_known(), ju.get_known())
    assert u.get_aval().shape == ju.get_aval().shape and u.get_aval().dtype == ju.get_aval().dtype
    x = np.ones((4,), np.float32)
    k, jk = pe.PartialVal.known(x), jpe.PartialVal.known(x)
    assert (k.is_known(), k.get_known() is x) == (jk.is_known(), jk.get_known() is x)
    assert k.get_aval().shape == jk.get_aval().shape == (4,)
    assert str(k.get_aval().dtype) == str(jk.get_aval().dtype)
    pv, const = k
    assert pv is None and const is x


def test_rejects_non_aval():
    with pytest.raises(TypeError, match="abstract value"):
        pe.PartialVal((np.float32, None))
