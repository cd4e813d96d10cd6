"""What reaches the terminal is the text given: no escape sequence, bidirectional override, emoji code or
Rich markup from a user's value acts on the terminal or on Rich."""

from __future__ import annotations

import io
from pathlib import Path

from click.testing import CliRunner
from rich.table import Table
from rich.text import Text

from skenario.cli import cli
from skenario.cli.terminal import Terminal, shown

HOSTILE = "[bold red]x[/] :x: \x1b[2J\x1b]0;owned\x07 \u202eevil \x9b1m"
"""Markup, an emoji code, clear-screen, a window title, a right-to-left override and a C1 CSI."""
SHOWN = "[bold red]x[/] :x: \\x1b[2J\\x1b]0;owned\\x07 \\u202eevil \\x9b1m"

SCENARIO = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: NAME}
spec:
  duration: 1m
  workload: {replicas: 1, request: {cpuTime: 10ms}}
  traffic: {type: constant, rate: RATE}
"""


def quoted(text: str) -> str:
    """`text` as a YAML double-quoted scalar (YAML's own escapes for the control characters)."""
    escapes = {"\x1b": "\\e", "\x07": "\\a", "\u202e": "\\u202E", "\x9b": "\\x9B", '"': '\\"'}
    return '"' + "".join(escapes.get(char, char) for char in text) + '"'


def printed(*objects: object) -> str:
    console = Terminal(file=io.StringIO(), width=200, force_terminal=False)
    for item in objects:
        console.print(item)
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_control_characters_are_written_as_their_escapes_and_text_is_left_alone() -> None:
    assert shown(HOSTILE) == SHOWN
    assert shown("tab\tand\nline, é, 漢字, 😀") == "tab\tand\nline, é, 漢字, 😀"
    assert shown("\x00\x7f\u200f\u2066") == "\\x00\\x7f\\u200f\\u2066"


def test_the_terminal_prints_strings_text_and_tables_as_given() -> None:
    table = Table()
    table.add_column("name")
    table.add_row(HOSTILE)
    table.add_row(Text(HOSTILE))
    output = printed(HOSTILE, Text(HOSTILE), table)
    assert "\x1b" not in output and "\u202e" not in output and "\x9b" not in output
    assert output.count(SHOWN) == 2  # the string and the Text, each whole on its line
    assert "❌" not in output and output.count(":x:") == 4  # no emoji, in the table's rows either


def test_markup_styles_only_where_a_command_asks_for_it() -> None:
    console = Terminal(file=io.StringIO(), width=200, force_terminal=True)
    console.print("[bold]as written[/]", highlight=False)
    console.print("[bold]styled[/]", markup=True, highlight=False)
    output = console.file.getvalue()  # type: ignore[attr-defined]
    assert "[bold]as written[/]" in output
    assert "[bold]styled" not in output and "\x1b[1mstyled" in output  # the console's own escape, for its style


def test_an_emoji_code_in_a_bad_value_is_echoed_as_written(tmp_path: Path) -> None:
    scenario = tmp_path / "emoji.yaml"
    scenario.write_text(SCENARIO.replace("NAME", "x").replace("RATE", '":x:"'))
    result = CliRunner().invoke(cli, ["check", str(scenario)])
    assert result.exit_code == 2
    assert "':x:' is not a rate" in result.output and "❌" not in result.output


def test_escape_sequences_in_a_key_are_shown_not_obeyed(tmp_path: Path) -> None:
    scenario = tmp_path / "keys.yaml"
    key = quoted("\x1b[2J\x1b]0;owned\x07")
    scenario.write_text(SCENARIO.replace("NAME", "x").replace("RATE", "1/s") + f"  {key}: 1\n")
    result = CliRunner().invoke(cli, ["check", str(scenario)])
    assert result.exit_code == 2 and "\x1b" not in result.output and "\x07" not in result.output
    assert "spec.\\x1b[2J\\x1b]0;owned\\x07" in result.output


def test_a_hostile_scenario_name_and_store_path_print_as_written_in_every_readout(tmp_path: Path) -> None:
    scenario = tmp_path / "named.yaml"
    scenario.write_text(SCENARIO.replace("NAME", quoted(HOSTILE)).replace("RATE", "1/s"))
    store = tmp_path / "[red]store"
    ran = CliRunner().invoke(cli, ["run", str(scenario), "--store", str(store), "--no-progress"])
    assert ran.exit_code == 0, ran.output
    assert f"in {store}/runs.sqlite" in ran.output
    for command in (["runs", "-o", "wide"], ["show", "latest"], ["compare", "1", "1"], ["explain", "latest"]):
        result = CliRunner().invoke(cli, [*command, "--store", str(store)])
        assert result.exit_code == 0, (command, result.output)
        assert "\x1b" not in result.output and "\u202e" not in result.output, command
        assert "❌" not in result.output, command
        if command[0] in ("show", "explain"):
            assert SHOWN in result.output, (command, result.output)


def test_a_usage_error_quotes_what_was_typed_as_text() -> None:
    for args in (["\x1b[2Jnope"], ["run", "--seed", "\x1b]0;owned\x07", "x.yaml"]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2, result.output
        assert "\x1b" not in result.output and "\\x1b" in result.output, result.output
