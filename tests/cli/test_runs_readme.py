"""The tutorial's worked example (docs/tutorials/compare.md) compares the runs it made, in a store that held others."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from skenario.cli import cli
from tests.docs import ROOT, page


def worked_example() -> tuple[list[list[str]], str]:
    """The example's commands, and the sentence after its output that names a run to report on."""
    section = page("docs/tutorials/compare.md")
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None
    report = re.search(r"`skenario (report [^`]+)`", section)
    assert report is not None
    return [shlex.split(line)[1:] for line in block.group(1).splitlines() if line.strip()], report.group(1)


def invoke(args: list[str], store: Path) -> Result:
    result = CliRunner().invoke(cli, [*args, "--store", str(store)])
    assert result.exit_code == 0, (args, result.output)
    return result


def test_the_worked_example_compares_its_own_runs_in_a_store_that_is_not_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # the example names its files from the repository's top
    store = tmp_path / "store"
    commands, report = worked_example()
    *runs, compare = commands
    assert [args[0] for args in runs] == ["run"] * 3 and compare[0] == "compare"
    invoke([*runs[0], "--seed", "99", "--no-progress"], store)  # a run before: 1, under the first one's name
    for args in runs:
        invoke([*args, "--no-progress"], store)
    printed = invoke(compare, store).stdout
    headings = [line for line in printed.splitlines() if line.startswith("┃")]
    assert re.findall(r"run (\d+)", headings[0]) == ["2", "3", "4"]
    scenarios = [Path(args[1]).stem for args in runs]  # each file's metadata.name is its file name
    assert re.findall(r"[\w-]+", headings[1]) == scenarios
    arrived = next(line for line in printed.splitlines() if "requests arrived" in line)
    assert len(set(re.findall(r"[\d,]{5,}", arrived))) == 1  # "the same requests arrive in all three runs"

    page = tmp_path / "report.html"
    invoke([*shlex.split(report), "--to", str(page)], store)
    assert scenarios[-1] in page.read_text() and report.split()[-1] == runs[-1][-1]
