"""Shared helpers for tests."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from playwright.sync_api import Page

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


CHROMIUM = shutil.which("chromium") or next((p for p in ("/usr/bin/chromium",) if Path(p).exists()), None)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    """pytest-playwright's browser is Debian's Chromium (Playwright's own download is not used), headless,
    as root without its sandbox, and with nothing reaching for the network."""
    if CHROMIUM is None:
        # Only where no Chromium is installed; CI installs it (.ci/run), so there the browser tests always run.
        pytest.skip("no Chromium: pages are not checked in a browser (`apt-get install chromium` on Debian)")
    flags = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run"]
    flags += ["--disable-background-networking", "--disable-component-update", "--disable-sync"]
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "headless": True, "args": flags}


@pytest.fixture
def browser_page(page: Page) -> Page:
    """A page whose waits have no wall-clock limit: they wait for what they wait for (pyproject.toml's
    pytest-timeout is the one net against a hang)."""
    page.set_default_timeout(0)
    page.set_default_navigation_timeout(0)
    return page
