"""The dashboard's screenshots on docs/how-to/dashboard.md: each page of a store made from the examples, in Chromium.

    python docs/screenshots.py        # writes docs/images/dashboard/NAME.png, one per entry of SHOTS

The store is the one the dashboard's tests read (tests/web/conftest.py `build_world`): an HPA and the
cluster autoscaler on nodes, a KEP-140 timeline, a YARN replay, a calibrated replay and a sweep.
tests/web/test_screenshots.py checks the page shows every shot and each file is here.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.web.conftest import World, build_world, serving  # noqa: E402 - the repository's root first

IMAGES = ROOT / "docs" / "images" / "dashboard"


def _pod(page: Page) -> None:
    page.locator("#pods tbody tr", has_text="web-2").click()
    page.locator("#verdicts table.verdicts").first.wait_for()
    page.locator("#verdicts").scroll_into_view_if_needed()


def _decision(page: Page) -> None:
    page.locator("#decisions").scroll_into_view_if_needed()
    page.locator("#decision-list tbody tr").nth(3).click()
    page.locator("#explained h3").first.wait_for()


def _job(page: Page) -> None:
    waits = page.locator("#jobs tbody tr td:nth-child(4)").all_text_contents()
    seconds = [float(w.replace(",", "")) if w not in ("", "-") else 0.0 for w in waits]
    longest = max(range(len(seconds)), key=seconds.__getitem__)
    page.locator("#jobs tbody tr").nth(longest).click()
    page.locator("#why-text").wait_for()
    page.locator("#why").scroll_into_view_if_needed()


def _problem(page: Page) -> None:
    text = page.locator("#scenario")
    text.fill(text.input_value().replace("rate: 50/s", "rate: fifty"))
    page.locator("#problems li").wait_for()


SHOTS: dict[str, tuple[Callable[[World], str], Callable[[Page], None] | None]] = {
    "runs": (lambda w: "/", None),
    "run": (lambda w: f"/runs/{w.cluster}", None),
    "decisions": (lambda w: f"/runs/{w.cluster}", _decision),
    "scheduler": (lambda w: f"/runs/{w.kep}/scheduler", _pod),
    "queues": (lambda w: f"/runs/{w.batch}/queues", _job),
    "cluster": (lambda w: f"/runs/{w.replay}/cluster", None),
    "compare": (lambda w: f"/compare?runs={w.sweep_runs[0]}&runs={w.sweep_runs[4]}", None),
    "sweep": (lambda w: f"/sweeps/{w.sweep}", None),
    "editor": (lambda w: "/editor", _problem),
}
"""Each screenshot: the page's address in the world, and what is clicked on it first."""


def main() -> None:
    IMAGES.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp())
    try:
        world = build_world(folder)
        with serving(world.store) as address, sync_playwright() as playwright:
            chromium = shutil.which("chromium") or "/usr/bin/chromium"
            browser = playwright.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1400, "height": 860})
            page.set_default_timeout(0)
            for name, (path, act) in SHOTS.items():
                page.goto(address + path(world))
                page.locator("main[data-ready=true]").wait_for()
                if act is not None:
                    act(page)
                page.screenshot(path=str(IMAGES / f"{name}.png"))
                print(f"wrote {IMAGES / f'{name}.png'}")
            browser.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
