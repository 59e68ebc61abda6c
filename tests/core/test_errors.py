"""Errors explain themselves: shape errors name the op and both types, Python
control flow on staged values names the value and the fix, non-arrays name
their type; funcad.errors' classes are JAX's."""
from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcad
import funcad.lax as lax
import funcad.numpy as fnp

# ------------------------------------------------------------------ shapes ----

SHAPE_ERRORS = [
    # (id, function, args, op named in the message, types named in the message)
    ("add", fnp.add, (np.ones((2, 3)), np.ones(4)), "add", ["f64[2,3]", "f64[4]"]),
    ("multiply_f32", fnp.multiply, (np.ones(3, np.float32), np.ones(2, np.float32)), "mul",
     ["f32[3]", "f32[2]"]),
    ("matmul", fnp.matmul, (np.ones((2, 3)), np.ones((4, 5))), "matmul", ["f64[2,3]", "f64[4,5]"]),
    ("matvec", fnp.matmul, (np.ones((2, 3)), np.ones(2)), "matmul", ["f64[2,3]", "f64[2]"]),
    ("dot_general", lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((), ()))),
     (np.ones((2, 3)), np.ones((4, 5))), "dot_general", ["f64[2,3]", "f64[4,5]"]),
    ("concatenate", lambda x, y: fnp.concatenate([x, y]), (np.ones((2, 3)), np.ones((2, 4))), "concatenate",
     ["f64[2,3]", "f64[2,4]"]),
    ("where", lambda c, x, y: fnp.where(c, x, y), (np.ones(3, bool), np.ones(3), np.ones(4)), "select_n",
     ["f64[3]", "f64[4]"]),
    # JAX's exact words (libraries match on them): the shape and size of each side
    ("reshape", lambda x: fnp.reshape(x, (4,)), (np.ones((2, 3)),), "reshape", ["(2, 3) (size 6)", "(4,)"]),
    ("broadcast_to", lambda x: fnp.broadcast_to(x, (4,)), (np.ones(3),), "broadcast_to", ["f64[3]", "(4,)"]),
    ("lax_add_dtypes", lax.add, (np.ones(3, np.float32), np.ones(3)), "add", ["f32[3]", "f64[3]"]),
    ("lax_sin_int", lax.sin, (np.ones(3, np.int32),), "sin", ["i32[3]", "astype"]),
]


@pytest.mark.parametrize("fun,args,op,types", [pytest.param(*c[1:], id=c[0]) for c in SHAPE_ERRORS])
@pytest.mark.parametrize("mode", ["eager", "staged", "grad"])
def test_shape_errors_name_the_op_and_both_types(fun, args, op, types, mode):
    if mode == "eager":
        run = lambda: fun(*args)  # noqa: E731
    elif mode == "staged":
        run = lambda: funcad.make_jaxpr(fun)(*args)  # noqa: E731
    else:
        if args[-1].dtype.kind != "f":
            pytest.skip("grad needs a float argument")
        run = lambda: funcad.grad(lambda *a: fnp.sum(fun(*a)), argnums=len(args) - 1)(*args)  # noqa: E731
    with pytest.raises(funcad.FuncadTypeError) as info:
        run()
    msg = str(info.value)
    assert re.search(rf"\b{op}\b", msg), msg
    for t in types:
        assert t in msg, msg


def test_shape_errors_are_type_errors_as_in_jax():
    with pytest.raises(TypeError):
        fnp.add(np.ones(2), np.ones(3))


def test_impl_errors_without_a_shape_problem_pass_through():
    with pytest.raises(ValueError, match="negative power"):
        lax.integer_pow(np.arange(3), -1)


# ------------------------------------------------------- concretization ----

CONTROL_FLOW = [
    ("if", lambda x: x if x > 0 else -x, 1.0, "bool()", "bool[]"),
    ("while", lambda x: _while(x), 1.0, "bool()", "bool[]"),
    ("not", lambda x: 1.0 if not x else 2.0, 1.0, "bool()", "f64[]"),
    ("int", lambda x: np.ones(3)[: int(x)], 2.0, "int()", "f64[]"),
    ("float", lambda x: float(x) * 2, 2.0, "float()", "f64[]"),
    ("range", lambda n: [1.0 for _ in range(n)], 3, "use as an index", "i64[]"),
    ("list_index", lambda i: [1.0, 2.0][i], 1, "use as an index", "i64[]"),
    ("np_asarray", lambda x: np.asarray(x) * 2, np.ones(2), "np.asarray()", "f64[2]"),
    ("reshape_by_value", lambda x: x.reshape(int(x.sum()), -1), np.ones(4), "int()", "f64[]"),
]


def _while(x):
    while x < 10:
        x = x * 2
    return x


@pytest.mark.parametrize("fun,arg,how,aval", [pytest.param(*c[1:], id=c[0]) for c in CONTROL_FLOW])
def test_python_control_flow_on_a_staged_value(fun, arg, how, aval):
    with pytest.raises(funcad.ConcretizationError) as info:
        funcad.make_jaxpr(fun)(arg)
    msg = str(info.value)
    assert f"abstract {aval} value staged by make_jaxpr" in msg
    assert "funcad.lax.cond" in msg and "static_argnums" in msg
    assert f"needed by {how}" in msg
    assert "test_errors.py" in msg  # points at the user's line


def test_concretization_error_quotes_the_users_line():
    def f(x):
        if x.sum() > 0:  # the line the error should quote
            return x
        return -x
    with pytest.raises(funcad.ConcretizationError, match=r"test_errors\.py:\d+: `if x\.sum\(\) > 0:"):
        funcad.make_jaxpr(f)(np.ones(3))


def test_concretization_error_under_jit():
    with pytest.raises(funcad.ConcretizationError, match="static_argnums"):
        funcad.jit(lambda x: x if x > 0 else -x)(1.0)


def test_concretization_error_is_a_type_error():
    assert issubclass(funcad.ConcretizationError, TypeError)
    assert issubclass(funcad.ConcretizationError, funcad.FuncadError)


def test_static_argnums_is_the_fix():
    f = funcad.make_jaxpr(lambda x, n: x * n if n > 0 else -x, static_argnums=1)
    assert [e.prim.name for e in f(np.ones(2), 3).eqns] == ["mul"]
    assert [e.prim.name for e in f(np.ones(2), -3).eqns] == ["neg"]


@pytest.mark.parametrize("x,want", [(2.0, 1.0), (-2.0, -1.0)])
def test_control_flow_on_concrete_values_works_under_grad(x, want):
    """grad linearizes on known primal values, so Python branches on them are fine."""
    assert funcad.grad(lambda x: x if x > 0 else -x)(x) == want


def test_traced_boolean_mask_and_nonzero_explain_the_fix():
    with pytest.raises(funcad.ConcretizationError, match="where"):
        funcad.make_jaxpr(lambda x: x[x > 0])(np.ones(3))
    with pytest.raises(funcad.ConcretizationError, match="three-argument where"):
        funcad.make_jaxpr(fnp.nonzero)(np.ones(3))


# --------------------------------------------------------------- non-arrays ----

NOT_ARRAYS = [("str", "abc"), ("object", object()), ("dict", {"a": 1}), ("NoneType", None),
              ("set", {1, 2})]


@pytest.mark.parametrize("value", [pytest.param(v, id=n) for n, v in NOT_ARRAYS])
@pytest.mark.parametrize("call", [
    pytest.param(lambda v: fnp.sin(v), id="sin"),
    pytest.param(lambda v: fnp.add(v, 1.0), id="add"),
    pytest.param(lambda v: fnp.sum(v), id="sum"),
    pytest.param(lambda v: fnp.reshape(v, (1,)), id="reshape"),
])
def test_non_array_argument_to_an_op_names_its_type(call, value):
    name = type(value).__name__
    with pytest.raises(TypeError, match=rf"type {name}\b"):
        call(value)


@pytest.mark.parametrize("transform", [
    pytest.param(lambda f, v: funcad.make_jaxpr(f)(v), id="make_jaxpr"),
    pytest.param(lambda f, v: funcad.grad(f)(v), id="grad"),
    pytest.param(lambda f, v: funcad.jvp(f, (v,), (1.0,)), id="jvp"),
    pytest.param(lambda f, v: funcad.vjp(f, v), id="vjp"),
    pytest.param(lambda f, v: funcad.jit(f)(v), id="jit"),
    pytest.param(lambda f, v: funcad.vmap(f)(v), id="vmap"),
])
@pytest.mark.parametrize("value", [pytest.param("abc", id="str"), pytest.param(object(), id="object")])
def test_non_array_argument_to_a_transform_names_its_type_and_the_fix(transform, value):
    name = type(value).__name__
    with pytest.raises(TypeError, match=rf"type {name}\b") as info:
        transform(fnp.sin, value)
    assert "static_argnums" in str(info.value)


_CONVERSIONS = [
    ("bool", lambda x: 1.0 if x > 0 else 2.0, "TracerBoolConversionError"),
    ("int", lambda x: int(x), "ConcretizationTypeError"),
    ("index", lambda x: [1.0, 2.0][x.astype("int32")], "TracerIntegerConversionError"),
    ("asarray", lambda x: np.asarray(x), "TracerArrayConversionError"),
    ("float", lambda x: float(x), "ConcretizationTypeError"),
]


@pytest.mark.parametrize("case", _CONVERSIONS, ids=[c[0] for c in _CONVERSIONS])
def test_tracer_conversion_errors_are_jaxs_classes(case):
    _, f, name = case
    with pytest.raises(getattr(jax.errors, name)):
        jax.jit(f)(1.0)
    with pytest.raises(getattr(funcad.errors, name)) as info:
        funcad.jit(f)(1.0)
    # funcad's classes keep their old bases, so older `except` clauses still work
    assert isinstance(info.value, funcad.ConcretizationError) and isinstance(info.value, TypeError)
    assert "A concrete value was needed" in str(info.value)


def test_error_class_hierarchy_matches_jax():
    for name in funcad.errors.__all__:
        j, f = getattr(jax.errors, name), getattr(funcad.errors, name)
        for base in (TypeError, IndexError):
            if issubclass(j, base):
                assert issubclass(f, base), (name, base)
    assert issubclass(funcad.errors.TracerBoolConversionError, funcad.errors.ConcretizationTypeError)
    assert issubclass(funcad.errors.ConcretizationTypeError, funcad.errors.JAXTypeError)
    assert issubclass(funcad.errors.UnexpectedTracerError, funcad.TracerLeakError)
    assert issubclass(funcad.errors.UnexpectedTracerError, RuntimeError)
    assert not issubclass(funcad.FuncadTypeError, funcad.ConcretizationError)


def test_vmap_bool_and_boolean_mask_errors():
    with pytest.raises(funcad.errors.TracerBoolConversionError, match="different value in each lane"):
        funcad.vmap(lambda x: x if x > 0 else -x)(np.ones(3))
    with pytest.raises(jax.errors.NonConcreteBooleanIndexError):
        jax.jit(lambda x: x[x > 0])(jnp.ones(3))
    with pytest.raises(funcad.errors.NonConcreteBooleanIndexError, match="boolean mask"):
        funcad.jit(lambda x: x[x > 0])(np.ones(3))


def test_leaked_tracer_is_unexpected_tracer_error():
    leaked = []
    funcad.jit(lambda x: leaked.append(x) or x)(1.0)
    with pytest.raises(funcad.errors.UnexpectedTracerError, match="finished"):
        fnp.sin(leaked[0])
