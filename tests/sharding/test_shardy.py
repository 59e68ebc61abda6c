"""Shardy: SPMD programs annotated in the sdy dialect and partitioned as JAX's are.

For jit with in/out shardings, with_sharding_constraint, shard_map with its
collectives, and grad through them, on 8 simulated CPU devices (run in a child
process, as tests/sharding/test_sharding.py): the lowered text carries the same sdy
annotations as JAX's, the partitioned program XLA compiles has the same
collectives (kind, count, replica groups) as JAX's, and the results agree. The
GSPMD fallback (`jax_use_shardy_partitioner=False`) gives the same numbers.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

import funcad
from funcad.lowering import partitioning

from tests.multidevice import CHILD, ROOT, on_eight_devices, on_one_device, run_in_child  # noqa: E402

# JAX's lowered text is compared with funcad's as JAX 0.12 writes it; the oldest JAX of
# the range (0.6) writes some annotations otherwise (results and collectives still agree)
NEW_JAX = tuple(int(v) for v in __import__("jax").__version__.split(".")[:2]) >= (0, 7)


@on_one_device
def test_shardy_suite():
    run_in_child(__file__)


@on_one_device
def test_option_defaults_and_reads_as_jax():
    import jax
    assert funcad.config.read("jax_use_shardy_partitioner") is True
    if NEW_JAX:
        assert jax.config.jax_use_shardy_partitioner is True  # JAX 0.12's default too
    assert partitioning.use_shardy() == partitioning.shardy_available()
    with funcad.config.override(jax_use_shardy_partitioner=False):
        assert partitioning.use_shardy() is False
    assert partitioning.use_shardy() == partitioning.shardy_available()


@on_one_device
def test_one_device_programs_carry_no_annotations():
    text = funcad.jit(lambda x: x * 2.0).lower(np.ones(3)).as_text()
    assert "sdy." not in text and "mhlo.sharding" not in text


# ------------------------------------------------------------ the child ----

if CHILD:
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding as JNS, PartitionSpec as JP

    import funcad.numpy as fnp
    from funcad.sharding import NamedSharding, PartitionSpec as P

    lax = funcad.lax
    jax.config.update("jax_use_shardy_partitioner", True)  # JAX 0.12's default; 0.6's is GSPMD

    def jax_shard_map(f, *, mesh, in_specs, out_specs, axis_names=frozenset()):
        """JAX's shard_map, also on the oldest JAX of the range (jax.experimental)."""
        if hasattr(jax, "shard_map"):
            return jax.shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                                 axis_names=set(axis_names))
        from jax.experimental.shard_map import shard_map as old
        return old(f, mesh, in_specs, out_specs, auto=frozenset(mesh.axis_names) - set(axis_names)
                   if axis_names else frozenset())
    _COLLECTIVE = re.compile(r"= .*?\b(all-reduce|all-gather|reduce-scatter|all-to-all|"
                             r"collective-permute)(?:-start)?\(")

    def _groups(text: str) -> tuple:
        """XLA's printed replica groups as explicit tuples of partitions: `{{0,1},{2,3}}`,
        iota `[2,2]<=[2,2]T(1,0)`, or JAX 0.12's mesh axes `mesh['x'=4,'y'=2] {'y'}`
        (over a mesh in device order, as make_mesh's on CPU)."""
        m = re.match(r"mesh\[(.*?)\] \{(.*?)\}", text)
        if m:
            axes = re.findall(r"'(\w+)'=(\d+)", m.group(1))
            names, sizes = [a for a, _ in axes], [int(n) for _, n in axes]
            over = re.findall(r"'(\w+)'", m.group(2))
            ids = np.arange(int(np.prod(sizes))).reshape(sizes)
            perm = [names.index(a) for a in names if a not in over] + [names.index(a) for a in over]
            k = int(np.prod([sizes[names.index(a)] for a in over]))
            return tuple(map(tuple, ids.transpose(perm).reshape(-1, k).tolist()))
        m = re.match(r"\[(\d+),(\d+)\]<=\[([\d,]+)\](?:T\(([\d,]+)\))?", text)
        if m:
            dims = [int(d) for d in m.group(3).split(",")]
            ids = np.arange(int(np.prod(dims))).reshape(dims)
            if m.group(4):
                ids = ids.transpose([int(d) for d in m.group(4).split(",")])
            return tuple(map(tuple, ids.reshape(int(m.group(1)), int(m.group(2))).tolist()))
        return tuple(tuple(int(v) for v in g.split(",") if v) for g in re.findall(r"\{([\d,]*)\}", text))

    def collectives(compiled_text: str) -> Counter:
        """(kind, replica groups or source-target pairs) -> count, over the optimized HLO."""
        found = Counter()
        for line in compiled_text.splitlines():
            m = _COLLECTIVE.search(line)
            if not m:
                continue
            g = re.search(r"replica_groups=(mesh\[.*?\] \{.*?\}|\[[^ ]*|\{\{.*?\}\}|\{\})", line)
            pairs = re.search(r"source_target_pairs=(\{\{.*?\}\})", line)
            found[(m.group(1), _groups(g.group(1)) if g else _groups(pairs.group(1)) if pairs else ())] += 1
        return found

    def meshes(shape, names):
        fm = funcad.make_mesh(shape, names, axis_types=(funcad.sharding.AxisType.Auto,) * len(shape))
        jm = jax.sharding.Mesh(np.array(jax.devices()).reshape(shape), names)  # Auto axes
        return fm, jm

    def sdy_lines(text: str) -> list:
        """The sdy annotations of a module: meshes, argument/result shardings,
        constraints, and manual computations' shardings and axes."""
        out = []
        out += re.findall(r"sdy\.mesh @\w+ = <[^>]*>", text)
        out += re.findall(r"sdy\.sharding = #sdy\.sharding<[^>]*>", text)
        out += re.findall(r"sdy\.sharding_constraint %\S+ (<[^>]*>)", text)
        out += re.findall(r"sdy\.manual_computation\([^)]*\) (in_shardings=.*?manual_axes=\{[^}]*\})",
                          text)
        return out

    def same_program(f_funcad, f_jax, *args, rtol=1e-5):
        """The two jitted functions agree: results, and the collectives XLA partitioned in."""
        lo, jlo = f_funcad.lower(*args), f_jax.lower(*args)
        got, want = lo.compile()(*args), jlo.compile()(*args)
        for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=1e-6)
        ours, theirs = collectives(lo.compile().as_text()), collectives(jlo.compile().as_text())
        assert ours == theirs, (ours, theirs)
        return lo.as_text(), jlo.as_text(), ours

    RNG = np.random.default_rng(0)
    X = RNG.standard_normal((16, 8)).astype(np.float32)
    W = RNG.standard_normal((8, 12)).astype(np.float32)


# --------------------------------------------------------------- jit ----

@on_eight_devices
def test_jit_in_out_shardings_match_jax():
    fm, jm = meshes((4, 2), ("data", "model"))
    spec_in, spec_w, spec_out = P("data", "model"), P("model", None), P("data", None)
    f = funcad.jit(lambda x, w: fnp.tanh(x @ w), in_shardings=(NamedSharding(fm, spec_in),
                   NamedSharding(fm, spec_w)), out_shardings=NamedSharding(fm, spec_out))
    jf = jax.jit(lambda x, w: jnp.tanh(x @ w), in_shardings=(JNS(jm, JP("data", "model")),
                 JNS(jm, JP("model", None))), out_shardings=JNS(jm, JP("data", None)))
    text, jtext, found = same_program(f, jf, X, W)
    assert any(kind == "all-reduce" for kind, _ in found)  # the contraction over "model"
    assert sdy_lines(text) == sdy_lines(jtext) or not NEW_JAX
    out = f(X, W)
    assert out.sharding == NamedSharding(fm, spec_out)


@on_eight_devices
def test_reductions_and_unspecified_outputs_match_jax():
    fm, jm = meshes((8,), ("d",))
    f = funcad.jit(lambda x: (fnp.sum(x, 0), x * 2.0), in_shardings=NamedSharding(fm, P("d")))
    jf = jax.jit(lambda x: (jnp.sum(x, 0), x * 2.0), in_shardings=JNS(jm, JP("d")))
    text, jtext, found = same_program(f, jf, X)
    assert found and (sdy_lines(text) == sdy_lines(jtext) or not NEW_JAX)
    assert f(X)[1].sharding == NamedSharding(fm, P("d"))  # XLA's choice, named on the mesh


# --------------------------------------------------- sharding constraint ----

@pytest.mark.parametrize("to", [(), ("model", "data"), (None, "data"), (("data", "model"),)])
@on_eight_devices
def test_with_sharding_constraint_matches_jax(to):
    fm, jm = meshes((4, 2), ("data", "model"))

    def make(lib, ns, p, mesh):
        def f(x):
            y = lib.lax.with_sharding_constraint(lib.numpy.sin(x), ns(mesh, p(*to)))
            return y * 2.0
        return lib.jit(f, in_shardings=ns(mesh, p("data")), out_shardings=ns(mesh, p("data")))
    text, jtext, found = same_program(make(funcad, NamedSharding, P, fm), make(jax, JNS, JP, jm), X)
    assert sdy_lines(text) == sdy_lines(jtext) or not NEW_JAX
    assert "sdy.sharding_constraint" in text


@on_eight_devices
def test_grad_through_jit_and_constraints_matches_jax():
    fm, jm = meshes((4, 2), ("data", "model"))
    y = RNG.standard_normal((16, 12)).astype(np.float32)

    def make(lib, ns, p, mesh):
        def loss(w, x, y):
            h = lib.lax.with_sharding_constraint(x @ w, ns(mesh, p("data", "model")))
            return lib.numpy.mean((lib.numpy.tanh(h) - y) ** 2)
        rep, data = ns(mesh, p()), ns(mesh, p("data"))
        return lib.jit(lib.value_and_grad(loss), in_shardings=(rep, data, data),
                       out_shardings=rep)
    text, jtext, found = same_program(make(funcad, NamedSharding, P, fm), make(jax, JNS, JP, jm),
                                      W, X, y)
    assert any(kind == "all-reduce" for kind, _ in found)  # the gradient summed over "data"
    assert sdy_lines(text) == sdy_lines(jtext) or not NEW_JAX


# ------------------------------------------------------------ shard_map ----

SHMAP_CASES = {
    "psum": (lambda lib: lambda a: lib.lax.psum(a, "y"), ("x", "y"), ("x",)),
    "psum2": (lambda lib: lambda a: lib.lax.psum(a * a, ("x", "y")), ("x", "y"), ()),
    "all_gather": (lambda lib: lambda a: lib.lax.all_gather(a, "x", tiled=True), ("x", "y"), ("x", "y")),
    "ppermute": (lambda lib: lambda a: lib.lax.ppermute(a, "x", [(i, (i + 1) % 4) for i in range(4)]),
                 ("x", "y"), ("x", "y")),
    "psum_scatter": (lambda lib: lambda a: lib.lax.psum_scatter(a, "x", tiled=True), (None, "y"),
                     ("x", "y")),
    "all_to_all": (lambda lib: lambda a: lib.lax.all_to_all(a, "x", 1, 0, tiled=True), ("x",),
                   (None, "x")),
}


def _shmap(lib, mesh, p, case):
    body, in_spec, out_spec = SHMAP_CASES[case]
    if lib is funcad:
        sm = funcad.shard_map
    else:
        sm = jax_shard_map
    return lib.jit(sm(body(lib), mesh=mesh, in_specs=p(*in_spec), out_specs=p(*out_spec)))


@pytest.mark.parametrize("case", sorted(SHMAP_CASES))
@on_eight_devices
def test_shard_map_collectives_match_jax(case):
    fm, jm = meshes((4, 2), ("x", "y"))
    text, jtext, found = same_program(_shmap(funcad, fm, P, case), _shmap(jax, jm, JP, case), X)
    assert found
    # (the argument, unspecified, is replicated in funcad's program and left to Shardy in JAX's)
    heads = lambda t: [s for s in sdy_lines(t) if s.startswith("in_shardings")]  # noqa: E731
    assert heads(text) == heads(jtext) or not NEW_JAX
    head = re.search(r"sdy\.manual_computation\(.*", text).group(0)
    assert 'manual_axes={"x", "y"}' in head


@pytest.mark.parametrize("case", ["psum", "ppermute", "all_gather"])
@on_eight_devices
def test_grad_through_shard_map_matches_jax(case):
    fm, jm = meshes((4, 2), ("x", "y"))

    def make(lib, mesh, p):
        f = _shmap(lib, mesh, p, case)
        return lib.jit(lib.grad(lambda a: (lib.numpy.sin(f(a)) ** 2).sum()))
    same_program(make(funcad, fm, P), make(jax, jm, JP), X)


@on_eight_devices
def test_partial_manual_shard_map_matches_jax():
    fm, jm = meshes((4, 2), ("x", "y"))

    def make(lib, mesh, p):
        sm = funcad.shard_map if lib is funcad else jax_shard_map
        body = lambda a: lib.lax.ppermute(a, "x", [(i, (i + 1) % 4) for i in range(4)]) \
            * (1.0 + lib.lax.axis_index("x"))  # noqa: E731
        return lib.jit(sm(body, mesh=mesh, in_specs=p("x"), out_specs=p("x"), axis_names={"x"}))
    text, jtext, found = same_program(make(funcad, fm, P), make(jax, jm, JP), X)
    head = re.search(r"sdy\.manual_computation\(.*", text).group(0)
    assert 'in_shardings=[<@mesh, [{"x", ?}, {?}]>]' in head and 'manual_axes={"x"}' in head
    assert head[head.index("in_shardings"):head.index(" (")] in jtext or not NEW_JAX


@on_eight_devices
def test_shard_map_body_constants_enter_the_region():
    fm, jm = meshes((4, 2), ("x", "y"))
    c = RNG.standard_normal((4, 8)).astype(np.float32)  # hoisted: an argument of @main

    def make(lib, mesh, p):
        sm = funcad.shard_map if lib is funcad else jax_shard_map
        inner = lib.jit(lambda a: a * lib.numpy.asarray(c[:, ::-1]))  # a constant of a nested jit
        return lib.jit(sm(lambda a: lib.lax.psum(inner(a + c), "x"), mesh=mesh,
                          in_specs=p("x"), out_specs=p()))
    text, _, _ = same_program(make(funcad, fm, P), make(jax, jm, JP), X)
    # The region is isolated from above: each constant is passed in or written inside it.
    head = re.search(r"sdy\.manual_computation\(([^)]*)\)", text).group(1)
    region = text[text.index("sdy.manual_computation"):]
    region = region[:region.index("sdy.return")]
    passed_in = head.count("%c")
    written_inside = len(re.findall(r"stablehlo\.constant.*tensor<4x8xf32>", region))
    assert passed_in + written_inside == 2, (head, region)


@on_eight_devices
def test_single_device_shardings_in_a_multi_device_program():
    fm, _ = meshes((8,), ("d",))
    dev = funcad.devices()[3]
    f = funcad.jit(lambda x: (x * 2.0, fnp.sum(x)), in_shardings=NamedSharding(fm, P("d")),
                   out_shardings=(None, funcad.sharding.SingleDeviceSharding(dev)))
    text = f.lower(X).as_text()
    assert "sdy.mesh @maximal_mesh_3 = <[], device_ids=[3]>" in text
    a, s = f(X)
    np.testing.assert_allclose(np.asarray(s), X.sum(), rtol=1e-5)
    assert s.devices() == {dev}


@on_eight_devices
def test_gspmd_fallback_gives_the_same_numbers():
    fm, jm = meshes((4, 2), ("x", "y"))
    with funcad.config.override(jax_use_shardy_partitioner=False):
        for case in ("psum", "ppermute", "all_to_all"):
            f = _shmap(funcad, fm, P, case)
            assert "sdy." not in f.lower(X).as_text()
            np.testing.assert_allclose(np.asarray(f(X)), np.asarray(_shmap(jax, jm, JP, case)(X)),
                                       rtol=1e-6)


@on_eight_devices
def test_pure_callback_in_sharded_programs_matches_jax():
    fm, jm = meshes((4, 2), ("x", "y"))

    def make(lib, ns, p, mesh, inside):
        cb = lambda a: lib.pure_callback(lambda v: np.sin(v) * 3.0, lib.ShapeDtypeStruct(a.shape, a.dtype),  # noqa: E731
                                         a * 2.0)
        if inside:  # per device, on its block
            sm = funcad.shard_map if lib is funcad else jax_shard_map
            return lib.jit(sm(cb, mesh=mesh, in_specs=p("x"), out_specs=p("x")))
        return lib.jit(cb, in_shardings=ns(mesh, p("x")))  # once, on the whole value
    for inside in (False, True):
        f, jf = make(funcad, NamedSharding, P, fm, inside), make(jax, JNS, JP, jm, inside)
        text, jtext, _ = same_program(f, jf, X)
        assert ("sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>" in text) is not inside
        with funcad.config.override(jax_use_shardy_partitioner=False):
            np.testing.assert_allclose(np.asarray(f(X)), np.asarray(jf(X)), rtol=1e-6)
    partial_manual = funcad.jit(funcad.shard_map(
        lambda a: funcad.pure_callback(np.sin, funcad.ShapeDtypeStruct(a.shape, a.dtype), a),
        mesh=fm, in_specs=P("x"), out_specs=P("x"), axis_names={"x"}))
    from funcad.core.errors import UnsupportedError
    with pytest.raises(UnsupportedError, match="some of its mesh's axes"):
        partial_manual(X)


@on_eight_devices
def test_lowered_hlo_text_of_a_shardy_program():
    fm, _ = meshes((4, 2), ("x", "y"))
    lo = funcad.jit(lambda a: a * 2.0, in_shardings=NamedSharding(fm, P("x"))).lower(X)
    hlo = lo.as_text("hlo")
    assert hlo.startswith("HloModule") and "sharding={devices=[4,1,2]" in hlo


@on_eight_devices
@pytest.mark.skipif(not NEW_JAX, reason="JAX 0.6's shard_map inside shard_map needs its mesh")
def test_shard_map_inside_shard_map_matches_jax():
    fm, jm = meshes((4, 2), ("x", "y"))

    def make(lib, mesh, p):
        inner = (lambda a: funcad.shard_map(lambda b: lib.lax.psum(b, "y") * lib.lax.axis_index("y"),
                                            mesh=mesh, in_specs=p(None, "y"), out_specs=p(None, "y"))(a)) \
            if lib is funcad else \
            (lambda a: jax.shard_map(lambda b: lib.lax.psum(b, "y") * lib.lax.axis_index("y"),
                                     in_specs=p(None, "y"), out_specs=p(None, "y"))(a))
        sm = funcad.shard_map if lib is funcad else jax_shard_map
        return lib.jit(sm(inner, mesh=mesh, in_specs=p("x"), out_specs=p("x"), axis_names={"x"}))
    text, jtext, _ = same_program(make(funcad, fm, P), make(jax, jm, JP), X)
    heads = re.findall(r"manual_axes=\{[^}]*\}", text)
    assert heads == re.findall(r"manual_axes=\{[^}]*\}", jtext) and '{"y"}' in heads[-1]


_DEPRECATED = "GSPMD sharding propagation is going to be deprecated"


@on_eight_devices
def test_no_gspmd_deprecation_warning():
    # XLA prints it from C++ while compiling, so a fresh process compiles and its stderr is read:
    # first under Shardy, then (to show the check sees it) under GSPMD
    code = ("import sys, numpy as np, funcad\n"
            "from funcad.sharding import NamedSharding, PartitionSpec as P\n"
            "s = NamedSharding(funcad.make_mesh((8,), ('d',)), P('d'))\n"
            "run = lambda: funcad.jit(lambda x: x.sum(0), in_shardings=s)(np.ones((8, 2)))\n"
            "run(); sys.stderr.write('MARK\\n'); sys.stderr.flush()\n"
            "funcad.config.update('jax_use_shardy_partitioner', False); run()\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=os.environ, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    shardy, gspmd = proc.stderr.split("MARK")
    assert _DEPRECATED not in shardy
    if NEW_JAX:
        assert _DEPRECATED in gspmd
