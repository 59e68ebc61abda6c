"""How an SPMD program tells XLA's partitioner the layouts of its values.

Two dialects, one per partitioner. **Shardy** (JAX's default, and funcad's where
jaxlib has it, option `use_shardy_partitioner`): the module declares its meshes
(`sdy.mesh @mesh = <["x"=4, "y"=2]>`), arguments and results carry
`sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>` (one `{axes}` per dimension,
`{?}` for a dimension the partitioner may still split), `with_sharding_constraint`
is `sdy.sharding_constraint`, and a shard_map body is the region of an
`sdy.manual_computation` over its manual axes. **GSPMD** (jaxlibs before
Shardy, or the option off): `mhlo.sharding = "{devices=[4,1,2]<=[8] ...}"`
strings, the `Sharding` custom call, and shard_map's body between
`SPMDFullToShardShape` and `SPMDShardToFullShape`.

An `Annotator` (on `Module.partition`) renders both for one program: partition
i runs on `assignment[i]`, and a mesh's devices are named by their partitions.

>>> import funcad, numpy as np
>>> from funcad.sharding import Mesh, NamedSharding, PartitionSpec as P
>>> devs = funcad.devices()[:1]
>>> a = Annotator(devs, shardy=True)
>>> a.attr(NamedSharding(Mesh(np.array(devs).reshape(1, 1), ("x", "y")), P("x")), 2)
'sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>'
>>> a.declarations()
['  sdy.mesh @mesh = <["x"=1, "y"=1]>']
"""
from __future__ import annotations

import functools
from typing import Callable, Sequence

from ..core import options
from ..core.avals import ShapedArray
from ..core.sharding import (AxisType, NamedSharding, PartitionSpec, Sharding, SingleDeviceSharding,
                             hlo_sharding)
from ..core.ir import literal_value
from . import xla
from .stablehlo import Captures, LoweringContext, Value, tensor_type
from ..core.errors import UnsupportedError

__all__ = ["Annotator", "shardy_available", "use_shardy"]


@functools.lru_cache(maxsize=1)
def shardy_available() -> bool:
    """Whether the installed jaxlib compiles Shardy's dialect (its build options say so)."""
    return hasattr(xla._load().CompileOptions().executable_build_options, "use_shardy_partitioner")


def use_shardy() -> bool:
    """Whether programs lowered now are partitioned by Shardy (the option, where jaxlib has it)."""
    return bool(options.use_shardy_partitioner) and shardy_available()


def _axes(part) -> tuple:
    return () if part is None else tuple(part) if isinstance(part, tuple) else (part,)


def _quoted(names) -> str:
    return ", ".join(f'"{n}"' for n in names)


class Annotator:
    """The sharding annotations of one SPMD program (see the module docstring)."""

    def __init__(self, assignment: Sequence, shardy: bool):
        self.assignment, self.shardy = tuple(assignment), shardy
        self._position = {id(d): i for i, d in enumerate(self.assignment)}
        self._meshes: dict = {}  # key -> (symbol, declaration)

    # -- Shardy's meshes ------------------------------------------------------
    def _mesh(self, axes: tuple, ids: tuple) -> str:
        """The symbol of the mesh with `axes` ((name, size) pairs) over partitions `ids`."""
        key = (axes, ids)
        if key not in self._meshes:
            if not axes:
                symbol = f"maximal_mesh_{ids[0]}" if ids else "empty_mesh"
            else:
                named = sum(1 for k in self._meshes if k[0])
                symbol = "mesh" if named == 0 else f"mesh_{named - 1}"
            body = "[" + ", ".join(f'"{n}"={s}' for n, s in axes) + "]"
            if ids and (not axes or ids != tuple(range(len(ids)))):  # (a maximal mesh names its device)
                body += f", device_ids=[{', '.join(map(str, ids))}]"
            self._meshes[key] = (symbol, f"  sdy.mesh @{symbol} = <{body}>")
        return self._meshes[key][0]

    def declarations(self) -> list[str]:
        """The `sdy.mesh` lines the module's annotations refer to (none under GSPMD)."""
        return [decl for _, decl in self._meshes.values()]

    def _sdy(self, sharding: Sharding | None, ndim: int, wrt_axis_types: bool = False) -> str:
        """`<@mesh, [dims]>` (no prefix) for a rank-`ndim` value; None: replicated.
        `wrt_axis_types` (JAX's rule where the partitioner still places values, as in a
        shard_map over some axes): on a mesh with Auto axes every dimension is open to
        them, and the Explicit axes the spec leaves out are kept replicated."""
        if sharding is None:  # on the program's first mesh, else on an empty one
            named = [symbol for key, (symbol, _) in self._meshes.items() if key[0]]
            symbol = named[0] if named else self._mesh((), ())
            return f"<@{symbol}, [{', '.join(['{}'] * ndim)}]>"
        if len(self.assignment) == 1 and isinstance(sharding, SingleDeviceSharding):
            return self._sdy(None, ndim)
        if isinstance(sharding, SingleDeviceSharding) or \
                (sharding.num_devices == 1 and len(self.assignment) > 1):  # on one device of several
            device = sharding._device_assignment[0]
            return f"<@{self._mesh((), (self._position[id(device)],))}, []>"
        mesh = sharding.mesh
        ids = tuple(self._position[id(d)] for d in mesh.devices.flat)
        symbol = self._mesh(tuple(zip(mesh.axis_names, mesh.axis_sizes)), ids)
        unconstrained = getattr(PartitionSpec, "UNCONSTRAINED", object())
        parts = list(sharding.spec) + [None] * (ndim - len(sharding.spec))
        unreduced = getattr(sharding.spec, "unreduced", ())
        types = dict(zip(mesh.axis_names, mesh.axis_types))
        by_types = wrt_axis_types and AxisType.Auto in types.values()
        dims, used = [], set()
        for p in parts:
            is_open = by_types or p is unconstrained
            names = [] if p is unconstrained else list(_axes(p))
            used.update(names)
            dims.append("{" + ", ".join([_quoted(names)] * bool(names) + ["?"] * is_open) + "}")
        text = f"<@{symbol}, [{', '.join(dims)}]"
        replicated = [a for a in mesh.axis_names if by_types and types[a] is AxisType.Explicit
                      and a not in used and a not in unreduced]
        if replicated:
            text += f", replicated={{{_quoted(replicated)}}}"
        if unreduced:
            text += f", unreduced={{{_quoted(a for a in mesh.axis_names if a in unreduced)}}}"
        return text + ">"

    # -- argument and result attributes --------------------------------------
    def attr(self, sharding: Sharding | None, ndim: int) -> str:
        """The attribute placing a rank-`ndim` argument or result (None: replicated)."""
        if self.shardy:
            return f"sdy.sharding = #sdy.sharding{self._sdy(sharding, ndim)}"
        text = "{replicated}" if sharding is None else hlo_sharding(sharding, ndim, self.assignment)
        return f'mhlo.sharding = "{text}"'

    def host_call_attr(self, manual, out_avals) -> str:
        """The sharding of a host callback's results, as JAX places it: on partition 0
        (XLA runs it once, on the whole values), or inside a shard_map (`manual`, the
        innermost `_Manual`) on every device with its local values."""
        if manual is None:
            if self.shardy:
                one = f"<@{self._mesh((), (0,))}, []>"
                return f"sdy.sharding = #sdy.sharding_per_value<[{', '.join([one] * len(out_avals))}]>"
            return f'mhlo.sharding = "{_gspmd_per_value("{maximal device=0}", len(out_avals))}"'
        if set(manual.axes) != set(manual.mesh.axis_names):
            raise UnsupportedError(
                "pure_callback inside a shard_map over some of its mesh's axes (axis_names="
                f"{sorted(manual.axes)} of {manual.mesh.axis_names}) cannot be compiled by funcad: "
                "it runs per device only where every axis is manual. Map over all the mesh's axes, "
                "or call it outside the shard_map")
        if self.shardy:
            per = ", ".join(f"<@{self._mesh((), ())}, [{', '.join(['{}'] * a.ndim)}]>"
                            for a in out_avals)
            return f"sdy.sharding = #sdy.sharding_per_value<[{per}]>"
        return f'mhlo.sharding = "{_gspmd_per_value("{manual}", len(out_avals))}"'

    # -- operations ----------------------------------------------------------
    def constrain(self, ctx, x, sharding: Sharding, wrt_axis_types: bool = False):
        """`x` held to `sharding` where the partitioner places it (with_sharding_constraint;
        `wrt_axis_types`: a sharding that an array's type carries, see `_sdy`)."""
        name, t = ctx.module.fresh(), tensor_type(x.aval)
        if self.shardy:
            held = self._sdy(sharding, x.aval.ndim, wrt_axis_types)
            line = f"{name} = sdy.sharding_constraint {x.name} {held} : {t}"
        else:
            line = (f'{name} = "stablehlo.custom_call"({x.name}) <{{call_target_name = "Sharding"}}> '
                    f'{{mhlo.sharding = "{hlo_sharding(sharding, x.aval.ndim, self.assignment)}"}} '
                    f": ({t}) -> {t}")
        ctx.lines.append(" " * ctx.indent + line)
        return type(x)(name, x.aval)

    def manual(self, ctx, args, mesh, in_specs, out_specs, manual_axes, local_avals, out_avals,
               body: Callable, consts=(), bound=frozenset()):
        """A shard_map: `args` (global values, split as `in_specs` over `mesh`) enter
        `body(inner_ctx, const_values, local_values)` as their per-device blocks of
        `local_avals`; its results leave as global values of `out_avals` joined as
        `out_specs`. `manual_axes` become manual (`bound`: those an enclosing shard_map
        made manual). Array `consts` (the body's) enter replicated; under Shardy so does
        every constant hoisted inside the region, which is isolated from the program."""
        if self.shardy:
            return self._manual_computation(ctx, args, mesh, in_specs, out_specs, manual_axes,
                                            local_avals, out_avals, body, consts, bound)
        hlo = lambda spec, ndim: hlo_sharding(NamedSharding(mesh, spec), ndim, self.assignment)  # noqa: E731
        const_vals = []
        for c in consts:
            v = ctx.const_value(c)
            const_vals.append(v if literal_value(c) else self._to_manual(ctx, v, "{replicated}", v.aval))
        locals_ = [self._to_manual(ctx, x, hlo(s, x.aval.ndim), local)
                   for x, s, local in zip(args, in_specs, local_avals)]
        outs = body(ctx, const_vals, locals_)
        return [self._from_manual(ctx, o, hlo(s, len(g.shape)), g)
                for o, s, g in zip(outs, out_specs, out_avals)]

    def _manual_computation(self, ctx, args, mesh, in_specs, out_specs, manual_axes, local_avals,
                            out_avals, body, consts, bound):
        module = ctx.module
        manual = [a for a in mesh.axis_names if a in manual_axes]
        # with axes left to the partitioner, dimensions stay open for them (JAX's rule)
        partial = any(a not in manual_axes and a not in bound for a in mesh.axis_names)
        inner = LoweringContext(module, ctx.indent + 2)
        captures = Captures(module)
        module.isolated.append(captures)
        try:
            const_vals = [inner.const_value(c) for c in consts]
            block = [Value(module.fresh(), a) for a in local_avals]
            outs = body(inner, const_vals, block)
        finally:
            module.isolated.pop()
        outer = [v for v, _ in captures.values()]
        operands = outer + list(args)
        shard = lambda spec, ndim: self._sdy(NamedSharding(mesh, spec), ndim, partial)  # noqa: E731
        ins = ([shard(PartitionSpec(), v.aval.ndim) for v in outer] +
               [shard(_with_free_axes(s, b.aval), v.aval.ndim) for s, v, b in zip(in_specs, args, block)])
        out_sh = [shard(_with_free_axes(s, o.aval), a.ndim) for s, a, o in zip(out_specs, out_avals, outs)]
        heads = [f"{i.name}: {tensor_type(i.aval)}" for _, i in captures.values()] + \
                [f"{b.name}: {tensor_type(b.aval)}" for b in block]
        ret = "sdy.return" + (f" {', '.join(o.name for o in outs)} : "
                              f"{', '.join(tensor_type(o.aval) for o in outs)}" if outs else "")
        inner.lines.append(" " * inner.indent + ret)
        res = module.fresh()
        lhs = res if len(out_avals) == 1 else f"{res}:{len(out_avals)}"
        out_types = ", ".join(tensor_type(a) for a in out_avals)
        pad = " " * ctx.indent
        ctx.lines.append(
            pad + (f"{lhs} = " if out_avals else "") +
            f"sdy.manual_computation({', '.join(v.name for v in operands)}) "
            f"in_shardings=[{', '.join(ins)}] out_shardings=[{', '.join(out_sh)}] "
            f"manual_axes={{{_quoted(manual)}}} ({', '.join(heads)}) {{")
        ctx.lines += inner.lines
        ctx.lines.append(pad + f"}} : ({', '.join(tensor_type(v.aval) for v in operands)}) -> "
                         + (out_types if len(out_avals) == 1 else f"({out_types})"))
        out_avals = [ShapedArray(a.shape, a.dtype) for a in out_avals]
        if len(out_avals) == 1:
            return [Value(res, out_avals[0])]
        return [Value(f"{res}#{i}", a) for i, a in enumerate(out_avals)]

    @staticmethod
    def _custom_call(ctx, x, target, sharding, out_aval):
        name = ctx.module.fresh()
        ctx.lines.append(" " * ctx.indent + f'{name} = "stablehlo.custom_call"({x.name}) '
                         f'<{{call_target_name = "{target}"}}> {{mhlo.sharding = "{sharding}"}} '
                         f": ({tensor_type(x.aval)}) -> {tensor_type(out_aval)}")
        return type(x)(name, ShapedArray(out_aval.shape, out_aval.dtype))

    def _to_manual(self, ctx, x, sharding, local):
        x = self._custom_call(ctx, x, "Sharding", sharding, x.aval)
        return self._custom_call(ctx, x, "SPMDFullToShardShape", "{manual}", local)

    def _from_manual(self, ctx, x, sharding, global_aval):
        x = self._custom_call(ctx, x, "Sharding", "{manual}", x.aval)
        return self._custom_call(ctx, x, "SPMDShardToFullShape", sharding, global_aval)


def _with_free_axes(spec: PartitionSpec, body_aval) -> PartitionSpec:
    """A shard_map operand's or result's spec over the mapped axes, joined by the free
    Explicit axes the body's type splits it over (JAX's manual_computation shardings)."""
    typed = getattr(body_aval, "_sharding", None)
    if typed is None:
        return spec
    parts = list(spec) + [None] * (len(typed.spec) - len(spec))
    joined = [_axes(p) + _axes(q) for p, q in zip(parts, typed.spec)]
    return PartitionSpec(*[None if not j else j[0] if len(j) == 1 else j for j in joined])


def _gspmd_per_value(one: str, n: int) -> str:
    """GSPMD's sharding of an op's `n` results, each `one` (a tuple unless n == 1)."""
    return one if n == 1 else "{" + ", ".join([one] * n) + "}"
