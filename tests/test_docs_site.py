"""The documentation site builds with every warning an error, offline, and its generated reference is current."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import yaml

from tests.docs import ROOT, SITE

# docs/reference_pages.py is a script beside the pages, not a package: loaded from its file.
_spec = importlib.util.spec_from_file_location("reference_pages", SITE / "reference_pages.py")
assert _spec is not None and _spec.loader is not None
reference_pages = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference_pages)


def test_the_site_builds_strict_into_a_temporary_folder(tmp_path: Path) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "NO_MKDOCS_2_WARNING": "1"},
    )
    assert built.returncode == 0, built.stderr
    assert "WARNING" not in built.stderr, built.stderr
    pages = {path.relative_to(tmp_path / "site").as_posix() for path in (tmp_path / "site").rglob("index.html")}
    assert {"index.html", "reference/cli/index.html", "reference/python/index.html"} <= pages
    # The references read from the code are there: every command of the CLI, the API's functions.
    cli_page = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text()
    for command in ("run", "check", "sweep", "tune", "explain", "schedule", "theory"):
        assert f'id="{command}"' in cli_page
    assert 'id="validate"' not in cli_page  # the old name of `theory`, hidden
    assert 'id="skenario.sweeps.api.sweep"' in (tmp_path / "site" / "reference" / "python" / "index.html").read_text()


def test_every_page_is_in_the_navigation_and_nothing_is_fetched() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    assert config["theme"]["font"] is False  # Material would fetch Google's fonts
    listed: set[str] = set()

    def walk(entries: list[object]) -> None:
        for entry in entries:
            value = next(iter(entry.values())) if isinstance(entry, dict) else entry
            if isinstance(value, list):
                walk(value)
            else:
                listed.add(str(value))

    walk(config["nav"])
    assert listed == {path.relative_to(SITE).as_posix() for path in SITE.rglob("*.md")}


def test_the_generated_reference_pages_are_what_the_code_gives_now() -> None:
    assert reference_pages.stale() == [], "run `python docs/reference_pages.py`"
