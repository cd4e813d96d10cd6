"""A compiled copy of the source: the modules setup.py compiles with mypyc, built beside their source.

`SKENARIO_COMPILE=1 pip install .` installs them compiled; to measure or test the compiled build
without installing it, `compile_copy(into)` copies src/ into `into` and compiles the same modules
there (pyproject.toml's `[tool.skenario] compiled`). Put the returned folder first on PYTHONPATH.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _settings() -> dict[str, list[str]]:
    settings: dict[str, list[str]] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "skenario"
    ]
    return settings


def compiled_modules() -> list[str]:
    """The source files a compiled build compiles, relative to src/."""
    return _settings()["compiled"]


def compile_copy(into: Path) -> Path:
    """Copy src/ into `into`/src and compile the listed modules there; returns that src folder."""
    source = into / "src"
    shutil.copytree(ROOT / "src", source, ignore=shutil.ignore_patterns("__pycache__", "*.so", "build"))
    done = subprocess.run(
        [sys.executable, "-m", "mypyc", *_settings()["compile-options"], *compiled_modules()],
        cwd=source,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"mypyc failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return source
