"""A user-defined extended dtype (JAX's private `ExtendedDType` with `_rules`, as
flax's fp8 metadata type `fp8_meta32`) is refused by name: funcad has extended dtypes
only for PRNG keys. JAX takes such a dtype only from its private module, so the test
builds one with the same attributes."""
import dataclasses

import numpy as np
import pytest

import funcad
from funcad import lax

jax = pytest.importorskip("jax")


class _Rules:
    @staticmethod
    def convert_to(other_dtype, dt):
        return other_dtype == dt.float_dtype


@dataclasses.dataclass(frozen=True)
class _MetaDType:
    float_dtype: np.dtype
    _rules: type = _Rules
    type: type = funcad.dtypes.extended

    def __repr__(self):
        return "meta32"


def test_user_extended_dtype_is_refused_by_name():
    with pytest.raises(TypeError, match=r"meta32 is a user-defined extended dtype.*only for PRNG keys"):
        lax.convert_element_type(np.ones(3, np.float32), _MetaDType(np.dtype(np.float32)))
    with pytest.raises(TypeError, match=r"meta32 is a user-defined extended dtype"):
        funcad.jit(lambda x: lax.convert_element_type(x, _MetaDType(np.dtype(np.float32))))(np.ones(3))


def test_other_non_dtypes_keep_the_plain_message():
    with pytest.raises(TypeError, match="is not a dtype; pass e.g. numpy.float32"):
        lax.convert_element_type(np.ones(3), object())
    with pytest.raises(TypeError):  # JAX refuses it too
        jax.lax.convert_element_type(np.ones(3), object())
