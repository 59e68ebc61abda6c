"""funcad.random's typed keys (funcad.random.key) against jax.random's: key data and printing,
the key array's methods, errors, keys through jit, vmap and grad, and enable_custom_prng."""
import numpy as np
import pytest

import jax
import jax.random as jr

import funcad
import funcad.random as fr
from funcad.core.avals import float0
from tests.random.compare import SEEDS, same, ulps

jax.config.update("jax_enable_x64", True)


@pytest.mark.parametrize("seed", SEEDS)
def test_typed_key_data_and_printing(seed):
    k, kj = fr.key(seed), jr.key(seed)
    assert k.shape == () and k.ndim == 0 and k.size == 1 and str(k.dtype) == "key<fry>"
    same(fr.key_data(k), jr.key_data(kj))
    assert repr(k) == repr(kj)
    ks, kjs = fr.split(k, (2, 3)), jr.split(kj, (2, 3))
    assert ks.shape == (2, 3) and repr(ks) == repr(kjs)
    same(fr.key_data(ks), jr.key_data(kjs))
    same(fr.key_data(fr.fold_in(k, 5)), jr.key_data(jr.fold_in(kj, 5)))
    same(fr.normal(k, (4,)), jr.normal(kj, (4,)))
    same(fr.randint(k, (4,), 0, 9), jr.randint(kj, (4,), 0, 9))
    same(fr.gamma(k, 1.5, (3,)), jr.gamma(kj, 1.5, (3,)))


def test_typed_key_array_methods():
    ks, kjs = fr.split(fr.key(0), (2, 3)), jr.split(jr.key(0), (2, 3))
    views = [lambda a: a[0], lambda a: a[:, 1], lambda a: a[None], lambda a: a[..., -1],
             lambda a: a.reshape(6), lambda a: a.reshape(3, -1), lambda a: a.ravel(),
             lambda a: a.T, lambda a: a.transpose(1, 0), lambda a: a[:1].squeeze(0), lambda a: a.flatten()]
    for v in views:
        got, want = v(ks), v(kjs)
        assert got.shape == want.shape
        same(fr.key_data(got), jr.key_data(want))
    assert len(ks) == 2 and [x.shape for x in ks] == [(3,), (3,)]
    same(fr.key_data(list(ks)[1]), jr.key_data(list(kjs)[1]))
    same(ks == ks, np.ones((2, 3), bool))
    same(ks[0] != ks[1], np.ones(3, bool))
    same(fr.key(3) == fr.key(3), np.True_)
    assert fr.key_impl(ks) == jr.key_impl(kjs) == fr.key_impl(fr.PRNGKey(0)) == "threefry2x32"
    assert fr.key_dtype() == ks.dtype and fr.key_dtype("threefry2x32") == ks.dtype
    data = np.array([[1, 2], [3, 4]], np.uint32)
    same(fr.key_data(fr.wrap_key_data(data)), data)
    assert fr.wrap_key_data(data).shape == (2,)
    same(fr.key_data(fr.clone(ks)), fr.key_data(ks))
    assert isinstance(fr.clone(ks), type(ks)) and isinstance(fr.clone(fr.PRNGKey(0)), np.ndarray)
    # raw keys stay raw: split and fold_in of a uint32 key give uint32 keys
    assert isinstance(fr.split(fr.PRNGKey(0)), np.ndarray)


def test_typed_key_errors():
    k = fr.key(0)
    with pytest.raises(TypeError, match="len"):
        len(k)
    with pytest.raises(TypeError, match="0-d key array"):
        iter(k)
    with pytest.raises(TypeError, match="key_data"):
        np.asarray(k)
    with pytest.raises(TypeError, match="unrecognized type"):
        fr.key(0, impl=4)
    with pytest.raises(ValueError, match="unrecognized PRNG implementation"):
        fr.key(0, impl="foo")
    with pytest.raises(ValueError, match="both"):
        fr.key(0, impl="threefry2x32", dtype=fr.key_dtype())
    with pytest.raises(TypeError, match="end with"):
        fr.wrap_key_data(np.zeros(3, np.uint32))
    with pytest.raises(TypeError, match="uint32"):
        fr.wrap_key_data(np.zeros(2, np.int32))
    with pytest.raises(TypeError, match="scalar seed, but was given a PRNG key"):
        fr.key(k)
    with pytest.raises(TypeError, match="scalar seed, but was given a PRNG key"):
        fr.PRNGKey(k)
    with pytest.raises(ValueError, match="single key"):
        fr.normal(fr.split(k), (2,))
    with pytest.raises(TypeError, match="two key arrays"):
        k == 3  # noqa: B015
    with pytest.raises(TypeError, match="reshape"):
        fr.split(k, 4).reshape(3)
    with pytest.raises(funcad.core.errors.FuncadTypeError, match="allow_int"):
        funcad.grad(lambda k: fr.normal(k))(k)


def test_typed_keys_through_transforms():
    k, kj = fr.key(7), jr.key(7)
    out = funcad.jit(lambda k: fr.split(k))(k)
    assert out.shape == (2,) and str(out.dtype) == "key<fry>"
    same(fr.key_data(out), jr.key_data(jr.split(kj)))
    same(funcad.jit(lambda k: fr.normal(k, (3,)))(k), jr.normal(kj, (3,)))
    keys, kjs = fr.split(k, 4), jr.split(kj, 4)
    same(funcad.jit(funcad.vmap(lambda k: fr.normal(k, (3,))))(keys),
         jax.vmap(lambda k: jr.normal(k, (3,)))(kjs))
    vs = funcad.vmap(fr.split)(keys)
    assert vs.shape == (4, 2)
    same(fr.key_data(vs), jr.key_data(jax.vmap(jr.split)(kjs)))

    def run(r, key):
        def step(c, _):
            c, sub = r.split(c)
            return c, r.uniform(sub, (2,))
        return step
    kf, xs = funcad.lax.scan(run(fr, None), k, None, length=4)
    kjf, xjs = jax.lax.scan(run(jr, None), kj, None, length=4)
    same(fr.key_data(kf), jr.key_data(kjf))
    same(xs, xjs)
    kl = funcad.lax.fori_loop(0, 3, lambda i, c: fr.fold_in(c, i), k)
    same(fr.key_data(kl), jr.key_data(jax.lax.fori_loop(0, 3, lambda i, c: jr.fold_in(c, i), kj)))
    g = funcad.grad(lambda k, x: x * fr.normal(k), argnums=(0, 1), allow_int=True)(k, 2.0)
    gj = jax.grad(lambda k, x: x * jr.normal(k), argnums=(0, 1), allow_int=True)(kj, 2.0)
    assert g[0].dtype == float0 and g[0].shape == gj[0].shape == ()
    ulps(g[1], gj[1], 4)  # eager grad runs erf_inv op by op (SciPy), not XLA
    gs = funcad.grad(lambda k, x: (x * fr.normal(k[0])), allow_int=True)(keys, 1.0)
    assert gs.dtype == float0 and gs.shape == (4,)


def test_enable_custom_prng_types_keys_as_jax_does():
    import warnings
    import funcad.random as fr

    def run(lib, flag):
        r = lib.random
        with flag(True), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            k = r.PRNGKey(7)
            out = {"PRNGKey": str(k.dtype), "split": str(r.split(k, 3).dtype),
                   "fold_in": str(r.fold_in(k, 2).dtype), "clone": str(r.clone(k).dtype)}
            raw = r.key_data(k)
            out["split(raw)"] = str(r.split(raw).dtype)
            bits = np.asarray(r.bits(raw, (4,), dtype=np.uint32))
            out["normal"] = np.asarray(r.normal(k, (3,), dtype=np.float32)).tolist()
        out["warned"] = sorted({(w.category.__name__, "deprecated" in str(w.message)) for w in caught})
        return out, bits

    ours, our_bits = run(funcad, funcad.enable_custom_prng)
    theirs, their_bits = run(jax, jax.enable_custom_prng)
    np.testing.assert_array_equal(ours.pop("normal"), theirs.pop("normal"))
    assert ours == theirs and ours["PRNGKey"] == "key<fry>" and ours["warned"] == [("FutureWarning", True)]
    np.testing.assert_array_equal(our_bits, their_bits)
    assert fr.PRNGKey(7).dtype == np.uint32 and not funcad.enable_custom_prng.value  # off again
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fr.normal(fr.PRNGKey(7), (2,))  # off: raw keys do not warn
