"""python -m funcad.as_jax [--check] script.py [args ...] | -m module [args ...]"""
from __future__ import annotations

import runpy
import sys

USAGE = ("usage: python -m funcad.as_jax script.py [args ...]\n"
         "       python -m funcad.as_jax -m module [args ...]\n"
         "       python -m funcad.as_jax --check script.py [script.py ...]")


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if argv else 2
    if argv[0] == "--check":
        from funcad.as_jax._check import check_source
        found = 0
        for path in argv[1:]:
            with open(path, encoding="utf-8") as f:
                for gap in check_source(f.read()):
                    print(f"{path}:{gap}")
                    found += 1
        print(f"{found} JAX name(s) or parameter(s) funcad lacks" if found else "funcad has every JAX name and parameter these use")
        return 1 if found else 0
    import funcad.as_jax
    funcad.as_jax.install()
    if argv[0] == "-m":
        if len(argv) < 2:
            print(USAGE, file=sys.stderr)
            return 2
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(argv)
        sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(argv[0])))
        runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
