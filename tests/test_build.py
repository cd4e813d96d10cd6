"""buildsystem/backend.py and setup.py: a plain build needs nothing more; SKENARIO_COMPILE=1 asks for mypy."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def backend(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    module = _load(ROOT / "buildsystem" / "backend.py", "skenario_build_backend")
    seen: list[str | None] = []

    def setuptools_requires(config_settings: object = None) -> list[str]:
        seen.append(os.environ.get("SKENARIO_COMPILE"))  # setup.py runs here: it must not compile
        return ["wheel"]

    monkeypatch.setattr(module.build_meta, "get_requires_for_build_wheel", setuptools_requires)
    monkeypatch.setattr(module.build_meta, "get_requires_for_build_editable", setuptools_requires)
    module.seen = seen
    return module


def test_a_plain_build_asks_for_what_setuptools_asks(backend: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SKENARIO_COMPILE", raising=False)
    assert backend.get_requires_for_build_wheel() == ["wheel"]
    assert backend.get_requires_for_build_editable() == ["wheel"]


def test_a_compiled_build_asks_for_mypy_and_setup_py_does_not_compile_meanwhile(
    backend: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKENARIO_COMPILE", "1")
    assert backend.get_requires_for_build_wheel() == ["wheel", backend.COMPILER]
    assert backend.seen == [None]
    assert os.environ["SKENARIO_COMPILE"] == "1"  # and the switch is back for the build itself


def test_an_editable_compiled_install_is_refused(backend: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKENARIO_COMPILE", "1")
    with pytest.raises(RuntimeError, match="regular install"):
        backend.get_requires_for_build_editable()


def test_setup_py_compiles_the_listed_modules_with_the_listed_options(monkeypatch: pytest.MonkeyPatch) -> None:
    import setuptools

    monkeypatch.setattr(setuptools, "setup", lambda **kwargs: None)  # reading setup.py builds nothing
    monkeypatch.delenv("SKENARIO_COMPILE", raising=False)
    setup = _load(ROOT / "setup.py", "skenario_setup")
    arguments = setup.mypyc_arguments()
    options = [argument for argument in arguments if argument.startswith("--")]
    files = [argument for argument in arguments if not argument.startswith("--")]
    assert "--follow-imports=silent" in options
    assert files and all((ROOT / file).is_file() and file.startswith("src/skenario/") for file in files)
    assert "src/skenario/core/environment.py" in files
    assert setup.extensions() == []  # not asked to compile
