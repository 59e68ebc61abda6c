"""jit's stages, as JAX's AOT API: `Traced` (jit(f).trace), `Lowered` (.lower), `Compiled`
(.compile), their `ArgInfo`, `Wrapped` (the protocol of what jit returns) and `_Entry`,
one compiled signature of a jitted function."""
from __future__ import annotations

import dataclasses
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..core import options as _options
from ..core.errors import FuncadTypeError
from ..core.pytree import tree_flatten, tree_unflatten
from ..core.sharding import SingleDeviceSharding
from ..core.staging import ShapeDtypeStruct
from ..core.trace import eval_jaxpr
from ..lowering import xla
from ..lowering.runtime import (Executable, compiled_cost, compiled_memory, compiled_text,
                                guard_inputs)
from ..lowering.stablehlo import lower_jaxpr
from . import inspect_sharding
from .jit_spmd import SpmdExecutable, constrains, lower_spmd
from .jit_primitive import _executable, _prepare


class _Entry:
    """One traced signature: its jaxpr and an executable per host mask (which
    inputs are NumPy), since host inputs travel packed (lowering/packing.py)."""

    __slots__ = ("closed", "executables", "out_tree", "single", "name", "backend", "donated",
                 "in_shardings", "out_shardings", "spmd", "compiler_options")

    def __init__(self, closed, out_tree, name, backend, donated=(), in_shardings=None,
                 out_shardings=(), compiler_options=None):
        self.closed, self.out_tree = closed, out_tree
        self.compiler_options = compiler_options
        self.name, self.backend, self.donated = name, backend, donated
        self.executables: dict = {}
        self.single = out_tree.kind is None  # one array out: skip unflattening
        # Shardings per input and output leaf (None: unspecified); an SPMD program
        # when any is given or the function constrains a layout.
        self.spmd = (in_shardings is not None and any(s is not None for s in in_shardings)) or \
            any(s is not None for s in out_shardings) or constrains(closed)
        self.in_shardings = (in_shardings or [None] * len(closed.in_avals)) if self.spmd else None
        self.out_shardings = out_shardings

    def executable(self, mask: tuple) -> Executable:
        if self.spmd:
            mask = None  # SPMD inputs are laid out per device, never packed
        exe = self.executables.get(mask)
        if exe is None:
            with xla.compiler_options(self.compiler_options):
                exe = self.executables[mask] = _executable(
                    self.closed, self.name, self.backend, self.donated, mask, self.in_shardings,
                    self.out_shardings)
        return exe


# ------------------------------------------------------------------ stages ----
# jit(f).trace(...) -> Traced, .lower() -> Lowered, .compile() -> Compiled: JAX's
# ahead-of-time stages (funcad.stages names them). Each carries the signature it was
# made for: `args_info` (a tree of ArgInfo over (args, kwargs), static arguments left
# out), `in_tree`, `out_tree`, `in_avals`, `donate_argnums` and `out_info`.


@dataclasses.dataclass(frozen=True, slots=True)
class ArgInfo:
    """One dynamic argument leaf of a stage (a pytree leaf): its aval and whether it is
    donated.

    >>> import funcad, numpy as np
    >>> funcad.jit(lambda x: x).lower(np.ones(2, np.float32)).args_info[0][0].shape
    (2,)
    """
    _aval: object
    donated: bool

    @property
    def shape(self) -> tuple:
        return self._aval.shape

    @property
    def dtype(self) -> np.dtype:
        return self._aval.dtype


class _Stage:
    """What every stage knows of its signature (`_args_info`, `out_tree` set by each)."""

    args_info = property(lambda self: self._args_info)
    in_tree = property(lambda self: self._in_tree)

    @property
    def in_avals(self):
        """The tree (args, kwargs) of the dynamic arguments' avals."""
        return tree_unflatten(self._in_tree, list(self._jaxpr.in_avals))

    @property
    def donate_argnums(self) -> tuple:
        """The flat indices of the donated argument leaves."""
        return tuple(i for i, d in enumerate(self._donated) if d)

    @property
    def out_info(self):
        """The tree of the outputs' ShapeDtypeStructs."""
        return tree_unflatten(self.out_tree, [ShapeDtypeStruct(a.shape, a.dtype)
                                              for a in self._jaxpr.out_avals])

    def _init_stage(self, jitted, closed, in_tree, out_tree, key, donated, shardings):
        # jit's signature holds the positional arguments as a list; JAX's stages, a tuple
        args, kwargs = tree_unflatten(in_tree, list(range(in_tree.num_leaves)))
        in_tree = tree_flatten((tuple(args), kwargs))[1]
        self._jitted, self._jaxpr, self._in_tree, self.out_tree = jitted, closed, in_tree, out_tree
        self._key, self._donated, self._shardings = key, donated, shardings or (None, ())
        flags = list(donated) + [False] * (len(closed.in_avals) - len(donated))
        self._args_info = tree_unflatten(in_tree, [ArgInfo(a, bool(d))
                                                   for a, d in zip(closed.in_avals, flags)])


class Traced(_Stage):
    """A jitted function traced for one argument signature: `.jaxpr`, `.lower()`.

    >>> import funcad, numpy as np
    >>> t = funcad.jit(lambda x: {"y": x * 2.0}).trace(np.ones(3))
    >>> t.out_info
    {'y': ShapeDtypeStruct(shape=(3,), dtype=float64)}
    >>> t.lower().compile()(np.ones(3))["y"]
    Array([2., 2., 2.], dtype=float64)
    """

    def __init__(self, jitted, closed, in_tree, out_tree, key, donated, shardings=None):
        self._init_stage(jitted, closed, in_tree, out_tree, key, donated, shardings)

    jaxpr = property(lambda self: self._jaxpr, doc="The traced ClosedJaxpr.")
    fun_name = property(lambda self: self._jitted.name)

    @property
    def out_avals(self):
        """The tree of the outputs' avals (weak types kept)."""
        return tree_unflatten(self.out_tree, list(self._jaxpr.out_avals))

    @property
    def out_info(self):
        """The tree of the outputs' ShapeDtypeStructs (with their weak types, as JAX's)."""
        return tree_unflatten(self.out_tree, [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
                                              for a in self._jaxpr.out_avals])

    def lower(self) -> "Lowered":
        """Lower to StableHLO: a `Lowered` stage."""
        return Lowered(self._jitted, self._jaxpr, self.out_tree, self._key, self._donated,
                       self._shardings, self._in_tree)

    def __call__(self, *args, **kwargs):
        """Evaluate the traced program on arguments of the traced structure (static
        arguments left out), as JAX's Traced does."""
        leaves, tree = tree_flatten((args, kwargs))
        if tree != self._in_tree:
            raise FuncadTypeError(f"Traced {self.fun_name}: called with arguments of structure {tree}, "
                                  f"but it was traced for {self._in_tree} (static arguments are left "
                                  "out of a traced call)")
        return tree_unflatten(self.out_tree, eval_jaxpr(self._jaxpr.jaxpr, self._jaxpr.consts, *leaves))


class Lowered(_Stage):
    """A traced and lowered jitted function: `.as_text()`, `.compile()`, `.jaxpr`."""

    def __init__(self, jitted, closed, out_tree, key, donated, shardings=None, in_tree=None):
        if in_tree is None:  # the flat signature
            in_tree = tree_flatten(((*[0] * len(closed.in_avals),), {}))[1]
        self._init_stage(jitted, closed, in_tree, out_tree, key, donated, shardings)
        self.jaxpr = closed
        probe = _Entry(closed, out_tree, jitted.name, jitted.backend, donated, *self._shardings)
        # inspect_array_sharding's callbacks run when the program is compiled; the text
        # names them by address, so they are kept as long as it is
        with inspect_sharding.collect() as self._inspected:
            if probe.spmd:  # the SPMD program, with its sharding annotations
                self._text = lower_spmd(closed, jitted.name, jitted.backend, probe.in_shardings,
                                        probe.out_shardings, donated).lowered.text
            else:
                self._text = lower_jaxpr(_prepare(closed)[0], jitted.name, donated).text

    def as_text(self, dialect: str | None = None) -> str:
        """The program as text: StableHLO (`dialect` None or "stablehlo"), or XLA's HLO
        before optimization ("hlo")."""
        if dialect is None or dialect == "stablehlo":
            return self._text
        if dialect == "hlo":
            return xla.hlo_computation(self._text).as_hlo_text()
        raise ValueError(f"unknown dialect: {dialect}")

    def compiler_ir(self, dialect: str | None = None):
        """The program as the compiler's object: a module of jaxlib's MLIR bindings
        (`dialect` None or "stablehlo") or an XLA computation ("hlo"), as JAX's.

        >>> import funcad, numpy as np
        >>> lo = funcad.jit(lambda x: x * 2.0).lower(np.ones(2))
        >>> "multiply" in lo.compiler_ir(dialect="hlo").as_hlo_text()
        True
        """
        if dialect is None or dialect == "stablehlo":
            return xla.mlir_module(self._text)
        if dialect == "hlo":
            return xla.hlo_computation(self._text)
        raise ValueError(f"unknown dialect: {dialect}")

    def compile(self, compiler_options: dict | None = None) -> "Compiled":
        """Compile with XLA: a `Compiled` stage, also stored in the jitted function's cache.

        `compiler_options` ({name: value}, as JAX's) are XLA's debug options by name
        (e.g. {"xla_cpu_enable_fast_math": True}) or "optimization_level" /
        "memory_fitting_level" (0, 9, 19, 29, 39), applied to this compile only: its
        executable is not stored in the cache. An unknown name raises XLA's error.

        >>> import funcad, numpy as np
        >>> lo = funcad.jit(lambda x: x * 2.0).lower(np.ones(2))
        >>> lo.compile({"xla_backend_optimization_level": 0})(np.ones(2)).tolist()
        [2.0, 2.0]
        """
        entry = _Entry(self.jaxpr, self.out_tree, self._jitted.name, self._jitted.backend,
                       self._donated, *self._shardings, self._jitted.compiler_options)
        if compiler_options is None:
            self._jitted._store(self._key, entry)
            exe = entry.executable(None)
        else:  # on top of jit's own compiler_options
            if entry.compiler_options and isinstance(compiler_options, dict):
                compiler_options = {**entry.compiler_options, **compiler_options}
            with xla.compiler_options(compiler_options):
                exe = _executable(entry.closed, entry.name, entry.backend, entry.donated, None,
                                  entry.in_shardings, entry.out_shardings)
        return Compiled(self._jitted, exe, self.out_tree, self._key,
                        self._jaxpr, self._in_tree, self._donated, self._shardings)


class Compiled(_Stage):
    """An executable for one argument signature; call it like the function.

    `as_text()` is the HLO XLA optimized (and, over several devices, partitioned:
    per-device shapes and collectives), `cost_analysis()` and `memory_analysis()`
    XLA's estimates, as JAX's `Compiled` gives them (None where the backend has none).
    """

    def __init__(self, jitted, executable, out_tree, key, closed, in_tree, donated, shardings=None):
        self._init_stage(jitted, closed, in_tree, out_tree, key, donated, shardings)
        self._executable = executable

    def as_text(self) -> str | None:
        """The optimized HLO module(s) of the executable, as text.

        >>> import funcad, numpy as np
        >>> c = funcad.jit(lambda x: x * 2.0 + 1.0).lower(np.ones(3)).compile()
        >>> c.as_text().startswith("HloModule")
        True
        """
        return compiled_text(self._executable.exe)

    def cost_analysis(self) -> dict | None:
        """XLA's cost estimates (a dict: "flops", "bytes accessed", ...), or None."""
        return compiled_cost(self._executable.exe)

    def memory_analysis(self):
        """XLA's memory statistics of the executable (jaxlib's `CompiledMemoryStats`:
        `argument_size_in_bytes`, `output_size_in_bytes`, `temp_size_in_bytes`, ...), or None."""
        return compiled_memory(self._executable.exe)

    def runtime_executable(self):
        """jaxlib's loaded executable behind this stage (for debugging)."""
        return self._executable.exe

    @property
    def input_shardings(self):
        """The tree (args, kwargs) of the inputs' shardings."""
        return tree_unflatten(self._in_tree, self._flat_shardings(self._executable.in_avals, "in"))

    @property
    def output_shardings(self):
        """The tree of the outputs' shardings."""
        return tree_unflatten(self.out_tree, self._flat_shardings(self._jaxpr.out_avals, "out"))

    def _flat_shardings(self, avals, side: str) -> list:
        exe = self._executable
        if isinstance(exe, SpmdExecutable):
            given = list(exe.in_shardings if side == "in" else exe.out_shardings)
            return given[len(given) - len(avals):] if side == "in" else given
        return [SingleDeviceSharding(exe.device)] * len(self._jaxpr.in_avals if side == "in" else avals)

    def __call__(self, *args, **kwargs):
        leaves, key, _, _ = self._jitted._split(args, kwargs)
        if key != self._key:
            raise FuncadTypeError("this compiled function was lowered for other argument types; "
                                  "call the jitted function instead to compile for these")
        if _options.transfer_guards:
            guard_inputs(leaves, self._executable)
        return tree_unflatten(self.out_tree, self._executable(leaves))


# JAX's alias: the type of XLA compiler options (flag name -> value).
CompilerOptions = dict[str, Any]


@runtime_checkable
class Wrapped(Protocol):
    """A function ready to be traced, lowered and compiled (what `funcad.jit` returns).

    Calling it traces, compiles and runs as needed; `trace(*args, **kwargs)` and
    `lower(*args, **kwargs)` (`trace(...).lower()`) stage it explicitly."""

    def __call__(self, *args, **kwargs):
        """Run the wrapped function, tracing and compiling as needed."""
        ...

    def trace(self, *args, **kwargs) -> Traced:
        """Trace the function for these arguments."""
        ...

    def lower(self, *args, **kwargs) -> Lowered:
        """Trace and lower the function for these arguments."""
        ...
