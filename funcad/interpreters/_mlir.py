"""Lowering of library primitives (JAX's `interpreters.mlir`).

funcad writes StableHLO itself, so a library primitive is lowered by tracing a
funcad function that computes it: `register_lowering(p, lower_fun(fun))`.
A rule written with JAX's MLIR builders cannot run here: registering one is
accepted (libraries register such rules at import, often for primitives a
program never jits), and lowering the primitive with it raises an error that
names the primitive and the alternative.

>>> import numpy as np, funcad, funcad.numpy as jnp
>>> from funcad.extend.core import Primitive
>>> from funcad.interpreters import mlir
>>> axpy_p = Primitive("axpy")
>>> _ = axpy_p.def_impl(lambda a, x, y: a * x + y)
>>> _ = axpy_p.def_abstract_eval(lambda a, x, y: x)
>>> _ = mlir.register_lowering(axpy_p, mlir.lower_fun(lambda a, x, y: a * x + y, multiple_results=False))
>>> funcad.jit(axpy_p.bind)(np.float32(2), np.ones(2, np.float32), np.ones(2, np.float32)).tolist()
[3.0, 3.0]
"""
from __future__ import annotations

from typing import Callable

from ..core.errors import UnsupportedError
from ..core.staging import trace_to_jaxpr
from ..core.trace import lowering_rules
from ..lowering.stablehlo import lower_closed_call

__all__ = ["lower_fun", "register_lowering"]

# JAX's platform names -> funcad's backends
_PLATFORMS = {"cpu": "cpu", "cuda": "gpu", "rocm": "gpu", "gpu": "gpu", "tpu": "tpu"}


class LoweringFun:
    """A lowering rule made from a funcad function (see lower_fun)."""

    def __init__(self, fun: Callable, multiple_results: bool):
        self.fun, self.multiple_results = fun, multiple_results

    def __call__(self, ctx, *operands, **params):
        def flat(*xs):
            out = self.fun(*xs, **params)
            return list(out) if self.multiple_results else [out]
        closed = trace_to_jaxpr(flat, [v.aval for v in operands], name="lower_fun")
        outs = lower_closed_call(ctx, closed, operands)
        return outs if self.multiple_results else outs[0]

    def __repr__(self):
        return f"lower_fun({getattr(self.fun, '__name__', self.fun)!r})"


def lower_fun(fun: Callable, multiple_results: bool = True) -> LoweringFun:
    """A lowering rule that lowers `fun(*operands, **params)`, written with funcad ops
    (a list of outputs if `multiple_results`), in place of the primitive."""
    return LoweringFun(fun, multiple_results)


def register_lowering(prim, rule: Callable, platform: str | None = None, **kwargs) -> Callable:
    """Lower `prim` with `rule`, made by lower_fun; with `platform` ('cpu', 'cuda',
    'rocm', 'tpu') only on that platform. Any other rule (one written with JAX's
    MLIR builders) is kept and refused when the primitive is lowered with it."""
    if not callable(rule):
        raise TypeError(f"register_lowering({prim.name}, ...): the rule must be callable, got {rule!r}")
    kept = rule if isinstance(rule, LoweringFun) else _ForeignRule(prim, rule)
    if kwargs:
        raise UnsupportedError(f"register_lowering: {sorted(kwargs)} need JAX's MLIR lowering "
                               "context, which funcad lacks; leave them out")
    if platform is not None and platform not in _PLATFORMS:
        raise ValueError(f"register_lowering: unknown platform {platform!r}; use one of "
                         f"{sorted(_PLATFORMS)}")
    _by_platform.setdefault(prim, {})[_PLATFORMS.get(platform)] = kept
    lowering_rules[prim] = _PlatformDispatch(prim)
    return rule


class _ForeignRule:
    """A lowering rule written with JAX's MLIR builders: lowering with it is refused."""

    def __init__(self, prim, rule):
        self.prim, self.rule = prim, rule

    def __call__(self, ctx, *operands, **params):
        name = getattr(self.rule, "__name__", repr(self.rule))
        raise UnsupportedError(
            f"primitive `{self.prim.name}` is lowered by `{name}`, a rule written with JAX's MLIR "
            "builders (registered with mlir.register_lowering); funcad writes StableHLO itself and "
            "cannot run it. Call the function outside jit, or register "
            f"`mlir.lower_fun(fun, multiple_results={self.prim.multiple_results})`, where "
            "`fun(*operands, **params)` computes the primitive with funcad ops.")

    def __repr__(self):
        return f"<rule {getattr(self.rule, '__name__', self.rule)!r} written with JAX's MLIR builders>"


_by_platform: dict = {}  # prim -> {funcad backend or None (any): LoweringFun}


class _PlatformDispatch:
    """The lowering rule of a library primitive: the one registered for the
    program's platform, else the one registered for all."""

    def __init__(self, prim):
        self.prim = prim

    def __call__(self, ctx, *operands, **params):
        rules = _by_platform[self.prim]
        rule = rules.get(ctx.module.platform, rules.get(None))
        if rule is None:
            raise UnsupportedError(
                f"primitive `{self.prim.name}` has lowering rules only for the platforms "
                f"{sorted(rules)}, not for {ctx.module.platform!r}; register one with "
                "register_lowering(p, lower_fun(fun)) (platform=None for all)")
        return rule(ctx, *operands, **params)
