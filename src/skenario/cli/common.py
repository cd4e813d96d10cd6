"""What every command shares: the consoles, the user-error wrapper, the store and output options."""

from __future__ import annotations

import functools
import json
import math
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import click
import yaml
from rich.console import Console
from rich.markup import escape

from skenario.errors import SkenarioError

F = TypeVar("F", bound=Callable[..., Any])

# Piped output has no terminal width to follow; 120 columns keep the tables whole.
out = Console(width=None if sys.stdout.isatty() else 120)
err = Console(stderr=True)


def user_errors(command: F) -> F:
    """Turn a SkenarioError into one clear line on stderr and exit status 2."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except SkenarioError as exc:
            for line in getattr(exc, "lines", ()):  # what the error rests on (a refused run's estimate)
                err.print(f"  {line}", highlight=False, soft_wrap=True)
            err.print(f"[bold red]error:[/] {one_line(str(exc))}", highlight=False, markup=True, soft_wrap=True)
            sys.exit(2)

    return wrapper  # type: ignore[return-value]


def check_output_dirs(*outputs: tuple[str, Path | None]) -> None:
    """Refuse, before any work, an output file (option, path) whose folder does not exist."""
    for option, path in outputs:
        if path is not None and not path.parent.is_dir():
            raise SkenarioError("no such directory for the output", field=option, value=str(path))


def one_line(text: str) -> str:
    """User text made safe to print as one line of Rich markup: brackets escaped, line breaks shown as \\n."""
    return escape(text.replace("\r", "\\r").replace("\n", "\\n"))


store_option = click.option(
    "--store",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    envvar="SKENARIO_STORE",
    help="The run store's folder (default .skenario, or $SKENARIO_STORE).",
)

OUTPUT_FORMATS = ("table", "wide", "json", "yaml")

output_option = click.option(
    "--output",
    "-o",
    "output",
    type=click.Choice(OUTPUT_FORMATS),
    default="table",
    show_default=True,
    help="table; wide (more columns); json or yaml: every field, for scripts.",
)


def print_document(document: Any, output: str) -> None:
    """`document` on stdout as one JSON or YAML document (`output`), and nothing else: a script parses it."""
    plain = _plain(document)
    if output == "json":
        click.echo(json.dumps(plain, indent=2, ensure_ascii=False, allow_nan=False))
    else:
        click.echo(yaml_text(plain), nl=False)


YAML_LINE_BREAKS = ("\x85", "\u2028", "\u2029")
"""YAML 1.1's line breaks beyond \\n: PyYAML writes them raw with allow_unicode, and reads them back as spaces."""


def yaml_text(plain: Any) -> str:
    """Plain data as YAML that reads back the same: readable Unicode, unless a value holds a YAML line break."""
    text = yaml.safe_dump(plain, sort_keys=False, allow_unicode=True)
    if any(c in text for c in YAML_LINE_BREAKS):
        text = yaml.safe_dump(plain, sort_keys=False)  # every non-ASCII character escaped
    return text


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
