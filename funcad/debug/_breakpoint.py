"""`funcad.debug.breakpoint`: an interactive debugger over the live values of a
transformed program, as `jax.debug.breakpoint`.

At the call, the Python stack is captured; each frame's locals that are traced values
become the operands of a `funcad.debug.callback`, the rest stay as they are. When the
program runs (at once in eager code, after compilation under jit, once per batch entry
under vmap, with primal values under grad) the callback rebuilds the frames with the
concrete values and hands them to a debugger backend: the command-line one (`cli`,
pdb-like commands `p`, `pp`, `u`, `d`, `l`, `w`, `c`, `q`, or a bare expression) unless
another is registered with a higher priority (`register_debugger`).
"""
from __future__ import annotations

import cmd
import dataclasses
import inspect
import pprint
import sys
import threading
import traceback
from typing import IO, Any, Callable

from ._pure_callback import pure_callback
from ._callbacks import debug_callback
from ..core.errors import FuncadValueError
from ..core.pytree import tree_flatten, tree_map, tree_unflatten
from ..core.trace import Tracer
from ..core.traceback_util import is_internal
from ..arrays.dtypes import asarray_or_tracer
from ..primitives.elementwise import stop_gradient

__all__ = ["breakpoint", "DebuggerFrame", "register_debugger", "get_debugger"]


class _CantFlatten:
    __repr__ = lambda self: "<cant_flatten>"


cant_flatten = _CantFlatten()


@dataclasses.dataclass(frozen=True)
class DebuggerFrame:
    """One Python frame as the debugger shows it: its file, line, source and locals."""
    filename: str
    locals: dict
    globals: dict
    code_context: Any
    source: list
    lineno: int
    offset: int | None

    @classmethod
    def from_frameinfo(cls, info) -> "DebuggerFrame":
        try:
            lines, start = inspect.getsourcelines(info.frame)
            source = "".join(lines).split("\n")
            # getsourcelines numbers from 1, or gives 0 for a whole module
            offset = info.lineno - max(start, 1)
            if offset >= len(source):  # code from eval(): no usable source
                source, offset = [], None
        except (OSError, TypeError):
            source, offset = [], None
        return cls(info.filename, dict(info.frame.f_locals), {}, info.code_context, source,
                   info.lineno, offset)


def _split(frames):
    """The traced values in the frames' locals (the callback's operands), and a function
    that rebuilds the frames with their concrete values."""
    layout, dynamic = [], []
    for fr in frames:
        entries = []
        for key, value in fr.locals.items():
            try:
                leaves, tree = tree_flatten(value)
            except Exception:  # a local funcad cannot flatten is shown as a sentinel
                leaves, tree = tree_flatten(cant_flatten)
            traced = [isinstance(x, Tracer) for x in leaves]
            dynamic.extend(x for x, t in zip(leaves, traced) if t)
            entries.append((key, tree, leaves, traced))
        layout.append((fr, entries))

    def rebuild(values):
        it = iter(values)
        return [dataclasses.replace(fr, locals={
                    key: tree_unflatten(tree, [next(it) if t else x for x, t in zip(leaves, traced)])
                    for key, tree, leaves, traced in entries})
                for fr, entries in layout]
    return dynamic, rebuild


# ------------------------------------------------------------ debuggers ----

_registry: dict[str, tuple[int, Callable]] = {}
_lock = threading.Lock()


def register_debugger(name: str, debugger: Callable, priority: int) -> None:
    """Add a debugger backend `debugger(frames, thread_id, **kwargs)`; the one with the
    highest priority is used unless `breakpoint(backend=name)` names another."""
    if name in _registry:
        raise FuncadValueError(f'Debugger with name "{name}" already registered.')
    _registry[name] = (priority, debugger)


def get_debugger(backend: str | None = None) -> Callable:
    """The debugger backend `backend`, or the registered one of highest priority."""
    if backend is not None and backend in _registry:
        return _registry[backend][1]
    if not _registry:
        raise FuncadValueError("No debuggers registered!")
    return max(_registry.values(), key=lambda e: e[0])[1]


class CliDebugger(cmd.Cmd):
    """A text debugger over the captured frames (pdb's commands, JAX's prompt)."""

    prompt = "(jdb) "

    def __init__(self, frames, thread_id, stdin: IO[str] | None = None,
                 stdout: IO[str] | None = None, completekey: str = "tab"):
        super().__init__(stdin=stdin, stdout=stdout, completekey=completekey)
        self.use_rawinput = stdin is None
        self.frames, self.frame_index, self.thread_id = frames, 0, thread_id
        self.intro = "Entering jdb:"

    def evaluate(self, expr):
        frame = self.frames[self.frame_index]
        return eval(expr, {}, {**frame.globals, **frame.locals})

    def _error(self):
        kind, value = sys.exc_info()[:2]
        print("***", traceback.format_exception_only(kind, value)[-1].strip(), file=self.stdout)

    def _show(self, arg, fmt):
        try:
            print(fmt(self.evaluate(arg)), file=self.stdout)
        except Exception:
            self._error()

    def default(self, line):
        """Evaluate an expression and print its repr."""
        self._show(line, repr)

    def do_p(self, arg):
        """p expression: print the value of an expression."""
        self._show(arg, repr)

    def do_pp(self, arg):
        """pp expression: pretty-print the value of an expression."""
        self._show(arg, pprint.pformat)

    def print_context(self, num_lines: int = 2):
        frame = self.frames[self.frame_index]
        out = [f"> {frame.filename}({frame.lineno})"]
        if frame.offset is not None:
            for i, line in enumerate(frame.source):
                if frame.offset - 1 - num_lines <= i <= frame.offset + num_lines:
                    out.append(("->  " if i == frame.offset else "    ") + line)
        print("\n".join(out), file=self.stdout)

    def do_up(self, arg):
        """u(p): move up a stack frame."""
        if self.frame_index == len(self.frames) - 1:
            print("At topmost frame.", file=self.stdout)
        else:
            self.frame_index += 1
        self.print_context()
    do_u = do_up

    def do_down(self, arg):
        """d(own): move down a stack frame."""
        if self.frame_index == 0:
            print("At bottommost frame.", file=self.stdout)
        else:
            self.frame_index -= 1
        self.print_context()
    do_d = do_down

    def do_list(self, arg):
        """l(ist): the source around the current line."""
        self.print_context(num_lines=5)
    do_l = do_list

    def do_where(self, arg):
        """w(here), bt: the stack, most recent frame last."""
        out = ["Traceback:"]
        for frame in self.frames[::-1]:
            out.append(f'  File "{frame.filename}", line {frame.lineno}')
            out.append("    <no source>" if frame.offset is None
                       else "    " + frame.source[frame.offset].strip())
        print("\n".join(out), file=self.stdout)
    do_w = do_bt = do_where

    def do_continue(self, arg):
        """c(ont(inue)): continue the program."""
        return True
    do_c = do_cont = do_continue

    def do_quit(self, arg):
        """q(uit), exit: end the program (SystemExit)."""
        sys.exit(0)
    do_q = do_EOF = do_exit = do_quit

    def run(self):
        while True:
            try:
                self.cmdloop()
                break
            except KeyboardInterrupt:
                print("--KeyboardInterrupt--", file=self.stdout)


def _run_cli(frames, thread_id, **kwargs):
    CliDebugger(frames, thread_id, **kwargs).run()


register_debugger("cli", _run_cli, -1)


# ---------------------------------------------------------- breakpoint ----

def breakpoint(*, backend: str | None = None, filter_frames: bool = True,  # noqa: A001
               num_frames: int | None = None, ordered: bool = False, token=None, **kwargs):
    """Stop in a debugger with the program's live values, also under jit, vmap and grad.

    `backend` picks a registered debugger ("cli" by default); `filter_frames` drops
    funcad's own stack frames; `num_frames` keeps that many frames from the innermost;
    `ordered` orders it with the other ordered effects; with `token` (a pytree of arrays)
    the breakpoint runs once the token is computed and returns it unchanged (pass it on,
    or the breakpoint may be pruned). Other keywords go to the debugger (the CLI one
    takes `stdin=` and `stdout=`).

    >>> import io, funcad, funcad.numpy as fnp
    >>> out = io.StringIO()
    >>> def f(x):
    ...     y = fnp.sin(x)
    ...     funcad.debug.breakpoint(stdin=io.StringIO("p y\\nc\\n"), stdout=out)
    ...     return y
    >>> _ = funcad.jit(f)(0.0)
    >>> print(out.getvalue().splitlines()[1])
    (jdb) Array(0., dtype=float64)
    """
    if token is not None and ordered:
        raise FuncadValueError("`ordered` and `token` are mutually exclusive arguments.")
    infos = inspect.stack()[1:]
    if filter_frames:
        infos = [i for i in infos if not is_internal(i.filename)]
    frames = [DebuggerFrame.from_frameinfo(i) for i in infos]
    if num_frames is not None:
        frames = frames[:num_frames]
    dynamic, rebuild = _split(frames)

    def enter(*values):
        thread_id = None if threading.current_thread() is threading.main_thread() \
            else threading.get_ident()
        debugger = get_debugger(backend)
        with _lock:  # callbacks may come from several threads at once
            debugger(rebuild(values), thread_id, **kwargs)

    if token is None:
        debug_callback(enter, *dynamic, ordered=ordered)
        return None

    def enter_then_pass(tok, *values):
        enter(*values)
        return tok
    # a callback has no derivative: the token and the values are passed by as constants
    token = tree_map(lambda x: stop_gradient(asarray_or_tracer(x)), token)
    return pure_callback(enter_then_pass, token, token, *[stop_gradient(x) for x in dynamic])
