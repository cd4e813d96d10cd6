"""The README's code examples run and print what their comments say."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def test_kernel_tour_prints_what_the_readme_says() -> None:
    text = README.read_text()
    tour = text[text.index("## A tour of the kernel") :]
    code = re.search(r"```python\n(.*?)```", tour, re.S)
    assert code is not None
    source = code.group(1)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(source, "README.md", "exec"), {})
    first_line = printed.getvalue().splitlines()[0]
    promised = re.search(r"print\(served\.count\(\), env\.movements_ignored\)\s+# (.*)", source)
    assert promised is not None
    assert first_line == promised.group(1).strip()
    # The two ignored movements carry the reasons the comments give.
    assert "late scheduled_after_halt" in printed.getvalue()
    assert "serve from_stock_empty" in printed.getvalue()


def test_hpa_calculator_example_prints_what_the_readme_says() -> None:
    text = README.read_text()
    section = text[text.index("## Autoscalers") : text.index("## A tour of the kernel")]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code.group(1), "README.md", "exec"), {})
    # The comment's formula, independently: ceil(3 pods × 90% used / 60% target) = 5.
    assert printed.getvalue().split() == ["5"]


def test_phases_example_prints_what_the_readme_says(monkeypatch: pytest.MonkeyPatch) -> None:
    text = README.read_text()
    section = text[text.index("**Phases, from Python.**") : text.index("## Results: the run store")]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    source = code.group(1)
    monkeypatch.chdir(README.parent)  # the example's paths are relative to the repository
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(source, "README.md", "exec"), {})
    lines = printed.getvalue().splitlines()
    promised = re.findall(r'print\(f"\{simulation\.phase\}: \{simulation\.message\}"\)\s+# (.*)', source)
    assert [lines[0], lines[2]] == promised
    assert int(lines[1]) >= 2  # the HPA's minReplicas holds at least two ready replicas
