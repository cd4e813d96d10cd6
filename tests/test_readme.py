"""The documentation's code examples run and print what their comments say (README.md and docs/**/*.md)."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import textwrap
import tomllib
from pathlib import Path
from typing import Any

import click
import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from skenario.cli import cli
from skenario.scenario.format.jsonschema import batch_json_schema, scenario_json_schema
from tests.docs import PAGES, ROOT, blocks, page, section


def test_kernel_tour_prints_what_the_readme_says() -> None:
    tour = section("docs/background/kernel.md", "# A tour of the kernel")
    code = re.search(r"```python\n(.*?)```", tour, re.S)
    assert code is not None
    source = code.group(1)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(source, "docs", "exec"), {})
    first_line = printed.getvalue().splitlines()[0]
    promised = re.search(r"print\(served\.count\(\), env\.movements_ignored\)\s+# (.*)", source)
    assert promised is not None
    assert first_line == promised.group(1).strip()
    # The two ignored movements carry the reasons the comments give.
    assert "late scheduled_after_halt" in printed.getvalue()
    assert "serve from_stock_empty" in printed.getvalue()


def _run_autoscaler_examples() -> list[str]:
    outputs = []
    for code in re.findall(r"```python\n(.*?)```", section("docs/how-to/manifests.md", "# Autoscalers"), re.S):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(code, "docs", "exec"), {})
        outputs.append(printed.getvalue())
    return outputs


def test_calculator_examples_print_what_the_readme_says() -> None:
    hpa, vpa, kpa = _run_autoscaler_examples()
    # The comment's formula, independently: ceil(3 pods × 90% used / 60% target) = 5.
    assert hpa.split() == ["5"]
    # VPA: the p90 of a steady 300m is the end of 300m's histogram bucket (buckets grow by 5%),
    # plus the 15% margin; eight days of samples give confidence 8, so the upper bound is the
    # target × (1 + 1/8) and the lower the target × (1 + 0.001/8)^-2, each truncated to whole millicores.
    target, lower, upper = (int(x) for x in vpa.split())
    assert 300 * 1.15 <= target <= 300 * 1.05 * 1.15
    assert upper == int(target * (1 + 1 / 8))
    assert lower == int(target * (1 + 0.001 / 8) ** -2)
    # KPA: target 10 at the default 70% utilisation is 7 per pod; ceil(35 / 7) = 5 pods wanted, and
    # 5 / 2 ready = 2.5 is over the 200% panic threshold.
    assert kpa.split() == ["5", "True"]


def test_phases_example_prints_what_the_readme_says(monkeypatch: pytest.MonkeyPatch) -> None:
    code = re.search(r"```python\n(.*?)```", section("docs/how-to/timelines.md", "**Phases, from Python.**"), re.S)
    assert code is not None
    source = code.group(1)
    monkeypatch.chdir(ROOT)  # the example's paths are relative to the repository
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(source, "docs", "exec"), {})
    lines = printed.getvalue().splitlines()
    promised = re.findall(r'print\(f"\{simulation\.phase\}: \{simulation\.message\}"\)\s+# (.*)', source)
    assert [lines[0], lines[2]] == promised
    assert int(lines[1]) >= 2  # the HPA's minReplicas holds at least two ready replicas


def test_queueing_example_prints_what_the_readme_says() -> None:
    code = re.search(r"```python\n(.*?)```", section("docs/background/queueing.md", "# Queueing theory"), re.S)
    assert code is not None
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code.group(1), "docs", "exec"), {})
    preemptive, shadow = (float(x) for x in printed.getvalue().split())
    # Independently: preemptive-resume M/M/1, low class (S = 1, E[S^2] = 2, rho = 0.3 + 0.4):
    # T = S / (1 - 0.3) + (0.3 + 0.4) * 2 / 2 / ((1 - 0.3) * (1 - 0.7)); FCFS: S / (1 - 0.7).
    assert preemptive == pytest.approx(1 / 0.7 + 0.7 / (0.7 * 0.3))
    assert shadow == pytest.approx(1 / 0.3)
    for number in (preemptive, shadow):  # and the comments round them as printed
        assert f"{number:.4f}" in code.group(1)


def test_the_python_api_example_prints_what_the_readme_says(monkeypatch: pytest.MonkeyPatch) -> None:
    code = re.search(r"```python\n(.*?)```", section("docs/tutorials/sweeps.md", "## From Python"), re.S)
    assert code is not None
    monkeypatch.chdir(ROOT)  # the example's paths are relative to the repository
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code.group(1), "docs", "exec"), {})
    lines = printed.getvalue().splitlines()
    # The sweep's table has its two points; the paired difference is certain; the study ran its 6 trials
    # and its best setting is in the searched range.
    assert [line.split()[1] for line in lines[1:3]] == ["1", "2"]
    assert lines[3] == "True"
    assert lines[4] == "6 True"
    assert lines[5].split() == ["trial", "replica_hours", "p99_ms", "slo_compliance_low"]


# -- every code block of every page ---------------------------------------------------------------
# The tests above check what their examples print; the ones below run or check every other block of
# README.md and docs/**/*.md, so no page shows code that does not work. Printed output is checked
# where it is shown: the marked figures by tests/test_readme_figures.py, the explain block by
# tests/cli/test_explain_commands.py, the error line below.

BLOCKS = [
    (path.relative_to(ROOT).as_posix(), index, lang, body)
    for path in PAGES
    for index, (lang, body) in enumerate(blocks(path.read_text(encoding="utf-8")))
]
# The Python blocks the tests above run and check what they print.
CHECKED_ABOVE = {
    *re.findall(r"```python\n(.*?)```", section("docs/background/kernel.md", "# A tour of the kernel"), re.S),
    *re.findall(r"```python\n(.*?)```", section("docs/how-to/manifests.md", "# Autoscalers"), re.S),
    *re.findall(r"```python\n(.*?)```", section("docs/how-to/timelines.md", "**Phases, from Python.**"), re.S),
    *re.findall(r"```python\n(.*?)```", section("docs/background/queueing.md", "# Queueing theory"), re.S),
    *re.findall(r"```python\n(.*?)```", section("docs/tutorials/sweeps.md", "## From Python"), re.S),
}
# Before a page's Python block runs, the command its text says came first (the store is a temporary one).
RUN_FIRST = {"docs/how-to/results.md": ["run", "examples/quickstart.yaml", "--no-progress"]}
# Programs that are not skenario's or Python's: named for the reader, checked nowhere here.
OTHER_PROGRAMS = {"dask", "sched-recorder"}
# Variables a command line may set before its program: what skenario, its build or Python reads.
ENVIRONMENT = {"SKENARIO_COMPILE", "SKENARIO_STORE", "SKENARIO_PLUGIN_MODULES", "PYTHONHASHSEED", "PYTHONPATH"}
# Files a command names that the reader makes first (the page says how): an example of the same kind stands in.
READERS_FILES = {"export.json": "examples/ksim/export.json", "recording.jsonl": "examples/ksim/recording.jsonl"}
EXTRAS = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])


def _of(lang: str) -> list[tuple[str, int, str]]:
    return [(where, index, body) for where, index, kind, body in BLOCKS if kind == lang]


def _params(lang: str, leave_out: set[str] | frozenset[str] = frozenset()) -> list[Any]:
    """The blocks of a language as test cases named by page and place (`docs/how-to/results.md#3`)."""
    return [pytest.param(*block, id=f"{block[0]}#{block[1]}") for block in _of(lang) if block[2] not in leave_out]


def test_the_pages_hold_code_of_every_kind_checked_here() -> None:
    assert {lang for _, _, lang, _ in BLOCKS} <= {"python", "sh", "yaml", ""}
    assert len(CHECKED_ABOVE) == 7
    assert {body for _, _, body in _of("python")} >= CHECKED_ABOVE


@pytest.mark.parametrize(("where", "index", "source"), _params("python", CHECKED_ABOVE))
def test_every_other_python_block_runs(where: str, index: int, source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the examples' paths are relative to the repository
    if where in RUN_FIRST:
        done = CliRunner().invoke(cli, RUN_FIRST[where])
        assert done.exit_code == 0, done.output
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(source, where, "exec"), {})
    for line in re.findall(r"^print\(.*$", source, re.M):  # each print printed something
        assert printed.getvalue().strip(), line


def _commands(body: str) -> list[list[str]]:
    """A shell block's commands as words: one a line (continued lines joined), comments dropped, `&&` chains split."""
    commands: list[list[str]] = []
    for line in body.replace("\\\n", " ").splitlines():
        commands.append([])
        for word in shlex.split(line, comments=True):
            if word == "&&":
                commands.append([])
            else:
                commands[-1].append(word)
    return [command for command in commands if command]


def _check_skenario(args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Parse a skenario command line as click would run it (its files must exist), and run nothing."""
    # A group's own invoke resolves its subcommand; a command's is what calls its function.
    monkeypatch.setattr(click.Command, "invoke", lambda command, context: None)
    cli.main([READERS_FILES.get(arg, arg) for arg in args], prog_name="skenario", standalone_mode=False)


@pytest.mark.parametrize(("where", "index", "body"), _params("sh"))
def test_every_shell_command_names_real_commands_options_and_files(
    where: str, index: int, body: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    for command in _commands(body):
        while "=" in command[0]:  # NAME=value before the program sets its environment
            name = command.pop(0).split("=", 1)[0]
            assert name in ENVIRONMENT, f"{where}: {name} is read by nothing"
        program, *args = command
        if program in OTHER_PROGRAMS:
            continue
        if program == "skenario":
            _check_skenario(args, monkeypatch)
            continue
        assert program == "python3", f"{where}: {command}"
        if args[:2] == ["-m", "skenario"]:
            _check_skenario(args[2:], monkeypatch)
        elif args[:3] == ["-m", "pip", "install"]:
            for extra in re.findall(r"\[([\w,]+)\]", " ".join(args)):
                assert set(extra.split(",")) <= EXTRAS, f"{where}: no extra {extra}"
        elif args[:2] == ["-m", "mkdocs"]:
            assert args[2] in {"build", "serve"}  # the build itself: tests/test_docs_site.py
        elif args[:2] == ["-m", "pytest"]:
            assert (ROOT / "tests").is_dir()
        else:
            script = ROOT / args[0]
            compile(script.read_text(), str(script), "exec")  # it exists and is Python


def _merged(base: Any, fragment: Any) -> Any:
    """`fragment` laid over `base`, mappings merged key by key; an elided value (`...`) left out."""
    if isinstance(base, dict) and isinstance(fragment, dict):
        return base | {key: _merged(base.get(key), value) for key, value in fragment.items() if value != "..."}
    if isinstance(fragment, list):
        return [_merged(None, item) for item in fragment if item != "..."]
    if isinstance(fragment, dict):
        return _merged({}, fragment)
    return fragment


def _scenario(data: dict[str, Any]) -> dict[str, Any]:
    """A fragment of a scenario's spec laid over the quickstart's, so the schema can judge its fields."""
    base: dict[str, Any] = yaml.safe_load((ROOT / "examples" / "quickstart.yaml").read_text())
    merged: dict[str, Any] = _merged(base, data if "spec" in data else {"spec": data})
    return merged


@pytest.mark.parametrize(("where", "index", "body"), _params("yaml"))
def test_every_yaml_block_reads_and_a_scenarios_fields_are_the_schemas(where: str, index: int, body: str) -> None:
    documents = [document for document in yaml.safe_load_all(textwrap.dedent(body)) if document is not None]
    assert documents, where
    first = documents[0]
    theirs = first.get("apiVersion", "skenario.dev/v1alpha1") != "skenario.dev/v1alpha1"
    if theirs or first.get("kind") == "QueueingModel":
        return  # KEP-140's and ksim's documents, a queueing model: read above, run by their own tests
    if first.get("kind") == "BatchReplay":
        jsonschema.validate(first, batch_json_schema())
        return
    jsonschema.validate(_scenario(first), scenario_json_schema())


def test_the_error_line_is_what_check_prints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The quick start's example of a mistake: a duration of '5 parsecs' on line 9 of bad.yaml."""
    shown = next(body for lang, body in blocks(page("docs/tutorials/quickstart.md")) if body.startswith("error:"))
    lines = (ROOT / "examples" / "quickstart.yaml").read_text().splitlines()[1:]  # duration on line 9
    assert lines[8] == "  duration: 30m"
    lines[8] = "  duration: 5 parsecs"
    (tmp_path / "bad.yaml").write_text("\n".join(lines) + "\n")
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(cli, ["check", "bad.yaml"])
    assert done.exit_code == 2
    assert done.output == shown


def _tree(picture: str) -> list[str]:
    """The paths a layout picture names: a line's names (`x/`, `a.py b.py`) under the folders above it."""
    folders: list[str] = []
    paths = []
    for line in picture.splitlines():
        depth = (len(line) - len(line.lstrip())) // 2
        names = re.split(r"\s{2,}", line.strip())[0].split()
        if not names or not all(name.endswith(("/", ".py")) for name in names):
            continue  # a description carried over from the line above
        del folders[depth:]
        paths += ["".join(folders) + name for name in names]
        if names[0].endswith("/"):
            folders.append(names[0])
    return paths


def test_every_file_and_folder_the_layout_names_is_there() -> None:
    picture = next(body for lang, body in blocks(page("docs/background/layout.md")) if body.startswith("src/skenario/"))
    paths = _tree(picture)
    assert "src/skenario/model/cpu/" in paths and "src/skenario/scenario/simulation.py" in paths
    assert [path for path in paths if not (ROOT / path).exists()] == []
