"""What every command shares: the consoles, the user-error wrapper, the store option, atomic writes."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
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
