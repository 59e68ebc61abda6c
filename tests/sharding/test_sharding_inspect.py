"""What XLA made of a program, as JAX shows it: `debug.inspect_array_sharding` and
`visualize_array_sharding` on traced values inside jit (the partitioner's layout,
reported once at compile time), `Compiled.as_text()` (optimized HLO),
`cost_analysis()`, `memory_analysis()`, and `shard_map` under
`vmap(spmd_axis_name=)` (the batch split over the named mesh axis), against JAX.

The 8-device tests run in a child process (`test_sharding_inspect_suite`, see
tests/multidevice.py); one-device checks run in the main process.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad.sharding import NamedSharding, PartitionSpec as P, SingleDeviceSharding

from tests.multidevice import on_eight_devices, on_one_device, run_in_child

lax = funcad.lax


@on_one_device
def test_sharding_inspect_suite():
    run_in_child(__file__)


import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

jax.config.update("jax_enable_x64", True)
JP = jax.sharding.PartitionSpec
# The oldest JAX of the range fails itself on some of these programs (its shard_map
# under vmap(spmd_axis_name=)); there funcad is checked against known results only.
NEW_JAX = hasattr(jax, "shard_map")


def meshes(shape, names):
    """A funcad mesh and JAX's (Auto axes) over the same device ids."""
    jm = jax.make_mesh(shape, names, axis_types=(jax.sharding.AxisType.Auto,) * len(shape))
    by_id = {d.id: d for d in funcad.devices()}
    fm = funcad.make_mesh(shape, names, axis_types=(funcad.sharding.AxisType.Auto,) * len(shape),
                          devices=[by_id[d.id] for d in jm.devices.flat])
    return fm, jm


def jax_shard_map(f, *, mesh, in_specs, out_specs):
    """JAX's shard_map, also on the oldest JAX of the range (jax.experimental)."""
    if hasattr(jax, "shard_map"):
        return jax.shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs)
    from jax.experimental.shard_map import shard_map
    return shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs)


def jax_set_mesh(mesh):
    return jax.set_mesh(mesh) if hasattr(jax, "set_mesh") else jax.sharding.use_mesh(mesh)


def spec_of(sharding):
    """A sharding's spec without trailing Nones, to compare funcad's with JAX's."""
    parts = list(sharding.spec)
    while parts and parts[-1] is None:
        parts.pop()
    return tuple(parts)


def inspected(lib, fn, *args, **jit_kw):
    """The shardings `inspect_array_sharding` reports for `fn`'s two intermediates
    under lib.jit, and how many reports came at each stage (lower, compile, 2 calls)."""
    seen, counts = [], []

    def f(v):
        y = lib.numpy.sin(v) * 2.0
        lib.debug.inspect_array_sharding(y, callback=seen.append)
        z = fn(lib, y)
        lib.debug.inspect_array_sharding(z, callback=seen.append)
        return z

    jf = lib.jit(f, **jit_kw)
    lowered = jf.lower(*args)
    counts.append(len(seen))
    lowered.compile()
    counts.append(len(seen))
    out = jf(*args)
    jf(*args)
    counts.append(len(seen))
    return seen, counts, out


# ---------------------------------------------------------- one device ----


@on_one_device
def test_inspect_in_one_device_jit_reports_the_device_once():
    seen, counts, out = inspected(funcad, lambda lib, y: y.sum(0), np.ones((4, 3)))
    dev = funcad.devices()[0]
    # funcad compiles lower().compile() and the call's own executable: one report each
    assert counts[0] == 0 and counts[1] == 2 and counts[2] == 4
    assert seen == [SingleDeviceSharding(dev)] * 4
    np.testing.assert_allclose(np.asarray(out), 2 * np.sin(np.ones((4, 3))).sum(0))
    # JAX reports a replicated sharding on that device too
    jseen, _, _ = inspected(jax, lambda lib, y: y.sum(0), np.ones((4, 3)))
    assert all(s.is_fully_replicated and s.num_devices == 1 for s in jseen)


@on_one_device
def test_inspect_under_grad_vmap_and_eagerly_as_jax():
    for lib in (funcad, jax):
        seen = []

        def f(v, lib=lib):
            lib.debug.inspect_array_sharding({"a": v, "b": (v * 2.0,)}, callback=seen.append)
            return lib.numpy.sin(v).sum()

        x = np.ones((3, 2)) if lib is funcad else jnp.ones((3, 2))  # JAX's needs an Array
        g = lib.grad(f)(x)  # the primal value is inspected, once per leaf
        np.testing.assert_allclose(np.asarray(g), np.cos(x))
        assert len(seen) == 2
        lib.vmap(f)(x)  # the batched value, once per leaf
        assert len(seen) == 4
        assert all(s.num_devices == 1 for s in seen), lib
    seen = []

    def f(v):
        funcad.debug.inspect_array_sharding({"a": v, "b": (v * 2.0,)}, callback=seen.append)
        return fnp.sin(v).sum()

    funcad.jit(funcad.vmap(funcad.grad(f)))(np.ones((3, 2)))  # compiled: each leaf once
    assert seen == [SingleDeviceSharding(funcad.devices()[0])] * 2


@on_one_device
def test_inspect_keeps_the_program_and_its_values():
    f = lambda v: funcad.debug.inspect_array_sharding(v * 3.0, callback=lambda s: None) or v + 1.0  # noqa: E731
    jaxpr = funcad.make_jaxpr(f)(np.ones(2))
    assert "inspect_sharding" in str(jaxpr)  # kept though it has no outputs
    np.testing.assert_allclose(np.asarray(funcad.jit(f)(np.ones(2))), [2.0, 2.0])
    # the jitted program itself has no trace of the inspection
    assert "InspectSharding" not in funcad.jit(f).lower(np.ones(2)).as_text()


@on_one_device
def test_visualize_array_sharding_inside_jit(capsys):
    f = funcad.jit(lambda v: funcad.debug.visualize_array_sharding(v * 2.0, use_color=False) or v)
    f(np.ones(4))
    assert capsys.readouterr().out == "┌───────┐\n│ CPU 0 │\n└───────┘\n\n"
    f(np.ones(4))  # cached: no second picture
    assert capsys.readouterr().out == ""


@on_one_device
def test_inspect_errors():
    with pytest.raises(TypeError, match="expects arrays"):
        funcad.debug.inspect_array_sharding(["x"], callback=print)
    with pytest.raises(ZeroDivisionError):  # the callback's own error reaches the caller
        funcad.jit(lambda v: funcad.debug.inspect_array_sharding(v, callback=lambda s: 1 / 0))(1.0)


def _entry_params(text: str) -> list:
    """The parameter types of an HLO module's ENTRY computation."""
    head = re.search(r"^ENTRY [^(]*\((.*)\) ->", text, re.M).group(1)
    return re.findall(r"[a-z0-9]+\[[0-9,]*\]", head)


@on_one_device
def test_compiled_as_text_is_optimized_hlo_as_jax():
    def f(lib, x, w):
        return lib.numpy.tanh(x @ w).sum(axis=1) * 2.0 + 1.0

    x, w = np.ones((4, 3), np.float32), np.ones((3, 5), np.float32)
    lowered = funcad.jit(lambda a, b: f(funcad, a, b)).lower(x, w)
    compiled = lowered.compile()
    jc = jax.jit(lambda a, b: f(jax, a, b)).lower(x, w).compile()
    text, jtext = compiled.as_text(), jc.as_text()
    assert text.startswith("HloModule") and "stablehlo" not in text and "fusion" in text
    assert text != lowered.as_text()
    assert _entry_params(text) == _entry_params(jtext) == ["f32[4,3]", "f32[3,5]"]
    # XLA's estimates, as JAX gives them
    cost, jcost = compiled.cost_analysis(), jc.cost_analysis()
    assert isinstance(cost, dict) and cost["flops"] == jcost["flops"] > 0
    mem, jmem = compiled.memory_analysis(), jc.memory_analysis()
    assert mem.argument_size_in_bytes == jmem.argument_size_in_bytes == 4 * (12 + 15)
    assert mem.output_size_in_bytes == jmem.output_size_in_bytes == 4 * 4
    np.testing.assert_allclose(np.asarray(compiled(x, w)), np.asarray(jc(x, w)), rtol=1e-6)


# ------------------------------------------------------ 8 devices (child) ----

INTERMEDIATES = {
    "sum0": lambda lib, y: y.sum(0),
    "transpose": lambda lib, y: y.T * 3.0,
    "dot": lambda lib, y: y @ y.T,
}


@on_eight_devices
@pytest.mark.parametrize("case", sorted(INTERMEDIATES))
@pytest.mark.parametrize("spec", [("a", "b"), ("a",), ("b", "a"), ()], ids=str)
def test_inspect_reports_the_partitioners_layout_like_jax(case, spec):
    fm, jm = meshes((4, 2), ("a", "b"))
    x = np.arange(64.0).reshape(8, 8)
    fn = INTERMEDIATES[case]
    seen, counts, out = inspected(funcad, fn, x, in_shardings=NamedSharding(fm, P(*spec)))
    jseen, jcounts, jout = inspected(jax, fn, x,
                                     in_shardings=jax.sharding.NamedSharding(jm, JP(*spec)))
    np.testing.assert_allclose(np.asarray(out), np.asarray(jout), rtol=1e-12)
    # at compile time only, once (the calls reuse the compiled program), as JAX
    assert counts == jcounts == [0, 2, 2]
    assert [spec_of(s) for s in seen[:2]] == [spec_of(s) for s in jseen]
    assert all(isinstance(s, NamedSharding) and s.mesh == fm for s in seen)
    assert seen[0] == NamedSharding(fm, P(*spec))


@on_eight_devices
def test_inspect_under_set_mesh_vmap_grad_and_shard_map_like_jax():
    fm, jm = meshes((4, 2), ("a", "b"))
    x = np.arange(64.0).reshape(8, 2, 4)

    def run(lib, mesh, spec, ns):
        seen = []

        def f(v):
            y = lib.numpy.cos(v)
            lib.debug.inspect_array_sharding(y, callback=seen.append)
            return y.sum(-1)

        def sm(v):
            lib.debug.inspect_array_sharding(v, callback=seen.append)  # per-device: P()
            return v * 2.0

        sharded = ns(mesh, spec("a", "b"))
        lib.jit(lib.vmap(f), in_shardings=sharded)(x)
        lib.jit(lib.grad(lambda v: f(v).sum()), in_shardings=sharded)(x)
        with (funcad.set_mesh if lib is funcad else jax_set_mesh)(mesh):
            lib.jit(f, in_shardings=spec(None, "b"))(x)
        smap = funcad.shard_map if lib is funcad else jax_shard_map
        lib.jit(smap(sm, mesh=mesh, in_specs=spec("a"), out_specs=spec("a")))(x)
        return seen

    seen = run(funcad, fm, P, NamedSharding)
    if NEW_JAX:
        jseen = run(jax, jm, JP, jax.sharding.NamedSharding)
        assert [spec_of(s) for s in seen] == [spec_of(s) for s in jseen]
    assert [spec_of(s) for s in seen] == [("a", "b"), ("a", "b"), (None, "b"), ()]
    assert all(s.mesh == fm for s in seen)


@on_eight_devices
def test_visualize_array_sharding_inside_sharded_jit(capsys):
    fm, _ = meshes((4, 2), ("a", "b"))
    s = NamedSharding(fm, P("b", "a"))
    funcad.debug.visualize_sharding((8, 8), s, use_color=False)
    expected = capsys.readouterr().out
    f = funcad.jit(lambda v: funcad.debug.visualize_array_sharding(v + 1.0, use_color=False) or v,
                   in_shardings=s)
    f(np.ones((8, 8)))
    assert capsys.readouterr().out == expected and "CPU" in expected


@on_eight_devices
def test_compiled_as_text_of_an_spmd_program_is_partitioned_like_jax():
    fm, jm = meshes((4, 2), ("a", "b"))
    x = np.arange(64.0).reshape(8, 8)

    def f(lib, v):
        return (lib.numpy.sin(v) @ v).sum(0)

    fc = funcad.jit(lambda v: f(funcad, v), in_shardings=NamedSharding(fm, P("a", "b"))) \
        .lower(x).compile()
    jc = jax.jit(lambda v: f(jax, v), in_shardings=jax.sharding.NamedSharding(jm, JP("a", "b"))) \
        .lower(x).compile()
    text, jtext = fc.as_text(), jc.as_text()
    assert "num_partitions=8" in text and "num_partitions=8" in jtext
    assert _entry_params(text) == _entry_params(jtext) == ["f64[2,4]"]  # per-device blocks
    for op in ("all-reduce", "all-gather"):
        assert (op in text) == (op in jtext), op
    assert fc.cost_analysis()["flops"] > 0
    assert fc.memory_analysis().argument_size_in_bytes == 8 * 8 == \
        jc.memory_analysis().argument_size_in_bytes
    np.testing.assert_allclose(np.asarray(fc(x)), np.asarray(jc(x)), rtol=1e-12)


# ------------------------------------------- shard_map under spmd_axis_name ----

def _smap(lib, mesh, spec, body, in_spec, out_spec):
    return (funcad.shard_map if lib is funcad else jax_shard_map)(body(lib), mesh=mesh, in_specs=spec(*in_spec), out_specs=spec(*out_spec))


SMAP_CASES = {
    # (spmd_axis_name, body, in_specs, out_specs): the batch of 8 rows split over
    # "a" (2 rows per device) or over both axes (1 row), the body's own split over "b"
    "psum": ("a", lambda lib: lambda v: v * 2.0 + lib.lax.psum(v.sum(), "b"), ("b",), ("b",)),
    "all_gather": ("a", lambda lib: lambda v: lib.lax.all_gather(v, "b", tiled=True) * 3.0,
                   ("b",), ("b",)),
    "replicated_in": ("a", lambda lib: lambda v: lib.numpy.cos(v) + lib.lax.axis_index("b"), (),
                      ("b",)),
    "both_axes": (("a", "b"), lambda lib: lambda v: lib.numpy.cos(v) * 2.0, (), ()),
}


@on_eight_devices
@pytest.mark.parametrize("case", sorted(SMAP_CASES))
def test_shard_map_under_vmap_spmd_axis_name_splits_the_batch_like_jax(case):
    names, body, in_spec, out_spec = SMAP_CASES[case]
    fm, jm = meshes((4, 2), ("a", "b"))
    x = np.arange(64.0).reshape(8, 8)
    f = funcad.jit(funcad.vmap(_smap(funcad, fm, P, body, in_spec, out_spec), spmd_axis_name=names))
    out = f(x)
    # the values of the unsplit batch
    plain = funcad.jit(funcad.vmap(_smap(funcad, fm, P, body, in_spec, out_spec)))(x)
    np.testing.assert_allclose(np.asarray(out), np.asarray(plain), rtol=1e-12)
    if NEW_JAX:
        j = jax.jit(jax.vmap(_smap(jax, jm, JP, body, in_spec, out_spec), spmd_axis_name=names))
        jout = j(x)
        np.testing.assert_allclose(np.asarray(out), np.asarray(jout), rtol=1e-12)
        assert spec_of(out.sharding) == spec_of(jout.sharding)
    assert spec_of(out.sharding)[0] == names
    # the per-device program sees its part of the batch
    rows, cols = 8 // (4 if names == "a" else 8), (4 if in_spec else 8)
    text = f.lower(x).as_text()
    assert [line for line in text.splitlines() if "sdy.manual_computation" in line][0].endswith(
        f": tensor<{rows}x{cols}xf64>) {{")  # the block argument of the manual region
    # and so does the optimized program of each device
    assert f"f64[{rows},{cols}]" in f.lower(x).compile().as_text()


@on_eight_devices
def test_grad_of_vmapped_shard_map_with_spmd_axis_name_matches_jax():
    fm, jm = meshes((4, 2), ("a", "b"))
    x = np.linspace(-1.0, 1.0, 64).reshape(8, 8)

    def loss(lib, mesh, spec):
        f = (funcad.shard_map if lib is funcad else jax_shard_map)(
            lambda v: lib.numpy.sin(v) * lib.lax.psum((v * v).sum(), "b"),
                          mesh=mesh, in_specs=spec("b"), out_specs=spec("b"))
        return lambda v: (lib.vmap(f, spmd_axis_name="a")(v) ** 2).sum()

    g = funcad.jit(funcad.grad(loss(funcad, fm, P)))(x)
    jg = jax.jit(jax.grad(loss(jax, jm, JP)))(x)
    np.testing.assert_allclose(np.asarray(g), np.asarray(jg), rtol=1e-12)


@on_eight_devices
def test_shard_map_under_vmap_spmd_axis_name_errors_as_jax():
    fm, jm = meshes((4, 2), ("a", "b"))
    x = np.ones((8, 8))
    for lib, mesh, spec in ((funcad, fm, P), (jax, jm, JP)):
        f = (funcad.shard_map if lib is funcad else jax_shard_map)(
            lambda v: v, mesh=mesh, in_specs=spec("a"), out_specs=spec("a"))
        with pytest.raises(ValueError, match="spmd_axis_name cannot appear in shard_map in_specs"):
            lib.jit(lib.vmap(f, spmd_axis_name="a"))(x)
    g = funcad.shard_map(lambda v: v, mesh=fm, in_specs=P("b"), out_specs=P("b"))
    with pytest.raises(ValueError, match="not divisible by 4"):
        funcad.jit(funcad.vmap(g, spmd_axis_name="a"))(np.ones((6, 8)))
    h = funcad.shard_map(lambda v: v, mesh=fm, in_specs=P("b"), out_specs=P("b"), axis_names={"b"})
    with pytest.raises(ValueError, match="not one the shard_map inside maps over"):
        funcad.jit(funcad.vmap(h, spmd_axis_name="a"))(x)
