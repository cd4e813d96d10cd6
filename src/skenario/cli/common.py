"""What every command shares: the consoles, the user-error report, the store and output options."""

from __future__ import annotations

import csv
import functools
import json
import math
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click
import yaml
from rich.markup import escape

from skenario.cli.terminal import Terminal
from skenario.errors import SkenarioError
from skenario.scenario.wiring.plugins import MODULES_VARIABLE, PluginPolicy, applied, modules_of

F = TypeVar("F", bound=Callable[..., Any])

# Piped output has no terminal width to follow; 120 columns keep the tables whole.
out = Terminal(width=None if sys.stdout.isatty() else 120)
err = Terminal(stderr=True)


def report_user_error(exc: SkenarioError) -> NoReturn:
    """A SkenarioError as one clear line on stderr (after the lines it rests on), and exit status 2.

    The command group calls it for every command (`skenario.cli.Commands.invoke`): no command
    catches a user error itself."""
    for line in getattr(exc, "lines", ()):  # what the error rests on (a refused run's estimate)
        err.print(f"  {line}", highlight=False, soft_wrap=True)
    err.print(f"[bold red]error:[/] {one_line(str(exc))}", highlight=False, markup=True, soft_wrap=True)
    sys.exit(2)


def check_output_dirs(*outputs: tuple[str, Path | None]) -> None:
    """Refuse, before any work, an output file (option, path) whose folder does not exist."""
    for option, path in outputs:
        if path is not None and not path.parent.is_dir():
            raise SkenarioError("no such directory for the output", field=option, value=str(path))


def one_line(text: str) -> str:
    """User text made safe to print as one line of Rich markup: brackets escaped, line breaks shown as \\n."""
    return escape(text.replace("\r", "\\r").replace("\n", "\\n"))


class _ModuleNames(click.ParamType[str]):
    """A plugin module's name; the environment variable lists them separated by commas."""

    name = "module"
    envvar_list_splitter = ","

    def split_envvar_value(self, rv: str) -> list[str]:
        return modules_of(rv)


def plugin_options(command: F) -> F:
    """`--no-plugins` and `--allow-plugin-module NAME` (also $SKENARIO_PLUGIN_MODULES), the command run under
    them (`plugins.applied`): a scenario's plugin is a file path it writes or a module named here."""

    @functools.wraps(command)
    def under_policy(*args: Any, no_plugins: bool, allow_plugin_modules: tuple[str, ...], **kwargs: Any) -> Any:
        with applied(PluginPolicy(no_plugins, frozenset(allow_plugin_modules))):
            return command(*args, **kwargs)

    wrapped = click.option(
        "--allow-plugin-module",
        "allow_plugin_modules",
        multiple=True,
        type=_ModuleNames(),
        envvar=MODULES_VARIABLE,
        metavar="MODULE",
        help="Let a scenario's plugin be a class of this module (module:Class; a plugin file written as a path "
        f"needs none); may be given again. Without it, ${MODULES_VARIABLE} is read (names separated by commas).",
    )(under_policy)
    return click.option(  # type: ignore[return-value]
        "--no-plugins", is_flag=True, help="Refuse a scenario that names plugins (their code would run)."
    )(wrapped)


store_option = click.option(
    "--store",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    envvar="SKENARIO_STORE",
    help="The run store's folder (default .skenario, or $SKENARIO_STORE).",
)

OUTPUT_FORMATS = ("table", "wide", "json", "yaml")
# Every format any command takes: a value of `-o` that is none of them may be an old-style path.
FORMAT_NAMES = (*OUTPUT_FORMATS, "csv")
_HELP = {
    "table": "table",
    "wide": "wide (more columns, where there are more)",
    "json": "json or yaml: every field, for scripts",
    "csv": "csv: the table's rows",
}


class OutputFormat(click.ParamType[Any]):
    """`-o FORMAT`, one of `formats`; where the command names a file with `--to`, a value that is no
    format's name is the old `-o PATH`, kept for one release (`OldPath`, with a warning)."""

    name = "format"

    def __init__(self, formats: tuple[str, ...], *, takes_path: bool) -> None:
        self.formats = formats
        self.takes_path = takes_path

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str:
        return "[" + "|".join(self.formats) + "]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, OldPath) or value in self.formats:
            return value
        if self.takes_path and value not in FORMAT_NAMES:
            return OldPath(value)
        accepted = ", ".join(self.formats) if self.formats else "none: name the file with --to"
        raise SkenarioError(f"unknown output format {value!r}; accepted: {accepted}", field="-o/--output")


class OldPath(str):
    """A path given to `-o`, which is now `--to PATH`."""

    __slots__ = ()


def output_option(*formats: str, default: str = "table", to: bool = False) -> Callable[[F], F]:
    """`-o/--output FORMAT` (one of `formats`, `default` when not given) and `--json`, its hidden alias
    for `-o json`; the command receives `output`. With `to`, the command names a file with `--to` and
    receives `to`: an old-style `-o PATH` becomes `--to PATH` with a warning on stderr. A command that
    prints no data (`formats` empty) keeps only that old `-o PATH`, hidden."""

    def decorate(command: F) -> F:
        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            output = kwargs.pop("output")
            if kwargs.pop("as_json_alias", False):
                output = "json"
            if isinstance(output, OldPath):
                if kwargs.get("to") is not None:
                    raise SkenarioError("give the file once, with --to", field="-o/--output", value=str(output))
                click.echo(f"warning: -o {output} is deprecated for a file: use --to {output}", err=True)
                kwargs["to"] = Path(output)
                output = default
            if formats:
                kwargs["output"] = output
            return command(*args, **kwargs)

        option = click.option(
            "--output",
            "-o",
            "output",
            type=OutputFormat(formats, takes_path=to),
            default=default if formats else None,
            show_default=bool(formats),
            hidden=not formats,
            help="; ".join(dict.fromkeys(_HELP[name] for name in formats if name in _HELP)) + ".",
        )
        decorated = option(wrapper)
        if "json" in formats:
            decorated = click.option("--json", "as_json_alias", is_flag=True, hidden=True)(decorated)
        return decorated  # type: ignore[return-value]

    return decorate


def print_csv(headings: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """A table on stdout as CSV, headings first: what a spreadsheet or `csv.reader` reads."""
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(headings)
    writer.writerows(["" if cell is None else cell for cell in row] for row in rows)


def print_document(document: Any, output: str) -> None:
    """`document` on stdout as one JSON or YAML document (`output`), and nothing else: a script parses it."""
    plain = _plain(document)
    if output == "json":
        click.echo(json.dumps(plain, indent=2, ensure_ascii=False, allow_nan=False))
    else:
        print_yaml(plain)


def print_json(document: Any, output: str) -> None:
    """`document` as the commands that printed `json.dumps(document, indent=2)` before `-o` still print it
    (`-o json`), or the object that JSON reads back as YAML (`-o yaml`)."""
    text = json.dumps(document, indent=2)
    if output == "json":
        click.echo(text)
    else:
        print_yaml(json.loads(text))


YAML_LINE_BREAKS = ("\x85", "\u2028", "\u2029")
"""YAML 1.1's line breaks beyond \\n: PyYAML writes them raw with allow_unicode, and reads them back as spaces."""


def print_yaml(document: Any) -> None:
    """The document a command prints as JSON (`json.loads` of it), as YAML: the same object, read back the same
    (readable Unicode, unless a value holds a YAML line break: then every non-ASCII character escaped)."""
    text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
    if any(c in text for c in YAML_LINE_BREAKS):
        text = yaml.safe_dump(document, sort_keys=False)
    click.echo(text, nl=False)


def _plain(value: Any) -> Any:
    """`value` as JSON and YAML both write it: numpy scalars as Python's, NaN and infinities as null,
    bytes as text, mappings with text keys."""
    if type(value).__module__ == "numpy" and hasattr(value, "item"):
        value = value.item()
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return str(value)


def to_option(help: str, *, folder: bool = False) -> Callable[[F], F]:
    """`--to PATH`: the file (or `folder`) a command writes; the command receives `to`."""
    return click.option(
        "--to",
        "to",
        type=click.Path(file_okay=not folder, dir_okay=folder, path_type=Path),
        default=None,
        metavar="DIR" if folder else "FILE",
        help=help,
    )
