"""Every figure README.md and the site's pages quote from the examples is what the code gives now (docs/figures.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _figures() -> ModuleType:
    spec = importlib.util.spec_from_file_location("figures", ROOT / "docs" / "figures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["figures"] = module
    spec.loader.exec_module(module)
    module.load_generators()
    return module


figures = _figures()
PAGES = {path: path.read_text(encoding="utf-8") for path in figures.pages()}


def test_the_pages_are_the_readme_and_every_page_of_the_site() -> None:
    assert ROOT / "README.md" in PAGES
    assert {path.relative_to(ROOT).as_posix() for path in PAGES} >= {
        "docs/index.md",
        "docs/tutorials/quickstart.md",
        "docs/background/performance.md",
    }


def test_every_marked_figure_has_one_generator_and_every_generator_a_figure() -> None:
    marked = figures.marked(PAGES)
    assert len(marked) == len(set(marked)), "a figure marked twice"
    assert set(marked) == set(figures.FIGURES), "a generator no figure uses, or a figure no generator makes"


# One test per group of figures drawn from the same runs, so that they can run side by side.
@pytest.mark.parametrize("group", sorted({figures.group(name) for name in figures.FIGURES}))
def test_the_marked_figures_match_what_the_examples_give_now(group: str) -> None:
    with figures.examples() as runs:
        _, changed = figures.regenerate_pages(PAGES, runs, {group})
    assert changed == [], f"the pages' figures drifted: {changed}; run `python docs/figures.py`"
