"""The dashboard's page shows a screenshot of every page docs/screenshots.py takes, and each is here."""

from __future__ import annotations

import importlib.util
import re

from tests.docs import ROOT, page


def test_every_screenshot_is_shown_and_there() -> None:
    spec = importlib.util.spec_from_file_location("screenshots", ROOT / "docs" / "screenshots.py")
    assert spec is not None and spec.loader is not None
    screenshots = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(screenshots)
    shown = re.findall(r"!\[[^\]]+\]\(\.\./images/dashboard/([\w-]+)\.png\)", page("docs/how-to/dashboard.md"))
    assert shown == list(screenshots.SHOTS)
    for name in shown:
        image = screenshots.IMAGES / f"{name}.png"
        assert image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
