"""setuptools' PEP 517 backend, which also asks for mypy when SKENARIO_COMPILE=1 asks for a compiled build.

setuptools runs setup.py to find what a build needs, before mypy is there: that run builds nothing,
so it sees SKENARIO_COMPILE unset. An editable install is refused when compiling: the compiled copies
would go on running after the source is edited. Everything else is setuptools' own.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from setuptools import build_meta
from setuptools.build_meta import *  # noqa: F403  (every hook this module does not change)

SWITCH = "SKENARIO_COMPILE"
COMPILER = "mypy>=1.10"


@contextmanager
def _not_compiling() -> Iterator[None]:
    switch = os.environ.pop(SWITCH, None)
    try:
        yield
    finally:
        if switch is not None:
            os.environ[SWITCH] = switch


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    compiling = os.environ.get(SWITCH) == "1"
    with _not_compiling():
        requires = list(build_meta.get_requires_for_build_wheel(config_settings))
    return [*requires, COMPILER] if compiling else requires


def get_requires_for_build_editable(config_settings: dict[str, Any] | None = None) -> list[str]:
    if os.environ.get(SWITCH) == "1":
        raise RuntimeError(
            f"{SWITCH}=1 is for a regular install (pip install .): in an editable one the compiled modules "
            "would shadow the source you edit"
        )
    return list(build_meta.get_requires_for_build_editable(config_settings))
