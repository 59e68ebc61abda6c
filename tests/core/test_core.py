"""The core: avals, the IR and its type checker, the pretty-printer, make_jaxpr,
eval_jaxpr, primitives' dispatch and the trace context."""
from __future__ import annotations

import enum
from collections import namedtuple

import numpy as np
import pytest

import funcad
import funcad.lax as lax
import funcad.numpy as fnp
from funcad.core import (ClosedJaxpr, Eqn, Jaxpr, JaxprTypeError, Literal, MissingRuleError,
                         Primitive, ShapeDtypeStruct, ShapedArray, TracerLeakError, Var, aval_of,
                         eval_jaxpr, typecheck)
from funcad.core.avals import result_type
from funcad.core.trace import abstract_eval_rules, ctx, impl_rules, set_trace
from funcad.primitives.elementwise import add_p, mul_p, sin_p

F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)

# ---------------------------------------------------------------- avals ----


@pytest.mark.parametrize("shape,dtype,text", [
    ((3, 4), np.float32, "f32[3,4]"), ((), np.float64, "f64[]"), ((0,), np.int32, "i32[0]"),
    ((2,), np.bool_, "bool[2]"), ((1, 1, 1), np.uint8, "u8[1,1,1]"), ((5,), np.complex64, "c64[5]"),
    ((2,), np.float16, "f16[2]"), ((), funcad.float0, "float0[]")])
def test_short_types(shape, dtype, text):
    assert ShapedArray(shape, dtype).str_short() == text


def test_shaped_array_equality_includes_weak_type():
    a, b = ShapedArray((2,), F32), ShapedArray([2], np.float32)
    assert a == b and hash(a) == hash(b)
    assert a != ShapedArray((2,), F32, weak_type=True)
    assert a != ShapedArray((2,), F64)
    assert a.update(dtype=F64) == ShapedArray((2,), F64)
    assert (a.ndim, a.size, ShapedArray((2, 3, 4), F32).size, ShapedArray((), F32).size) == (1, 2, 24, 1)
    assert repr(ShapedArray((), F32, True)) == "ShapedArray(float32[], weak_type=True)"  # JAX's


class Color(enum.IntEnum):
    RED = 1


@pytest.mark.parametrize("value,aval", [
    (1.5, ShapedArray((), F64, True)), (2, ShapedArray((), np.int64, True)),
    (1j, ShapedArray((), np.complex128, True)), (True, ShapedArray((), np.bool_, False)),
    (np.float32(1.0), ShapedArray((), F32)), (np.ones((2, 3), np.int8), ShapedArray((2, 3), np.int8)),
    (np.array(2.0), ShapedArray((), F64)), (Color.RED, ShapedArray((), np.int64, True))],
    ids=["float", "int", "complex", "bool", "np_float32", "ndarray", "0d_array", "int_enum"])
def test_aval_of(value, aval):
    assert aval_of(value) == aval


@pytest.mark.parametrize("value,name", [("abc", "str"), (object(), "object"), (None, "NoneType"),
                                        (np.array(["a"]), "<U1"), (np.array([None]), "object")])
def test_aval_of_non_array_names_the_type(value, name):
    with pytest.raises(funcad.FuncadTypeError, match=name):
        aval_of(value)


@pytest.mark.parametrize("avals,dtype,weak", [
    ([ShapedArray((), F32), ShapedArray((), F64, True)], F32, False),
    # a weak scalar lifting strong integers or bools to its kind stays weak (JAX's lattice)
    ([ShapedArray((), np.int32), ShapedArray((), F64, True)], F64, True),
    ([ShapedArray((), np.int32), ShapedArray((), np.int64, True)], np.int32, False),
    ([ShapedArray((), np.int64, True), ShapedArray((), F64, True)], F64, True),
    ([ShapedArray((), np.int32), ShapedArray((), F32)], F64, False),
    ([ShapedArray((), np.bool_), ShapedArray((), np.int64, True)], np.int64, True),
    ([ShapedArray((), np.uint8), ShapedArray((), np.int64, True)], np.uint8, False),
    ([ShapedArray((), F32), ShapedArray((), np.complex128, True)], np.complex64, False)],
    ids=["f32_weakf", "i32_weakf", "i32_weaki", "all_weak", "i32_f32", "bool_weaki", "u8_weaki", "f32_weakc"])
def test_result_type_is_nep50(avals, dtype, weak):
    assert result_type(*avals) == (np.dtype(dtype), weak)


# ------------------------------------------------------------- IR, typecheck ----

def _sin_mul_jaxpr():
    a, b, c = Var(ShapedArray((3,), F32)), Var(ShapedArray((3,), F32)), Var(ShapedArray((3,), F32))
    eqns = [Eqn(sin_p, [a], [b], {}), Eqn(mul_p, [b, Literal(np.float32(2.0))], [c], {})]
    return Jaxpr([], [a], eqns, [c])


def test_hand_built_jaxpr_typechecks_prints_and_runs():
    j = _sin_mul_jaxpr()
    typecheck(j)
    assert str(j) == ("{ lambda ; a:f32[3]. let\n"
                      "    b:f32[3] = sin a\n"
                      "    c:f32[3] = mul b 2.0:f32[]\n"
                      "  in (c,) }")
    x = np.array([0.0, 0.5, 1.0], np.float32)
    (out,) = eval_jaxpr(j, [], x)
    assert out.dtype == F32
    np.testing.assert_allclose(out, 2 * np.sin(x), rtol=1e-6)


def test_typecheck_rejects_use_before_binding():
    a, b = Var(ShapedArray((), F32)), Var(ShapedArray((), F32))
    j = Jaxpr([], [a], [Eqn(add_p, [a, b], [Var(ShapedArray((), F32))], {})], [a])
    with pytest.raises(JaxprTypeError, match="`add` uses f32\\[\\] variable before it is bound"):
        typecheck(j)


def test_typecheck_rejects_double_binding():
    a = Var(ShapedArray((), F32))
    j = Jaxpr([], [a], [Eqn(sin_p, [a], [a], {})], [a])
    with pytest.raises(JaxprTypeError, match="bound twice"):
        typecheck(j)


def test_typecheck_rejects_wrong_output_type():
    a, b = Var(ShapedArray((3,), F32)), Var(ShapedArray((3,), F64))
    j = Jaxpr([], [a], [Eqn(sin_p, [a], [b], {})], [b])
    with pytest.raises(JaxprTypeError, match=r"`sin` outputs f64\[3\] but its rule gives f32\[3\]"):
        typecheck(j)


def test_typecheck_rejects_unbound_output():
    a, b = Var(ShapedArray((), F32)), Var(ShapedArray((), F32))
    with pytest.raises(JaxprTypeError, match="the output uses"):
        typecheck(Jaxpr([], [a], [], [b]))


def test_typecheck_checks_the_shape_rule_of_each_equation():
    a, b = Var(ShapedArray((3,), F32)), Var(ShapedArray((3,), F32))
    j = Jaxpr([], [a, b], [Eqn(add_p, [a, b], [Var(ShapedArray((3,), F32))], {})], [a])
    typecheck(j)
    bad = Jaxpr([], [a], [Eqn(add_p, [a, Var(ShapedArray((4,), F32))], [b], {})], [b])
    with pytest.raises(JaxprTypeError):
        typecheck(bad)


# ------------------------------------------------------------ pretty-printer ----

SNAPSHOTS = [
    ("unary_and_literal", lambda x: fnp.sum(fnp.sin(x) * 2.0, axis=0), (np.ones((2, 3), np.float32),),
     """{ lambda ; a:f32[2,3]. let
    b:f32[2,3] = sin a
    c:f32[2,3] = mul b 2.0:f32[]
    d:f32[3] = reduce_sum[axes=(0,)] c
  in (d,) }"""),
    ("two_args_two_outs", lambda x, y: (x @ y, x.T), (np.ones((2, 3)), np.ones((3, 4))),
     """{ lambda ; a:f64[2,3] b:f64[3,4]. let
    c:f64[2,4] = dot_general[dimension_numbers=(((1,), (0,)), ((), ()))] a b
    d:f64[3,2] = transpose[permutation=(1, 0)] a
  in (c, d) }"""),
    ("dtype_param", lambda x: x.astype(np.int32), (np.ones(3),),
     """{ lambda ; a:f64[3]. let
    b:i32[3] = convert_element_type[new_dtype=i32, weak_type=False] a
  in (b,) }"""),
    ("multiple_results", lambda x: lax.sort([x, -x], 0, num_keys=1), (np.ones(3, np.float32),),
     """{ lambda ; a:f32[3]. let
    b:f32[3] = neg a
    c:f32[3] d:f32[3] = sort[dimension=0, num_keys=1] a b
  in (c, d) }"""),
    ("no_equations", lambda x: x, (np.ones(3),), "{ lambda ; a:f64[3]. let  in (a,) }"),
    ("literal_output", lambda x: (x, 1.0), (np.ones(3),), "{ lambda ; a:f64[3]. let  in (a, 1.0:f64[]) }"),
    ("no_inputs", lambda: lax.iota(np.int32, 3), (),
     """{ lambda ; . let
    a:i32[3] = iota[dimension=0, dtype=i32, shape=(3,)]
  in (a,) }"""),
    ("int_and_bool_literals", lambda x, b: (x + 1, b & True), (np.ones(2, np.int32), np.ones(2, bool)),
     """{ lambda ; a:i32[2] b:bool[2]. let
    c:i32[2] = add a 1:i32[]
    d:bool[2] = and b True:bool[]
  in (c, d) }"""),
]


@pytest.mark.parametrize("fun,args,text", [pytest.param(f, a, t, id=i) for i, f, a, t in SNAPSHOTS])
def test_pretty_printer_snapshots(fun, args, text):
    assert str(funcad.make_jaxpr(fun)(*args)) == text


def test_closed_over_array_is_hoisted_to_a_constvar():
    c = np.arange(3.0)
    closed = funcad.make_jaxpr(lambda x: x * c + c)(np.ones(3))
    assert str(closed) == ("{ lambda a:f64[3]; b:f64[3]. let\n"
                           "    c:f64[3] = mul b a\n"
                           "    d:f64[3] = add c a\n"
                           "  in (d,) }")
    assert len(closed.consts) == 1 and closed.consts[0] is c
    np.testing.assert_array_equal(closed(np.full(3, 2.0))[0], 3 * c)


def test_closed_over_scalars_become_literals():
    k, n = 2.5, np.float32(3.0)
    closed = funcad.make_jaxpr(lambda x: x * k + n)(np.ones(2, np.float32))
    assert closed.consts == []
    assert "mul a 2.5:f32[]" in str(closed) and "add b 3.0:f32[]" in str(closed)


def test_names_continue_past_z():
    def f(x):
        for _ in range(30):
            x = fnp.sin(x)
        return x
    text = str(funcad.make_jaxpr(f)(1.0))
    assert "z:f64[] = sin y" in text and "ba:f64[] = sin z" not in text
    assert "aa:f64[] = sin z" in text and "ae:f64[] = sin ad" in text


_call_p = Primitive("test_call", multiple_results=True)


def _call_impl(*args, jaxpr, name):
    return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


@pytest.fixture
def call_primitive(monkeypatch):
    """A call primitive with a ClosedJaxpr parameter, registered for this test only."""
    monkeypatch.setitem(impl_rules, _call_p, _call_impl)
    monkeypatch.setitem(abstract_eval_rules, _call_p, lambda *avals, jaxpr, name: list(jaxpr.out_avals))
    return _call_p


def test_nested_jaxpr_parameter_prints_in_place(call_primitive):
    inner = funcad.make_jaxpr(lambda x: fnp.sin(x) * 2.0)(np.ones(3))
    outer = funcad.make_jaxpr(lambda x: call_primitive.bind(fnp.cos(x), jaxpr=inner, name="f")[0] + 1.0)(np.ones(3))
    assert str(outer) == """{ lambda ; a:f64[3]. let
    b:f64[3] = cos a
    c:f64[3] = test_call[
      jaxpr={ lambda ; d:f64[3]. let
          e:f64[3] = sin d
          f:f64[3] = mul e 2.0:f64[]
        in (f,) }
      name=f
    ] b
    g:f64[3] = add c 1.0:f64[]
  in (g,) }"""
    typecheck(outer.jaxpr)
    x = np.linspace(0, 1, 3)
    np.testing.assert_allclose(outer(x)[0], 2 * np.sin(np.cos(x)) + 1, rtol=1e-14)


def test_doubly_nested_jaxpr_indents_each_level(call_primitive):
    inner = funcad.make_jaxpr(fnp.sin)(1.0)
    mid = funcad.make_jaxpr(lambda x: call_primitive.bind(x, jaxpr=inner, name="in"))(1.0)
    outer = funcad.make_jaxpr(lambda x: call_primitive.bind(x, jaxpr=mid, name="mid"))(1.0)
    assert str(outer) == """{ lambda ; a:f64[]. let
    b:f64[] = test_call[
      jaxpr={ lambda ; c:f64[]. let
          d:f64[] = test_call[
            jaxpr={ lambda ; e:f64[]. let
                f:f64[] = sin e
              in (f,) }
            name=in
          ] c
        in (d,) }
      name=mid
    ] a
  in (b,) }"""
    typecheck(outer.jaxpr)
    assert outer(0.5)[0] == np.sin(0.5)


def test_typecheck_descends_into_nested_jaxprs(call_primitive):
    a, b = Var(ShapedArray((3,), F32)), Var(ShapedArray((3,), F64))
    bad_inner = ClosedJaxpr(Jaxpr([], [a], [Eqn(sin_p, [a], [b], {})], [b]), [])
    x, y = Var(ShapedArray((3,), F32)), Var(ShapedArray((3,), F64))
    outer = Jaxpr([], [x], [Eqn(call_primitive, [x], [y], {"jaxpr": bad_inner, "name": "f"})], [y])
    with pytest.raises(JaxprTypeError, match="sin"):
        typecheck(outer)


def test_tuple_of_jaxprs_prints_one_per_line():
    j1, j2 = _sin_mul_jaxpr(), _sin_mul_jaxpr()
    x, y = Var(ShapedArray((3,), F32)), Var(ShapedArray((3,), F32))
    outer = Jaxpr([], [x], [Eqn(_call_p, [x], [y], {"branches": (j1, j2)})], [y])
    assert str(outer) == """{ lambda ; a:f32[3]. let
    b:f32[3] = test_call[
      branches=(
        { lambda ; c:f32[3]. let
            d:f32[3] = sin c
            e:f32[3] = mul d 2.0:f32[]
          in (e,) }
        { lambda ; f:f32[3]. let
            g:f32[3] = sin f
            h:f32[3] = mul g 2.0:f32[]
          in (h,) }
      )
    ] a
  in (b,) }"""


# ---------------------------------------------------------------- make_jaxpr ----

def test_make_jaxpr_static_argnums():
    f = funcad.make_jaxpr(lambda x, n: x ** n, static_argnums=1)
    assert "integer_pow[y=3]" in str(f(np.ones(2), 3))
    assert "integer_pow[y=2]" in str(f(np.ones(2), 2))
    assert f(np.ones(2), 3).in_avals == [ShapedArray((2,), F64)]
    g = funcad.make_jaxpr(lambda mode, x: fnp.sin(x) if mode == "sin" else fnp.cos(x), static_argnums=(0,))
    assert g("cos", 1.0).eqns[0].prim.name == "cos"
    h = funcad.make_jaxpr(lambda x, n: x * n, static_argnums=-1)
    assert h(np.ones(2), 4).in_avals == [ShapedArray((2,), F64)]


Point = namedtuple("Point", "x y")


def test_make_jaxpr_pytrees_in_and_out():
    def f(p, d):
        return {"sum": p.x + d["w"][0], "prod": (p.y * d["w"][1], None)}
    p = Point(np.ones(2), np.ones(2, np.float32))
    d = {"w": [np.ones(2), np.float32(3.0)]}
    closed, shapes = funcad.make_jaxpr(f, return_shape=True)(p, d)
    assert [a.str_short() for a in closed.in_avals] == ["f64[2]", "f32[2]", "f64[2]", "f32[]"]
    assert shapes == {"sum": ShapeDtypeStruct((2,), F64), "prod": (ShapeDtypeStruct((2,), F32), None)}
    out = closed(np.ones(2), np.full(2, 2.0, np.float32), np.full(2, 5.0), np.float32(3.0))
    np.testing.assert_array_equal(out[0], [6.0, 6.0])  # flat outputs in sorted-key order: prod, then sum
    np.testing.assert_array_equal(out[1], [6.0, 6.0])
    assert out[0].dtype == F32 and out[1].dtype == F64


def test_make_jaxpr_keyword_arguments_and_shape_dtype_structs():
    closed = funcad.make_jaxpr(lambda x, *, scale: x * scale)(ShapeDtypeStruct((2, 2), np.float32),
                                                              scale=ShapeDtypeStruct((), np.float32))
    assert [a.str_short() for a in closed.in_avals] == ["f32[2,2]", "f32[]"]
    assert closed.out_avals == [ShapedArray((2, 2), F32)]


def test_make_jaxpr_of_eval_jaxpr_restages_the_same_program():
    closed = funcad.make_jaxpr(lambda x: fnp.tanh(x) @ x.T)(np.ones((2, 3)))
    again = funcad.make_jaxpr(lambda x: eval_jaxpr(closed.jaxpr, closed.consts, x)[0])(np.ones((2, 3)))
    assert str(again) == str(closed)


def test_eval_jaxpr_checks_the_argument_count():
    closed = funcad.make_jaxpr(fnp.add)(1.0, 2.0)
    with pytest.raises(TypeError, match="takes 2 arguments, got 1"):
        closed(1.0)


def test_eager_ops_return_read_only_funcad_arrays_and_leave_no_trace():
    x = np.ones(3)
    out = fnp.sin(fnp.add(x, 1.0))
    assert isinstance(out, np.ndarray) and isinstance(out, fnp.ndarray) and ctx.trace is None
    assert not out.flags.writeable and type(np.asarray(out)) is np.ndarray
    s = fnp.sum(x)
    assert isinstance(s, fnp.ndarray) and s.shape == () and float(s) == 3.0


# ------------------------------------------------------- primitives, traces ----

def test_bind_without_impl_names_the_primitive():
    p = Primitive("no_impl_here")
    with pytest.raises(MissingRuleError, match="no_impl_here"):
        p.bind(np.ones(2))


def test_staging_without_shape_rule_names_primitive_and_transform(monkeypatch):
    p = Primitive("no_shape_rule")
    monkeypatch.setitem(impl_rules, p, lambda x: x)
    with pytest.raises(MissingRuleError, match="`no_shape_rule` has no shape inference rule"):
        funcad.make_jaxpr(p.bind)(np.ones(2))


def test_primitive_repr_and_params_round_trip():
    closed = funcad.make_jaxpr(lambda x: lax.reduce_max(x, (1,)))(np.ones((2, 3)))
    (eqn,) = closed.eqns
    assert repr(eqn.prim) == "reduce_max" and eqn.params == {"axes": (1,)}
    assert eqn.prim.bind(np.arange(6.0).reshape(2, 3), **eqn.params).tolist() == [2.0, 5.0]


def test_set_trace_restores_the_previous_trace_on_error():
    sentinel = object()
    with pytest.raises(ZeroDivisionError):
        with set_trace(sentinel):
            assert ctx.trace is sentinel
            1 / 0
    assert ctx.trace is None


def test_trace_is_restored_after_a_failing_make_jaxpr():
    with pytest.raises(funcad.FuncadTypeError):
        funcad.make_jaxpr(lambda x: x + np.ones(4))(np.ones(3))
    assert ctx.trace is None


def test_leaked_tracer_raises_tracer_leak_error():
    leaked = []
    funcad.make_jaxpr(lambda x: leaked.append(x) or x)(np.ones(2))
    with pytest.raises(TracerLeakError, match=r"f64\[2\] tracer from a finished make_jaxpr"):
        funcad.make_jaxpr(lambda y: y + leaked[0])(np.ones(2))


def test_tracer_python_protocol():
    seen = {}

    def f(x):
        seen["repr"] = repr(x)
        seen["len"] = len(x)
        seen["rows"] = [r.shape for r in x]
        seen["props"] = (x.shape, x.dtype, x.ndim, x.size, x.weak_type)
        with pytest.raises(TypeError):
            hash(x)
        return x
    funcad.make_jaxpr(f)(np.ones((2, 3), np.float32))
    assert seen == {"repr": "Traced<f32[2,3]> with make_jaxpr", "len": 2, "rows": [(3,), (3,)],
                    "props": ((2, 3), F32, 2, 6, False)}


def test_threads_trace_independently():
    import threading
    results, errors = {}, []

    def work(k):
        try:
            for _ in range(200):
                jaxpr = funcad.make_jaxpr(lambda x: fnp.sin(x) * k)(np.ones(k))
                g = funcad.grad(lambda x: fnp.sum(fnp.tanh(x) * k))(np.ones(k))
            results[k] = (jaxpr.in_avals[0].shape, float(g[0]))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in (2, 3, 4, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for k in (2, 3, 4, 5):
        assert results[k][0] == (k,)
        np.testing.assert_allclose(results[k][1], k * (1 - np.tanh(1.0) ** 2))
