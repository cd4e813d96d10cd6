"""The commands load lazily: the registry `skenario --help` lists them from says what each command says
of itself, and listing them, or printing the version, imports neither a command nor numpy."""

from __future__ import annotations

import inspect
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from skenario.cli import COMMANDS, cli

HEAVY = ("numpy", "pandas", "pydantic", "rich", "yaml", "scipy", "matplotlib", "plotly", "optuna")


def loaded(name: str) -> click.Command:
    command = cli.get_command(click.Context(cli), name)
    assert command is not None
    return command


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_registry_says_what_each_command_says_of_itself(name: str) -> None:
    command = loaded(name)
    entry = COMMANDS[name]
    assert command.short_help is None  # click shortens the help's first paragraph, as the registry's
    first_paragraph = inspect.cleandoc(command.help or "").partition("\n\n")[0]
    assert entry.help == " ".join(first_paragraph.split())
    assert command.hidden == entry.hidden


def test_the_listing_is_what_click_prints_for_the_commands_themselves() -> None:
    eager = click.Group("cli", help=cli.help, params=cli.params, context_settings=cli.context_settings)
    for name in COMMANDS:
        eager.add_command(loaded(name), name)
    for width in (50, 80, 200):
        ours = CliRunner().invoke(cli, ["--help"], terminal_width=width, prog_name="skenario")
        theirs = CliRunner().invoke(eager, ["--help"], terminal_width=width, prog_name="skenario")
        assert ours.exit_code == theirs.exit_code == 0
        assert ours.output == theirs.output
    assert "validate" not in ours.output and "theory" in ours.output  # the old name works, unlisted


def test_the_old_name_of_theory_is_the_same_command_hidden() -> None:
    assert loaded("validate").callback is loaded("theory").callback
    assert loaded("validate").hidden and not loaded("theory").hidden


@pytest.mark.parametrize("args", [["--help"], ["--version"]])
def test_listing_the_commands_imports_no_command_and_no_heavy_library(args: list[str]) -> None:
    """What `benchmarks/startup.py` times, as a property: `skenario --help` and `--version` import only
    click and skenario's own package, its version and errors."""
    script = (
        "import sys\n"
        "from skenario.cli import cli\n"
        f"cli({args!r}, prog_name='skenario', standalone_mode=False)\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    finished = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    modules = set(finished.stdout.splitlines()[-1].split())
    assert not {m for m in modules if m.split(".")[0] in HEAVY}
    assert {m for m in modules if m.startswith("skenario")} == {
        "skenario",
        "skenario.cli",
        "skenario.errors",
        "skenario.version",
    }
