"""Shared helpers for tests."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def examples_dir() -> Path:
    return ROOT / "examples"
