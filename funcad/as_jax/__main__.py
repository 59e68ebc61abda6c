"""python -m funcad.as_jax [--check] script.py [args ...] | -m module [args ...]"""
from __future__ import annotations

import os
import runpy
import sys
import funcad.as_jax
from funcad.as_jax._check import check_source

USAGE = ("usage: python -m funcad.as_jax script.py [args ...]\n"
         "       python -m funcad.as_jax -m module [args ...]\n"
         "       python -m funcad.as_jax --check script.py [script.py ...]")


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if argv else 2
    if argv[0] == "--check":
        found = 0
        for path in argv[1:]:
            with open(path, encoding="utf-8") as f:
                for gap in check_source(f.read()):
                    print(f"{path}:{gap}")
                    found += 1
        print(f"{found} JAX name(s) or parameter(s) funcad lacks" if found else "funcad has every JAX name and parameter these use")
        return 1 if found else 0
    funcad.as_jax.install()
    if argv[0] == "-m" and len(argv) < 2:
        print(USAGE, file=sys.stderr)
        return 2
    try:
        if argv[0] == "-m":
            sys.argv = argv[1:]
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = list(argv)
            sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
            runpy.run_path(argv[0], run_name="__main__")
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as e:
        # The traceback `python script.py` prints: it starts at the program, not here.
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename in _LAUNCHER_FILES:
            tb = tb.tb_next
        sys.excepthook(type(e), e.with_traceback(tb), tb)
        return 1
    return 0


_LAUNCHER_FILES = {__file__, runpy.__file__, "<frozen runpy>"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
