"""benchmarks/compiled.py: the compiled build (`SKENARIO_COMPILE=1 pip install .`) runs exactly what the source runs.

The modules pyproject.toml lists under `[tool.skenario] compiled` are compiled here with mypyc, as
setup.py compiles them, into a copy of the source; examples that go through every compiled module
(and through the plain-Python classes that subclass them: the activator, priority CPUs, clients that
retry, nodes, quotas) then run in a fresh process on that copy and must give the digests they give
on the source itself, and every other figure of their summaries (the fluid runs' latencies and
utilisation come from compiled arithmetic). A compiled class checks the types its annotations state,
so an annotation that says less than the code passes shows up here as a TypeError.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

compiled: Any = importlib.import_module("compiled")  # benchmarks/ is on the path (conftest.py)

ROOT = compiled.ROOT
COMPILED: list[str] = compiled.compiled_modules()
EXAMPLES = [
    "quickstart.yaml",
    "hpa-step.yaml",
    "kpa-scale-from-zero.yaml",
    "priority-classes.yaml",
    "retry-storm.yaml",
    "cfs-quota.yaml",
    "noisy-neighbour.yaml",
    "events.yaml",
    "fluid/trace.yaml",
    "fluid/kpa.yaml",
    "fluid/cluster.yaml",
]

_COMPILER = (sysconfig.get_config_var("CC") or "cc").split()[0]
pytestmark = pytest.mark.skipif(
    shutil.which(_COMPILER) is None or not (Path(sysconfig.get_paths()["include"]) / "Python.h").exists(),
    reason=f"a compiled build needs a C compiler ({_COMPILER}) and Python's headers, and this machine lacks one",
)


@pytest.fixture(scope="module")
def compiled_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of src/ with the listed modules compiled beside their source, as a compiled install has them."""
    source: Path = compiled.compile_copy(tmp_path_factory.mktemp("compiled"))
    return source


def _run(example: str, python_path: Path) -> dict[str, object]:
    command = [sys.executable, "-m", "skenario", "run", str(ROOT / "examples" / example), "--no-store", "-o", "json"]
    env = {**os.environ, "PYTHONPATH": str(python_path)}
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    summary: dict[str, object] = json.loads(done.stdout)
    return summary


def test_every_listed_module_is_compiled_and_loaded(compiled_source: Path) -> None:
    program = (
        "import importlib, sys; "
        f"names = {[path.removesuffix('.py').replace('/', '.') for path in COMPILED]!r}; "
        "print(all(importlib.import_module(n).__file__.endswith('.so') for n in names))"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(compiled_source)},
    )
    assert done.stdout.strip() == "True"


@pytest.mark.parametrize("example", EXAMPLES)
def test_a_compiled_run_gives_the_digest_of_the_source(compiled_source: Path, example: str) -> None:
    compiled = _run(example, compiled_source)
    source = _run(example, ROOT / "src")
    assert compiled["digest"] == source["digest"]
    assert compiled["movements_completed"] == source["movements_completed"]
    timed = ("wall_s", "speedup")  # how long the run took: the only figures a build may change
    assert {k: v for k, v in compiled.items() if k not in timed} == {k: v for k, v in source.items() if k not in timed}


def test_the_version_says_whether_the_kernel_is_compiled(compiled_source: Path) -> None:
    def version(python_path: Path) -> str:
        command = [sys.executable, "-m", "skenario", "--version"]
        env = {**os.environ, "PYTHONPATH": str(python_path)}
        return subprocess.run(command, capture_output=True, text=True, check=True, env=env).stdout.strip()

    assert version(compiled_source).endswith("(compiled)")
    assert not version(ROOT / "src").endswith("(compiled)")
