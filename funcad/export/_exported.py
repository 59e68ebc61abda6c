"""`export(jit(f))(*specs)` -> `Exported`: a jitted function lowered to a StableHLO
portable artifact with its calling convention (JAX's `jax.export.Exported`)."""
from __future__ import annotations

import dataclasses
import re
from typing import Callable, Sequence

import numpy as np

from ..core.avals import ShapedArray, float0
from ..core.errors import FuncadValueError
from ..core.pytree import PyTreeDef, tree_flatten, tree_map
from ..core.sharding import AbstractMesh, Mesh, NamedSharding, Sharding
from ..core.staging import ShapeDtypeStruct
from ..lowering import portable
from ..lowering.stablehlo import lower_jaxpr, tensor_type
from ..lowering import xla
from ..transforms.passes import optimize
from ..transforms.jit_spmd import constrains, lower_spmd
from ..core.typed_sharding import concrete
from ..core.staging import trace_to_jaxpr
from ..core.trace import eval_jaxpr
from ..transforms.api import vjp
from ..transforms.jit import Jitted

__all__ = ["DisabledSafetyCheck", "Exported", "export", "deserialize", "default_export_platform",
           "minimum_supported_calling_convention_version",
           "maximum_supported_calling_convention_version"]

minimum_supported_calling_convention_version = 9
maximum_supported_calling_convention_version = 10

_PLATFORMS = ("cpu", "cuda", "rocm")  # what funcad lowers for


class DisabledSafetyCheck:
    """A safety check to skip: `platform()` (call on another platform than exported for)
    or `custom_call(target)` (export a custom call without compatibility guarantees).

    >>> DisabledSafetyCheck.platform()
    platform
    """

    def __init__(self, _impl: str):
        self._impl = _impl

    @classmethod
    def platform(cls) -> "DisabledSafetyCheck":
        """Allow calling on a platform the function was not exported for."""
        return cls("platform")

    @classmethod
    def custom_call(cls, target_name: str) -> "DisabledSafetyCheck":
        """Allow exporting a custom call to `target_name`."""
        return cls(f"custom_call:{target_name}")

    def is_custom_call(self) -> str | None:
        """The custom-call target this check allows, or None."""
        m = re.match(r"custom_call:(.+)$", self._impl)
        return m.group(1) if m else None

    def __str__(self):
        return self._impl
    __repr__ = __str__

    def __eq__(self, other) -> bool:
        return isinstance(other, DisabledSafetyCheck) and self._impl == other._impl

    def __hash__(self) -> int:
        return hash(self._impl)


@dataclasses.dataclass(frozen=True, eq=False)
class Exported:
    """A function lowered to StableHLO with its calling convention (JAX's fields).

    `call(*args)` runs it (also under jit, vmap and grad, the derivative coming from its
    exported VJP); `serialize(vjp_order)` gives JAX-compatible bytes.
    """
    fun_name: str
    in_tree: PyTreeDef
    in_avals: tuple
    out_tree: PyTreeDef
    out_avals: tuple
    _in_named_shardings: tuple   # NamedSharding on an AbstractMesh, or None, per input
    _out_named_shardings: tuple  # (as JAX's: its in/out_shardings_hlo are None since 2026)
    in_shardings_hlo: tuple
    out_shardings_hlo: tuple
    nr_devices: int
    platforms: tuple
    ordered_effects: tuple
    unordered_effects: tuple
    disabled_safety_checks: Sequence[DisabledSafetyCheck]
    mlir_module_serialized: bytes
    calling_convention_version: int
    module_kept_var_idx: tuple
    uses_global_constants: bool
    _get_vjp: Callable | None

    def mlir_module(self) -> str:
        """The StableHLO module's text."""
        return portable.module_text(self.mlir_module_serialized)

    def __str__(self):
        return f"Exported(fun_name={self.fun_name}, ...)"
    __repr__ = __str__

    def in_shardings_jax(self, mesh: Mesh | AbstractMesh | None = None) -> tuple:
        """The inputs' shardings (None where unspecified), on `mesh` in lieu of the
        exported abstract mesh (None: as exported); `device_put` arguments with them.

        >>> import funcad, numpy as np
        >>> funcad.export.export(funcad.jit(lambda x: x))(np.ones(2)).in_shardings_jax()
        (None,)
        """
        return tuple(_on_mesh(s, mesh) for s in self._in_named_shardings)

    def out_shardings_jax(self, mesh: Mesh | AbstractMesh | None = None) -> tuple:
        """The outputs' shardings (None where XLA chooses), as `in_shardings_jax`."""
        return tuple(_on_mesh(s, mesh) for s in self._out_named_shardings)

    def has_vjp(self) -> bool:
        """Whether the VJP of this function is available (`vjp()`)."""
        return self._get_vjp is not None

    def vjp(self) -> "Exported":
        """The exported VJP: flat primal arguments, then one cotangent per output ->
        the cotangents of the flat arguments."""
        if self._get_vjp is None:
            raise ValueError("No VJP is available")
        return self._get_vjp(self)

    # serialize() and call() are installed by _serialization.py and _call.py, which build on
    # this module.


def _on_mesh(s, mesh):
    if s is None or mesh is None:
        return s
    if (mesh.axis_names, mesh.axis_sizes) != (s.mesh.axis_names, s.mesh.axis_sizes):
        raise ValueError(f"the function was exported for the mesh {s.mesh}, and the mesh given, "
                         f"{mesh}, has other axes; pass a mesh with the same axis names and sizes")
    return NamedSharding(mesh, s.spec)


def default_export_platform() -> str:
    """The platform `export` lowers for by default: 'cpu', or 'cuda'/'rocm' on a GPU."""
    if xla.default_backend() == "cpu":
        return "cpu"
    platform = str(xla.get_device("gpu").client.platform).lower()
    return "rocm" if "rocm" in platform else "cuda"


# ------------------------------------------------------------------ export ----

# Custom calls whose ABI jaxlib keeps stable (the kernels funcad's lowerings call).
_STABLE_TARGET = re.compile(r"(lapack_[a-z]+_ffi|cusolver_[a-z0-9]+_ffi|hipsolver_[a-z0-9]+_ffi|"
                            r"cu_lu_pivots_to_permutation|hip_lu_pivots_to_permutation|"
                            r"cusparse_gtsv2_ffi|cu_threefry2x32_ffi|hip_threefry2x32_ffi|"
                            r"Sharding|SPMDFullToShardShape|SPMDShardToFullShape)$")


def _check_custom_calls(text: str, disabled: Sequence[DisabledSafetyCheck]) -> None:
    allowed = {c.is_custom_call() for c in disabled} - {None}
    bad = sorted(t for t in portable.custom_call_targets(text)
                 if not _STABLE_TARGET.match(t) and t not in allowed and "ALL" not in allowed)
    if bad:
        raise ValueError(
            "Cannot serialize code with custom calls whose targets have no compatibility "
            f"guarantees. Examples are: {', '.join(bad)}. You can disable the check for a target "
            "by adding funcad.export.DisabledSafetyCheck.custom_call('<target>') to disabled_checks.")


def _bool_literal(x) -> str:
    if x.ndim == 0:
        return "true" if x else "false"
    return "[" + ", ".join(_bool_literal(r) for r in x) + "]"


def _with_inline_consts(lowered) -> str:
    """The lowered module with its hoisted constants (leading @main arguments) written as
    constants in the module: an exported module takes only the function's arguments."""
    text = lowered.text
    if not lowered.const_args:
        return text
    nconst = len(lowered.const_args)
    head, _, rest = text.partition("func.func public @main(")
    params, _, rest = rest.partition(") -> (")
    results, _, rest = rest.partition(") {\n")
    parts = re.split(r", (?=%)", params)
    consts, args = parts[:nconst], parts[nconst:]
    lines = []
    for p, value in zip(consts, lowered.const_args):
        name, typ = p.split(": ", 1)
        typ = typ.split(" {")[0]
        value = np.asarray(value)
        if value.dtype == float0:
            value = np.zeros(value.shape, np.bool_)
        if value.dtype == np.bool_:  # i1 as nested lists: the hex form of i1 differs by release
            body = _bool_literal(value)
        else:
            body = '"0x' + np.ascontiguousarray(value.astype(value.dtype.newbyteorder("<"))).tobytes().hex().upper() + '"'
        lines.append(f"    {name} = stablehlo.constant dense<{body}> : {typ}")
    return (f"{head}func.func public @main({', '.join(args)}) -> ({results}) {{\n"
            + "\n".join(lines) + "\n" + rest)


def _module_for(closed, name: str, platform: str) -> str:
    lowered = lower_jaxpr(closed, name, platform="cpu" if platform == "cpu" else "gpu")
    if lowered.host_callbacks:
        raise ValueError(f"cannot export {name}: it calls Python on the host (pure_callback or "
                         "debug callbacks), which a serialized program cannot carry")
    return _with_inline_consts(lowered)


def _multi_platform(texts: list[str], in_avals, out_avals, name: str) -> str:
    """One module for several platforms (JAX's convention): @main's first argument is the
    platform's index in `platforms`, and a `stablehlo.case` runs that platform's body."""
    funcs = []
    for i, text in enumerate(texts):
        funcs += portable.renamed_functions(text, f"_platform{i}_")[0]
    args = [f"%arg{i}: {tensor_type(a)}" for i, a in enumerate(in_avals)]
    outs = ", ".join(tensor_type(a) for a in out_avals)
    names = ", ".join(f"%arg{i}" for i in range(len(in_avals)))
    types = ", ".join(tensor_type(a) for a in in_avals)
    branches = []
    for i in range(len(texts)):
        branches.append("{\n" f"      %r{i}:{len(out_avals)} = func.call @_platform{i}_main({names}) : "
                        f"({types}) -> ({outs})\n"
                        f"      stablehlo.return {', '.join(f'%r{i}#{k}' for k in range(len(out_avals)))} : {outs}\n"
                        "    }")
    lines = [f"module @jit_{name} attributes {{mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32}} {{",
             f"  func.func public @main(%platform_index: tensor<i32>, {', '.join(args)}) -> ({outs}) {{",
             f"    %0:{len(out_avals)} = \"stablehlo.case\"(%platform_index) ({', '.join(branches)}) : "
             f"(tensor<i32>) -> ({outs})",
             f"    return {', '.join(f'%0#{k}' for k in range(len(out_avals)))} : {outs}",
             "  }", *funcs, "}", ""]
    return "\n".join(lines)


def _mark_static_shapes(text: str) -> str:
    """JAX's module attribute saying that no dimension is symbolic."""
    return re.sub(r"attributes \{", "attributes {jax.uses_shape_polymorphism = false, ", text, count=1)


def _canonical_platforms(platforms) -> tuple:
    if platforms is None:
        return (default_export_platform(),)
    if isinstance(platforms, str):
        raise ValueError(f"platforms must be a sequence of platform names, not the string {platforms!r}")
    out = tuple(str(p).lower() for p in platforms)
    for p in out:
        if p not in _PLATFORMS:
            raise ValueError(f"funcad.export lowers for the platforms {_PLATFORMS}, not {p!r}")
    if not out:
        raise ValueError("platforms must name at least one platform")
    return out


def _named(s) -> NamedSharding | None:
    """A sharding as the Exported records it: its spec on the abstract mesh."""
    return NamedSharding(s.mesh.abstract_mesh, s.spec) if isinstance(s, NamedSharding) else None


def _spmd_module(closed, name: str, platforms: tuple, ins: list, outs: list) -> tuple[str, int]:
    """The SPMD module (sharding annotations, `mhlo.num_partitions`) and its device count."""
    lo = lower_spmd(closed, name, None, ins, outs)
    if lo.prints is not None or lo.lowered.host_callbacks:
        raise ValueError(f"cannot export {name}: it calls Python on the host (pure_callback or "
                         "debug callbacks), which a serialized program cannot carry")
    here = "cpu" if lo.assignment[0].platform == "cpu" else default_export_platform()
    if platforms != (here,):
        raise ValueError(f"cannot export {name} for platforms {platforms}: a sharded export is "
                         f"lowered for its mesh's devices, which are {here!r}; pass "
                         f"platforms=[{here!r}] or a mesh of those devices")
    return _with_inline_consts(lo.lowered), len(lo.assignment)


def _exported_from_jaxpr(closed, in_tree, out_tree, name: str, platforms: tuple,
                         disabled: tuple, ins: Sequence = (), outs: Sequence = ()) -> Exported:
    """`ins`/`outs`: the flat inputs' and outputs' shardings (None: unspecified); a program
    over several devices is exported as one SPMD module, as JAX's."""
    ins = list(ins) + [None] * (len(closed.in_avals) - len(ins))
    outs = list(outs) + [None] * (len(closed.out_avals) - len(outs))
    in_avals = tuple(ShapedArray(a.shape, a.dtype) for a in closed.in_avals)
    out_avals = tuple(ShapedArray(a.shape, a.dtype) for a in closed.out_avals)
    if constrains(closed) or any(s is not None and s.num_devices > 1 for s in ins + outs):
        text, nr_devices = _spmd_module(closed, name, platforms, ins, outs)
        texts = [text]
    else:
        prepared = optimize(closed)
        texts, nr_devices = [_module_for(prepared, name, p) for p in platforms], 1
        text = texts[0] if len(platforms) == 1 else \
            _multi_platform(texts, in_avals, out_avals, re.sub(r"\W", "_", name))
    for t in texts:
        _check_custom_calls(t, disabled)
    module = portable.serialize(_mark_static_shapes(text))

    def get_vjp(exp: Exported) -> Exported:
        return _export_vjp(exp, closed, disabled, ins, outs)

    return Exported(
        fun_name=name, in_tree=in_tree, in_avals=in_avals, out_tree=out_tree, out_avals=out_avals,
        _in_named_shardings=tuple(map(_named, ins)), _out_named_shardings=tuple(map(_named, outs)),
        in_shardings_hlo=(None,) * len(in_avals), out_shardings_hlo=(None,) * len(out_avals),
        nr_devices=nr_devices, platforms=platforms, ordered_effects=(), unordered_effects=(),
        disabled_safety_checks=disabled, mlir_module_serialized=module,
        calling_convention_version=maximum_supported_calling_convention_version,
        module_kept_var_idx=tuple(range(len(in_avals))), uses_global_constants=len(platforms) > 1,
        _get_vjp=get_vjp)


def _export_vjp(exp: Exported, closed, disabled: tuple, ins: list, outs: list) -> Exported:
    """The VJP of the exported jaxpr, exported: (flat primals, flat output cotangents) ->
    flat input cotangents (JAX's convention), the cotangents sharded as their primals."""
    n_in = len(exp.in_avals)

    def fun_vjp(*args):
        primals, cts = args[:n_in], args[n_in:]
        _, pullback = vjp(lambda *xs: list(eval_jaxpr(closed.jaxpr, closed.consts, *xs)), *primals)
        return tuple(pullback(list(cts)))

    ct_avals = [ShapedArray(a.shape, a.dtype if np.issubdtype(a.dtype, np.inexact) else float0)
                for a in exp.out_avals]
    avals = list(exp.in_avals) + ct_avals
    vjp_closed = trace_to_jaxpr(fun_vjp, avals, name=f"vjp({exp.fun_name})")
    in_tree = tree_flatten(((0,) * len(avals), {}))[1]
    out_tree = tree_flatten((0,) * n_in)[1]
    return _exported_from_jaxpr(vjp_closed, in_tree, out_tree, f"vjp({exp.fun_name})",
                                exp.platforms, disabled, ins + outs, ins)


def _spec_sharding(spec, i: int) -> Sharding | None:
    """A ShapeDtypeStruct's sharding, on devices (an abstract mesh's are the context
    mesh's, or the last Mesh made's)."""
    s = getattr(spec, "sharding", None) if isinstance(spec, ShapeDtypeStruct) else None
    if isinstance(s, NamedSharding) and not isinstance(s.mesh, Mesh):
        if s.mesh.size == 1:
            return None
        try:
            return concrete(s)
        except FuncadValueError:
            raise ValueError(
                f"argument {i} has sharding {s} over {s.mesh.size} devices, and no Mesh of "
                f"those devices is known: funcad lowers a sharded export for its devices. Enter "
                f"one with funcad.sharding.set_mesh(mesh) or give a NamedSharding on a Mesh") from None
    return s if isinstance(s, Sharding) else None


def export(fun_jit, *, platforms: Sequence[str] | None = None,
           disabled_checks: Sequence[DisabledSafetyCheck] = ()) -> Callable[..., Exported]:
    """Export a jitted function: `export(jit(f))(*args_specs, **kwargs_specs)` lowers it for
    arguments like the given arrays or `funcad.ShapeDtypeStruct`s (concrete shapes).

    >>> import funcad, numpy as np
    >>> exp = funcad.export.export(funcad.jit(funcad.numpy.sin))(np.zeros(3, np.float32))
    >>> exp.in_avals, exp.platforms
    ((ShapedArray(float32[3]),), ('cpu',))
    >>> rehydrated = funcad.export.deserialize(exp.serialize())
    >>> rehydrated.call(np.full(3, 0.5, np.float32))
    Array([0.47942555, 0.47942555, 0.47942555], dtype=float32)
    """
    if not isinstance(fun_jit, Jitted):
        raise ValueError(f"Function to be exported must be the result of `jit` but is: {fun_jit}")
    disabled = tuple(disabled_checks)
    for c in disabled:
        if not isinstance(c, DisabledSafetyCheck):
            raise ValueError(f"disabled_checks must hold DisabledSafetyCheck values, not {c!r}")

    def do_export(*args_specs, **kwargs_specs) -> Exported:
        for leaf in tree_flatten((args_specs, kwargs_specs))[0]:
            if any(not isinstance(d, (int, np.integer)) for d in getattr(leaf, "shape", ())):
                raise ValueError(f"funcad.export needs concrete shapes, got {leaf.shape}: shape "
                                 "polymorphism (symbolic dimensions) is not supported")
        specs = [_spec_sharding(leaf, i) for i, leaf in enumerate(tree_flatten((args_specs, kwargs_specs))[0])]
        # specs trace as arrays of their shape and dtype (broadcast views: no memory)
        args_specs, kwargs_specs = tree_map(
            lambda a: np.broadcast_to(np.zeros((), a.dtype), a.shape)
            if isinstance(a, ShapeDtypeStruct) else a, (args_specs, kwargs_specs))
        traced = fun_jit.trace(*args_specs, **kwargs_specs)
        ins, outs = traced._shardings
        # jit's in_shardings win over the specs' (as JAX's)
        ins = [s if s is not None else spec for s, spec in zip(list(ins) + [None] * len(specs), specs)]
        return _exported_from_jaxpr(traced.jaxpr, traced.in_tree, traced.out_tree, traced.fun_name,
                                    _canonical_platforms(platforms), disabled, ins, outs)
    return do_export

