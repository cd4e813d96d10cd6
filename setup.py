"""Build hook: `SKENARIO_COMPILE=1 pip install .` compiles the kernel and the request path with mypyc.

A plain `pip install` builds the pure-Python package and needs no compiler. The compiled modules are
the same source, listed in pyproject.toml's `[tool.skenario] compiled`; both builds give the same
runs (tests/benchmarks/test_compiled.py), the compiled one about twice as fast a request.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent


def mypyc_arguments() -> list[str]:
    """mypy's options, then the source files to compile (pyproject.toml's `[tool.skenario]`)."""
    settings = tomllib.loads((HERE / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["skenario"]
    return [*settings["compile-options"], *(f"src/{path}" for path in settings["compiled"])]


def extensions() -> list[object]:
    if os.environ.get("SKENARIO_COMPILE") != "1":
        return []
    from mypyc.build import mypycify  # only a compiled build needs mypy (buildsystem/backend.py asks for it)

    return list(mypycify(mypyc_arguments(), opt_level="3"))


setup(ext_modules=extensions())
