"""jax.experimental.layout's Layout and Format in funcad, against JAX's."""
from __future__ import annotations

import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad.core.errors import UnsupportedError
from funcad.experimental.layout import Format, Layout

jax = pytest.importorskip("jax")
from jax.experimental import layout as jl  # noqa: E402


def test_layout_and_format_values_match_jax():
    for args in [((1, 0),), ((0, 1, 2), ((8, 128),)), ((0,), None, 4)]:
        got, want = Layout(*args), jl.Layout(*args)
        assert repr(got) == repr(want)
        assert (got.major_to_minor, got.tiling, got.sub_byte_element_size_in_bits) == \
            (want.major_to_minor, want.tiling, want.sub_byte_element_size_in_bits)
        assert got == Layout(*args) and hash(got) == hash(Layout(*args))
        assert got.update(tiling=()) == Layout(got.major_to_minor, (), got.sub_byte_element_size_in_bits)
    assert repr(Layout.AUTO) == repr(jl.Layout.AUTO) == "AutoLayout"
    assert repr(Format()) == repr(jl.Format()) == "Format(layout=None, sharding=None)"
    s = funcad.sharding.SingleDeviceSharding(funcad.devices()[0])
    f = Format(Layout((0,)), s)
    assert f.layout == Layout((0,)) and f.sharding is s and f == Format(Layout((0,)), s)
    for m in (jl, funcad.experimental.layout):
        with pytest.raises(ValueError, match="Sharding has to be concrete"):
            m.Format(m.Layout((0,)))
        with pytest.raises(TypeError, match="layout argument"):
            m.Format((0,))
        with pytest.raises(ValueError, match="rank of the value"):
            m.Layout((0, 1)).check_compatible_aval((3,))


def test_format_in_with_sharding_constraint():
    x = np.arange(6.0).reshape(2, 3)
    s = funcad.sharding.SingleDeviceSharding(funcad.devices()[0])
    js = jax.sharding.SingleDeviceSharding(jax.devices()[0])
    want = jax.jit(lambda v: jax.lax.with_sharding_constraint(v * 2, jl.Format(None, js)))(x)
    for layout in (None, Layout.AUTO, Layout.for_array(x)):
        got = funcad.jit(lambda v: funcad.lax.with_sharding_constraint(v * 2, Format(layout, s)))(x)
        np.testing.assert_array_equal(got, want)
    assert Layout.for_array(fnp.ones((2, 3, 4))) == Layout((0, 1, 2), ())
    with pytest.raises(UnsupportedError, match="layout assignment"):
        funcad.jit(lambda v: funcad.lax.with_sharding_constraint(v, Format(Layout((1, 0)), s)))(x)
