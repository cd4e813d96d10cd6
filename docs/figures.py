"""Regenerate every figure the documentation quotes from the examples, so it says what the code does today.

README.md and the site's pages (`docs/**/*.md`) mark each generated figure, inline or as a whole
block, between two comments that neither GitHub nor MkDocs shows; each figure is marked once across
all the pages:

    the p99 is <!--fig kpa-cc.p99-->5.4 s<!--/fig--> once ...

    <!--fig quickstart-->
    ```
    ...the table `skenario run examples/quickstart.yaml` prints...
    ```
    <!--/fig-->

`python docs/figures.py` runs the examples and writes every marked figure of every page anew; `python
docs/figures.py --check` writes nothing and lists the figures that differ from what the code gives
now (exit status 1), which `tests/test_readme_figures.py` runs. What depends on the machine (a run's
wall time and speed-up) is written anew but never compared. Each figure's generator is one entry of
`FIGURES`: a name and a function of `Examples`, which runs each example (or command) once and keeps
its results for every figure drawn from it.
"""

from __future__ import annotations

import argparse
import csv
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SITE = ROOT / "docs"
MARK = re.compile(r"<!--fig (?P<name>[\w.:-]+)-->(?P<body>.*?)<!--/fig-->", re.DOTALL)
WIDTH = "120"  # the terminal the pages' tables were printed on
# What depends on the machine, not on the code: shown as measured, never compared. A table's columns
# widen with their longest cell, so a slower wall time moves the padding of every row: spaces and
# rules are compared as one.
VOLATILE = re.compile(r"^.*(│ wall time |│ speed-up \(simulated / wall\) ).*$", re.MULTILINE)
PADDING = re.compile(r" +|─+|━+")


@dataclass
class Examples:
    """Runs each command once (in a temporary store and folder) and keeps what it printed."""

    store: Path
    work: Path
    printed: dict[tuple[str, ...], str] = field(default_factory=dict)
    # Files a figure made that a page shows as they are (a plot): path from the repository -> where it was made.
    files: dict[str, Path] = field(default_factory=dict)

    def cli(self, *args: str) -> str:
        """What `skenario ARGS` prints on a 120-column terminal, run from the repository's root."""
        if args not in self.printed:
            env = os.environ | {"COLUMNS": WIDTH, "SKENARIO_STORE": str(self.store), "NO_COLOR": "1", "TERM": "dumb"}
            done = subprocess.run(
                [sys.executable, "-m", "skenario", *args], cwd=ROOT, env=env, capture_output=True, text=True
            )
            if done.returncode not in (0, 2):
                raise RuntimeError(f"skenario {' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
            self.printed[args] = done.stdout + done.stderr
        return self.printed[args]

    def summary(self, example: str, *options: str) -> dict[str, Any]:
        """The summary `skenario run EXAMPLE --json` prints (not kept in the store)."""
        document: dict[str, Any] = json.loads(self.cli("run", example, "--json", "--no-store", *options))
        return document

    def series(self, example: str, *options: str) -> list[dict[str, Any]]:
        """The time series `skenario run EXAMPLE --series FILE.csv` writes, as rows of numbers (None for empty)."""
        path = self.work / f"series-{abs(hash((example, options))):x}.csv"
        self.cli("run", example, "--no-store", "--no-progress", "--series", str(path), *options)
        with path.open(newline="") as file:
            return [{k: _number(v) for k, v in row.items()} for row in csv.DictReader(file)]

    def text_of(self, example: str, replace: tuple[tuple[str, str], ...] = ()) -> Path:
        """A copy of an example, with some text replaced, under its own name in a folder of the work folder.

        What lies beside the example is linked into that folder, so its relative paths still resolve.
        """
        source = ROOT / example
        text = source.read_text()
        for old, new in replace:
            if old not in text:
                raise ValueError(f"{example} has no {old!r} to replace")
            text = text.replace(old, new)
        folder = self.work / f"variant-{len(list(self.work.glob('variant-*')))}"
        folder.mkdir()
        for neighbour in source.parent.iterdir():
            if neighbour != source:
                (folder / neighbour.name).symlink_to(neighbour)
        path = folder / source.name
        path.write_text(text)
        return path


def _number(text: str) -> Any:
    if text == "":
        return None
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def minutes(ns: float) -> str:
    """A time in whole minutes and seconds, as the pages write them: `1m`, `16m`, `1m30s`."""
    whole = round(ns / 1e9)
    m, s = divmod(whole, 60)
    return f"{m}m{s:02d}s" if s else f"{m}m"


def block(text: str) -> str:
    """A figure that is a whole fenced block."""
    lines = [line.rstrip() for line in text.rstrip("\n").splitlines()]
    return "\n```\n" + "\n".join(lines) + "\n```\n"


def table_of(printed: str, title: str | None = None) -> str:
    """The first rich table in a command's output (from its title line, if given, to its bottom border)."""
    lines = printed.splitlines()
    start = next(i for i, line in enumerate(lines) if (title in line if title else line.lstrip().startswith("┏")))
    start = start if title else max(0, start - 1)
    end = next(i for i in range(start, len(lines)) if lines[i].lstrip().startswith("└"))
    return "\n".join(lines[start : end + 1])


def ms(ns: float | None) -> str:
    return "-" if ns is None else f"{ns / 1e6:,.1f} ms"


def seconds(ns: float | None) -> str:
    return "-" if ns is None else f"{ns / 1e9:,.1f} s"


# -- the figures ----------------------------------------------------------------------------------

Figure = Callable[[Examples], str]
FIGURES: dict[str, Figure] = {}
"""Every figure's generator by name; the `figures_*.py` modules beside this one register theirs with `figure`."""


def figure(name: str) -> Callable[[Figure], Figure]:
    def register(function: Figure) -> Figure:
        FIGURES[name] = function
        return function

    return register


# -- reading and writing the pages -----------------------------------------------------------------


def pages() -> list[Path]:
    """Every page that may quote a figure: README.md and the site's Markdown pages."""
    return [README, *sorted(SITE.rglob("*.md"))]


def marked(texts: dict[Path, str]) -> list[str]:
    """The name of every marked figure of the pages, in page order, a figure marked twice listed twice."""
    return [match["name"] for text in texts.values() for match in MARK.finditer(text)]


def _stable(text: str) -> str:
    """The text as compared: without the machine's readings, and without the padding they move."""
    return PADDING.sub(lambda run: run.group(0)[0], VOLATILE.sub("", text))


def load_generators() -> None:
    """Import the `figures_*.py` modules beside this one: each registers its figures as it loads."""
    here = Path(__file__).resolve().parent
    if str(here) not in sys.path:
        sys.path.insert(0, str(here))
    sys.modules.setdefault("figures", sys.modules[__name__])  # run as a script, this module is __main__
    for module in sorted(here.glob("figures_*.py")):
        importlib.import_module(module.stem)


def group(name: str) -> str:
    """The figures drawn from the same runs share the part of their name before the first dot."""
    return name.split(".", 1)[0]


def regenerate(page: str, examples: Examples, groups: set[str] | None = None) -> tuple[str, list[str]]:
    """A page with every marked figure (of `groups`, or all) generated anew, and the names of those that changed."""
    unknown = sorted({m["name"] for m in MARK.finditer(page)} - set(FIGURES))
    if unknown:
        raise KeyError(f"a page marks figures docs/figures.py does not know: {', '.join(unknown)}")
    changed: list[str] = []

    def fill(match: re.Match[str]) -> str:
        name = match["name"]
        if groups is not None and group(name) not in groups:
            return match.group(0)
        body = FIGURES[name](examples)
        if _stable(body) != _stable(match["body"]):
            changed.append(name)
        return f"<!--fig {name}-->{body}<!--/fig-->"

    return MARK.sub(fill, page), changed


def regenerate_pages(
    texts: dict[Path, str], examples: Examples, groups: set[str] | None = None
) -> tuple[dict[Path, str], list[str]]:
    """Every page with its figures (of `groups`, or all) generated anew, and the names of those that changed."""
    written: dict[Path, str] = {}
    changed: list[str] = []
    for path, text in texts.items():
        written[path], drifted = regenerate(text, examples, groups)
        changed += drifted
    return written, changed


@contextmanager
def examples() -> Iterator[Examples]:
    with tempfile.TemporaryDirectory(prefix="skenario-figures-") as folder:
        yield Examples(Path(folder) / "store", Path(folder))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a figure drifted")
    options = parser.parse_args(argv)
    texts = {path: path.read_text(encoding="utf-8") for path in pages()}
    load_generators()
    with examples() as runs:
        written, changed = regenerate_pages(texts, runs)
        if options.check:
            if changed:
                print("figures that differ from what the code gives now: " + ", ".join(changed))
                print("run `python docs/figures.py` to write them anew")
                return 1
            print(f"all {len(marked(texts))} figures match")
            return 0
        for shown, made in runs.files.items():
            shutil.copyfile(made, ROOT / shown)
    for path, text in written.items():
        if text != texts[path]:
            path.write_text(text, encoding="utf-8")
    print(f"wrote {len(marked(texts))} figures ({len(changed)} changed: {', '.join(changed) or 'none'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
