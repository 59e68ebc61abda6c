"""Run corpus programs with real JAX or with funcad's drop-in `jax`.

    python tests/programs/_run.py {jax|funcad} OUTDIR NAME...

The library is imported once; each program then runs in a forked child (so a
`jax.config.update` in one program cannot leak into the next) with its stdout
and stderr written to OUTDIR/NAME.out and OUTDIR/NAME.err and its exit status,
seconds and library to OUTDIR/NAME.rc. For funcad the programs run unmodified
with `funcad.as_jax.install()` in force, as `python -m funcad.as_jax` runs them.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

def _child(name: str, source: str, out: Path) -> None:
    fd_out = os.open(out / f"{name}.out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    fd_err = os.open(out / f"{name}.err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    sys.stdout.flush(), sys.stderr.flush()
    os.dup2(fd_out, 1), os.dup2(fd_err, 2)
    code = 0
    try:
        exec(compile(source, str(HERE / f"{name}.py"), "exec"), {"__name__": "__main__"})
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except BaseException:
        import traceback
        traceback.print_exc()
        code = 1
    sys.stdout.flush(), sys.stderr.flush()
    os._exit(code)


def main(lib: str, out: str, names: list[str]) -> None:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if lib == "jax":
        import jax, jax.numpy  # noqa: F401  (imported once, before the forks)
    else:
        sys.path.insert(0, str(HERE.parent.parent))
        import funcad.as_jax
        funcad.as_jax.install()
        import jax, jax.numpy  # noqa: F401  (funcad's, imported once, before the forks)
    for name in names:
        source = (HERE / f"{name}.py").read_text()
        start = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            signal_alarm = __import__("signal").alarm
            signal_alarm(300)
            _child(name, source, out)
        _, status = os.waitpid(pid, 0)
        rc = os.waitstatus_to_exitcode(status)
        (out / f"{name}.rc").write_text(f"{rc} {time.perf_counter() - start:.2f}\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
