"""funcad.numpy.einsum_path: the contraction order and its printed cost, as JAX's."""
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp

jnp = pytest.importorskip("jax.numpy")

SHAPES = [((2, 3), (3, 100), (100, 5)), ((4, 5), (5, 6), (6, 7), (7, 2))]


@pytest.mark.parametrize("optimize", ["auto", "optimal", "greedy", True, False])
@pytest.mark.parametrize("shapes", SHAPES, ids=["three", "four"])
def test_path_and_info_match_jax(shapes, optimize):
    spec = ",".join("abcde"[i:i + 2] for i in range(len(shapes))) + "->a" + "abcde"[len(shapes)]
    ops = [np.ones(s) for s in shapes]
    path, info = fnp.einsum_path(spec, *ops, optimize=optimize)
    jpath, jinfo = jnp.einsum_path(spec, *ops, optimize=optimize)
    assert path == jpath and str(info) == str(jinfo)
    want = np.einsum(spec, *ops)
    np.testing.assert_allclose(fnp.einsum(spec, *ops, optimize=path), want)


def test_sublist_form_and_traced_operands():
    a, b = np.ones((2, 3)), np.ones((3, 4))
    path, _ = fnp.einsum_path(a, [0, 1], b, [1, 2], [0, 2])
    assert path == jnp.einsum_path(a, [0, 1], b, [1, 2], [0, 2])[0]

    def f(x, y):
        p, info = fnp.einsum_path("ij,jk->ik", x, y)
        assert p == [(0, 1)] and "ij,jk->ik" in str(info)
        return fnp.einsum("ij,jk->ik", x, y, optimize=p)
    np.testing.assert_allclose(funcad.jit(f)(a, b), a @ b)
