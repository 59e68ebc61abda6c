"""funcad's options as an API: `update`, `read`, `override`, and an option as a context
manager (`OptionScope`; one in `scopes` per option declared with a scope). The
declarations are in core/options.py; `funcad.config` is the public face.

>>> import funcad
>>> with funcad.config.override(debug_nans=True):
...     print(funcad.config.debug_nans)
True
"""
import contextlib as _contextlib
import difflib as _difflib
import sys
from typing import Iterator as _Iterator

from . import options as _opts

_OPTIONS = _opts.OPTIONS
# JAX's names for funcad's options: `jax_<name>` for every one.
_PREFIX = "jax_"


def _option(name: str) -> _opts.Option:
    opt = _OPTIONS.get(name[len(_PREFIX):] if name.startswith(_PREFIX) else name)
    if opt is None:
        near = _difflib.get_close_matches(name, list(_OPTIONS), n=3)
        hint = f" Did you mean {', '.join(repr(n) for n in near)}?" if near else ""
        raise AttributeError(f"funcad.config has no option {name!r}.{hint} Options: "
                             f"{', '.join(_OPTIONS)}.")
    return opt


def update(name: str, value) -> None:
    """Set option `name` (see the module docstring for the list).

    >>> import funcad
    >>> funcad.config.update("traceback_filtering", "off")
    >>> funcad.config.traceback_filtering
    'off'
    >>> funcad.config.update("traceback_filtering", "on")
    """
    opt = _option(name)
    _opts.set_value(opt.name, opt.validate(name, value))


def option_attribute(name: str):
    """The value of the option `name`, read as an attribute of `funcad.config`."""
    if name.startswith("__"):
        raise AttributeError(name)
    return read(name)


def _absl_flags():
    """absl's flags, with a `--jax_<option>` flag defined for every option."""
    try:
        from absl import flags  # absl-py is optional: only these two functions need it
    except ImportError:
        raise ImportError("config_with_absl and parse_flags_with_absl need the absl-py package "
                          "(pip install absl-py)") from None
    for name, opt in _OPTIONS.items():
        flag = f"jax_{name}"
        if flag in flags.FLAGS:  # defined by an earlier call (or by JAX itself)
            continue
        value = read(name)
        if isinstance(value, bool):
            flags.DEFINE_bool(flag, value, opt.doc)
        else:
            flags.DEFINE_string(flag, None if value is None else str(value), opt.doc)
    return flags


def _apply_absl_flags(flags) -> None:
    for name in _OPTIONS:
        flag = flags.FLAGS[f"jax_{name}"]
        if flag.present:
            update(name, flag.value)


def config_with_absl() -> None:
    """Register an absl flag `--jax_<option>` for every option (as JAX's
    `config.config_with_absl`); the flags given on the command line are applied once
    `absl.app.run(main)` has parsed them. Needs the absl-py package.

    >>> import funcad
    >>> funcad.config.config_with_absl()  # then: absl.app.run(main)
    """
    flags = _absl_flags()
    from absl import app  # absl-py is optional: only these two functions need it
    app.call_after_init(lambda: _apply_absl_flags(flags))


_parsed_with_absl = False


def parse_flags_with_absl() -> None:
    """Apply the `--jax_<option>` flags of the command line now (as JAX's
    `config.parse_flags_with_absl`, which test files call at import); other
    arguments are left alone. Runs once per process. Needs the absl-py package.

    >>> import funcad
    >>> funcad.config.parse_flags_with_absl()
    """
    global _parsed_with_absl
    if _parsed_with_absl:
        return
    flags = _absl_flags()
    flags.FLAGS(sys.argv, known_only=True)
    _apply_absl_flags(flags)
    _parsed_with_absl = True


def read(name: str):
    """The current value of option `name` (also readable as `funcad.config.<name>`)."""
    return _opts.get_value(_option(name).name)


@_contextlib.contextmanager
def override(**values) -> _Iterator[None]:
    """Set options for the duration of a `with` block, then restore them.

    >>> import funcad, funcad.numpy as fnp
    >>> with funcad.config.override(debug_nans=True):
    ...     fnp.log(-1.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    funcad.core.errors.NaNError: debug_nans: primitive `log` produced a NaN ...
    """
    old = {k: read(k) for k in values}
    try:
        for k, v in values.items():
            update(k, v)
        yield
    finally:
        for k, v in old.items():
            _opts.set_value(_option(k).name, v)


def values() -> dict:
    """Every option and its current value."""
    return {k: read(k) for k in _OPTIONS}


def describe() -> str:
    """One line per option: name, value, environment variable and meaning."""
    return "\n".join(f"{k} = {read(k)!r}  ({o.env}; {o.doc})" for k, o in _OPTIONS.items())


class OptionScope:
    """A config option as a context manager, as JAX's top-level option states are:
    `with funcad.threefry_partitionable(False): ...`; `.value` is the current setting."""

    def __init__(self, option: str, default_arg):
        self._option, self._default_arg = option, default_arg

    @_contextlib.contextmanager
    def __call__(self, new_val=_opts.NO_ARG) -> _Iterator[None]:
        if new_val is _opts.NO_ARG:
            if self._default_arg is _opts.NO_ARG:
                raise TypeError(f"funcad.{self._option}() needs the value to set in the block")
            new_val = self._default_arg
        with override(**{self._option: new_val}):
            yield

    @property
    def value(self):
        return read(self._option)

    def __repr__(self):
        return f"funcad.{self._option} (now {self.value!r})"


def _scope(opt: _opts.Option) -> OptionScope:
    scope = OptionScope(opt.name, opt.scope)
    scope.__doc__ = opt.scope_doc
    return scope


# `with funcad.<option>(value):` for each option declared with a scope (funcad re-exports them)
scopes: dict[str, OptionScope] = {o.name: _scope(o) for o in _OPTIONS.values() if o.scope is not _opts.NO_SCOPE}

def checking_leaks() -> OptionScope:
    """`with funcad.checking_leaks():` is `with funcad.check_tracer_leaks(True):`.

    >>> import funcad, funcad.numpy as fnp
    >>> with funcad.checking_leaks():
    ...     float(funcad.grad(fnp.sin)(0.0))
    1.0
    """
    return scopes["check_tracer_leaks"](True)




class _TransferGuard(OptionScope):
    """`with funcad.transfer_guard(level):` all three directions at `level` in the block, each
    restored on leaving it (as JAX's)."""

    @_contextlib.contextmanager
    def __call__(self, new_val=_opts.NO_ARG) -> _Iterator[None]:
        if new_val is _opts.NO_ARG:
            raise TypeError("funcad.transfer_guard() needs the level to set in the block")
        # the set-all option first: restored first, then each direction to its own level
        with override(transfer_guard=new_val, transfer_guard_host_to_device=new_val,
                             transfer_guard_device_to_device=new_val,
                             transfer_guard_device_to_host=new_val):
            yield


transfer_guard = _TransferGuard("transfer_guard", _opts.NO_ARG)
transfer_guard.__doc__ = """`with funcad.transfer_guard(level):` guards every transfer between the host
and devices: 'allow', 'log' or 'disallow' implicit transfers (jit arguments from NumPy, reading
device Arrays as NumPy), and 'log_explicit' or 'disallow_explicit' to include explicit ones
(`device_put`, `device_get`); refused ones raise TransferGuardError (a RuntimeError) with JAX's
text. See funcad/lowering/transfer_guard.py."""


def _table() -> str:
    rows = [("option", "default", "environment variable")]
    rows += [(o.name, repr(o.default), o.env + "".join(f" or {a}" for a in o.env_aliases))
             for o in _OPTIONS.values()]
    width = [max(len(r[i]) for r in rows) for i in range(3)]
    line = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, width)) + " |"
    return "\n".join([line(rows[0]), line(tuple("-" * w for w in width)), *map(line, rows[1:])])
