"""Each library's own tests, run under JAX and under funcad's drop-in.

For every library of requirements.txt whose source distribution ships tests, a
representative set of its test files (SUITES) is taken from that pinned sdist
(downloaded from PyPI with pip, unpacked under .ecosystem-cache/), run once with
the real jax and once with `funcad.as_jax.install()` in force, and the pass
counts are compared. The report lists, for each test that passes under JAX and
not under funcad, its first error line, grouped by that line.

    python tests/ecosystem/suites.py [library ...] [--jobs N] [--side {both,funcad}]

`--side funcad` reuses the JAX-side report of an earlier run
(.ecosystem-cache/<library>-jax.xml) and runs only funcad's side; `--file` narrows
a run to one test file of the suite while fixing.

equinox and diffrax ship no tests in their sdists, jraph ships a wheel only, and
distrax's tests import tensorflow_probability's JAX substrate, which fails to
import with jax 0.12 itself (it reads `jax.interpreters.xla.pytype_aval_mappings`,
gone from JAX): their programs in tests/ecosystem/programs/ are what checks them.
flax's serialization_test needs TensorFlow and is left out.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
CACHE = HERE.parent.parent / ".ecosystem-cache"

# library -> (sdist requirement, test files relative to the unpacked sdist)
SUITES: dict[str, tuple[str, list[str]]] = {
    "optax": ("optax==0.2.8", [
        "optax/_src/alias_test.py", "optax/_src/transform_test.py", "optax/_src/update_test.py",
        "optax/_src/utils_test.py", "optax/_src/combine_test.py", "optax/_src/numerics_test.py",
        "optax/schedules/_schedule_test.py", "optax/transforms/_clipping_test.py",
        "optax/losses/_classification_test.py", "optax/losses/_regression_test.py",
        "optax/tree_utils/_tree_math_test.py"]),
    "chex": ("chex==0.1.92", [
        "chex/_src/asserts_test.py", "chex/_src/dataclass_test.py", "chex/_src/variants_test.py",
        "chex/_src/dimensions_test.py", "chex/_src/fake_test.py", "chex/_src/asserts_chexify_test.py",
        "chex/_src/restrict_backends_test.py"]),
    "flax": ("flax==0.12.8", [
        "tests/linen/linen_linear_test.py", "tests/linen/linen_activation_test.py",
        "tests/linen/linen_attention_test.py", "tests/linen/linen_test.py",
        "tests/linen/linen_combinators_test.py", "tests/linen/initializers_test.py",
        "tests/traverse_util_test.py", "tests/struct_test.py"]),
    "numpyro": ("numpyro==0.22.0", [
        "test/test_handlers.py", "test/test_optimizers.py", "test/test_transforms.py",
        "test/test_constraints.py", "test/test_util.py", "test/test_diagnostics.py"]),
    "blackjax": ("blackjax==1.7.1", [
        "tests/mcmc/test_integrators.py", "tests/mcmc/test_proposal.py", "tests/mcmc/test_trajectory.py",
        "tests/mcmc/test_uturn.py", "tests/mcmc/test_metrics.py", "tests/test_util.py",
        "tests/test_diagnostics.py"]),
}

# Runs pytest with the drop-in installed first, so every `import jax` below is funcad.
_FUNCAD_PYTEST = ("import sys, funcad.as_jax as a; a.install(); import pytest; "
                  "sys.exit(pytest.main(sys.argv[1:]))")


def unpack(requirement: str) -> Path:
    name, version = requirement.split("==")
    root = CACHE / f"{name}-{version}"
    if not root.exists():
        CACHE.mkdir(exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps",
                        "-d", str(CACHE), requirement], check=True)
        with tarfile.open(next(CACHE.glob(f"{name}-{version}.tar.gz"))) as tar:
            tar.extractall(CACHE, filter="data")
    return root


def run(library: str, side: str, jobs: int, files: list[str] | None = None) -> dict[str, tuple[str, str]]:
    """Runs one side ('jax' or 'funcad') of a library's suite and reads its report."""
    requirement, suite = SUITES[library]
    files = files or suite
    root = unpack(requirement)
    report = CACHE / f"{library}-{side}.xml"
    # --rootdir: test ids are the library's module paths, wherever the sdist is unpacked
    # (pytest would otherwise take this repository, whose pyproject.toml it finds above).
    args = ["-q", "-p", "no:cacheprovider", f"--junitxml={report}", f"--rootdir={root}",
            "-o", "addopts=", *files]
    if jobs > 1:
        args[:0] = ["-n", str(jobs)]
    cmd = [sys.executable, "-m", "pytest"] if side == "jax" else [sys.executable, "-c", _FUNCAD_PYTEST]
    env = dict(os.environ, JAX_ENABLE_X64="0", JAX_PLATFORMS="cpu", PYTHONHASHSEED="0")
    # The installed library, not the sdist's copy, must be imported: pytest's rootdir
    # insertion would otherwise shadow it with the unpacked sources (they are the same).
    subprocess.run([*cmd, *args], cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return read_report(report)


def read_report(report: Path) -> dict[str, tuple[str, str]]:
    """{test id: (outcome, first error line)} from a pytest junit XML report."""
    if not report.exists():
        raise SystemExit(f"{report} is missing: run both sides once (--side both) to write it")
    results = {}
    for case in ET.parse(report).iter("testcase"):
        tid = f"{case.get('classname')}::{case.get('name')}"
        bad = case.find("failure") if case.find("failure") is not None else case.find("error")
        if bad is not None:
            text = (bad.get("message") or bad.text or "").strip().splitlines()
            results[tid] = ("failed", text[0][:200] if text else "")
        elif case.find("skipped") is not None:
            results[tid] = ("skipped", "")
        else:
            results[tid] = ("passed", "")
    return results


def _in_files(test_id: str, files: list[str]) -> bool:
    """Whether a junit test id (dotted module path as its classname) comes from one of files."""
    module = test_id.split("::")[0]
    return any(module.startswith(f.removesuffix(".py").replace("/", ".")) for f in files)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("libraries", nargs="*", default=list(SUITES))
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--side", choices=("both", "funcad"), default="both",
                        help="funcad: reuse the JAX-side report of an earlier run")
    parser.add_argument("--file", action="append", help="run only this test file of the suite")
    opts = parser.parse_args()
    table = {}
    for lib in opts.libraries:
        unknown = set(opts.file or ()) - set(SUITES[lib][1])
        if unknown:
            raise SystemExit(f"{sorted(unknown)} are not in {lib}'s suite: {SUITES[lib][1]}")
        if opts.side == "both":
            jax_side = run(lib, "jax", opts.jobs, opts.file)
        else:
            jax_side = read_report(CACHE / f"{lib}-jax.xml")
        funcad_side = run(lib, "funcad", opts.jobs, opts.file)
        if opts.file:  # compare the narrowed run with the same files' JAX results only
            jax_side = {t: r for t, r in jax_side.items() if _in_files(t, opts.file)}
        passed_jax = {t for t, (o, _) in jax_side.items() if o == "passed"}
        passed_both = {t for t in passed_jax if funcad_side.get(t, ("missing",))[0] == "passed"}
        causes = collections.Counter(re.sub(r"0x[0-9a-f]+", "0x…", funcad_side.get(t, ("", "not collected"))[1])
                                     for t in passed_jax - passed_both)
        table[lib] = {"tests": len(jax_side), "pass_jax": len(passed_jax), "pass_funcad": len(passed_both),
                      "causes": causes.most_common(10)}
        share = len(passed_both) / max(len(passed_jax), 1)
        print(f"{lib}: {len(jax_side)} tests, JAX passes {len(passed_jax)}, funcad {len(passed_both)} "
              f"({share:.0%})", flush=True)
        for cause, n in causes.most_common(10):
            print(f"    {n:5d}  {cause}")
    (CACHE / "suites.json").write_text(json.dumps(table, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
