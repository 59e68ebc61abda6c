"""The LAPACK custom-call plumbing (funcad/lowering/lapack.py) on its own:
a hand-written module calls jaxlib's getrf and potrf kernels through XLA."""
import numpy as np
import pytest
import scipy.linalg as sl

from funcad.core.avals import ShapedArray
from funcad.core.errors import FuncadTypeError
from funcad.lowering import lapack, xla
from funcad.lowering.stablehlo import LoweringContext, Module, Value, tensor_type


def _module(ctx, args, outs):
    params = ", ".join(f"{a.name}: {tensor_type(a.aval)}" for a in args)
    types = ", ".join(tensor_type(o.aval) for o in outs)
    return "\n".join([f"module @m {{", f"  func.func public @main({params}) -> ({types}) {{", *ctx.lines,
                      f"    func.return {', '.join(o.name for o in outs)} : {types}", "  }", "}"])


def _run(text, *xs):
    exe = xla.compile_text(text, "cpu")
    dev = xla.get_device("cpu")
    return [np.asarray(r) for r in xla.runner(exe, None)([xla.device_put(x, dev) for x in xs])]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_getrf_and_potrf_match_scipy(dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 4))
    x = (x @ np.swapaxes(x, -1, -2) + 4 * np.eye(4)).astype(dtype)
    a = ShapedArray(x.shape, dtype)
    ctx = LoweringContext(Module())
    arg = Value("%arg0", a)
    lu, piv, info = lapack.ffi_call(ctx, lapack.lapack_target("getrf", dtype), [arg],
                                    [a, ShapedArray((2, 4), np.int32), ShapedArray((2,), np.int32)],
                                    aliases={0: 0})
    chol, info2 = lapack.ffi_call(ctx, lapack.lapack_target("potrf", dtype), [arg],
                                  [a, ShapedArray((2,), np.int32)], attrs={"uplo": lapack.char("L")},
                                  aliases={0: 0})
    lu_, piv_, info_, chol_, info2_ = _run(_module(ctx, [arg], [lu, piv, info, chol, info2]), x)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for i in range(2):
        ref_lu, ref_piv = sl.lu_factor(x[i])
        np.testing.assert_allclose(lu_[i], ref_lu, rtol=tol, atol=tol)
        np.testing.assert_array_equal(piv_[i] - 1, ref_piv)  # LAPACK's pivots are 1-based
        np.testing.assert_allclose(np.tril(chol_[i]), np.linalg.cholesky(x[i]), rtol=tol, atol=tol)
    np.testing.assert_array_equal(info_, 0)
    np.testing.assert_array_equal(info2_, 0)


def test_registration_is_idempotent_and_lists_kernels():
    names = lapack.register_lapack()
    assert lapack.register_lapack() is names
    for routine in ("getrf", "potrf", "trsm", "geqrf", "orgqr", "syevd", "gesdd", "geev"):
        assert lapack.lapack_target(routine, np.float64) in names


def test_target_names_and_bad_dtype():
    assert lapack.lapack_target("getrf", np.float32) == "lapack_sgetrf_ffi"
    assert lapack.lapack_target("syevd", np.complex128) == "lapack_zsyevd_ffi"
    with pytest.raises(FuncadTypeError, match="float32, float64"):
        lapack.lapack_target("getrf", np.int32)


def test_attribute_text():
    assert lapack.char("U") == "85 : ui8"
    assert lapack.i32(3) == "3 : i32" and lapack.i64(-1) == "-1 : i64"
    assert lapack.u8(2) == "2 : ui8" and lapack.boolean(True) == "true"
