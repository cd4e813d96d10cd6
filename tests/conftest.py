"""Shared helpers for tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# CI must give the same verdict on every run of the same commit, so the default profile draws
# the same examples each time. `pytest --hypothesis-profile=explore` searches afresh. Neither
# times an example: no deadline, and no health check of how long generating them takes, since
# both measure the wall clock and a busy machine would fail them (pyproject.toml's pytest-timeout
# is the one net against a hang).
settings.register_profile("default", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("explore", settings.get_profile("default"), derandomize=False, max_examples=2000)
settings.load_profile("default")

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _store_in_a_temporary_folder(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test keeps a run in the user's store: a `skenario run` without --store writes to a temporary one."""
    monkeypatch.setenv("SKENARIO_STORE", str(tmp_path_factory.mktemp("store")))


@pytest.fixture
def examples_dir() -> Path:
    return ROOT / "examples"
