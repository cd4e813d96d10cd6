"""`skenario serve`: the web dashboard over the run store (`skenario.web`), on FastAPI and uvicorn."""

from __future__ import annotations

import ipaddress
from importlib.util import find_spec
from pathlib import Path

import click

from skenario.cli.common import err, store_option
from skenario.errors import SkenarioError
from skenario.results.store import DEFAULT_STORE

LOCAL = ("127.0.0.1", "localhost", "::1")


@click.command()
@store_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (others: see the warning).")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True, help="Port to listen on.")
@click.option(
    "--files",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=None,
    help="Folder the editor's scenarios name their files from (traces, manifests); default the working directory.",
)
def serve(store: Path | None, host: str, port: int, files: Path | None) -> None:
    """Serve the web dashboard: runs, charts, decisions explained, the scheduler's view, comparisons, sweeps
    and a scenario editor, over the run store.

    Open the address it prints; Ctrl-C stops it (and any run started from its editor, kept as Failed).
    It listens on this machine only unless --host says otherwise. A scenario from the editor never runs
    plugin code, and names its files (traces, manifests) from --files."""
    missing = [name for name in ("fastapi", "uvicorn") if find_spec(name) is None]
    if missing:
        raise SkenarioError(
            f"skenario serve needs the web extra ({', '.join(missing)} not installed): pip install 'skenario[web]'"
        )
    import uvicorn

    from skenario.web.app import create_app

    if not _local(host):
        err.print(
            f"[bold yellow]warning:[/] listening on {host}: anyone who can reach it can read, delete and run "
            "scenarios in this store (there is no login); the default 127.0.0.1 keeps it to this machine",
            highlight=False,
            markup=True,
            soft_wrap=True,
        )
    folder = store if store is not None else Path(DEFAULT_STORE)
    app = create_app(folder, files=files)
    shown = f"[{host}]" if ":" in host else host
    err.print(
        f"skenario dashboard on http://{shown}:{port}/ (store {folder}); Ctrl-C stops it",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    uvicorn.run(app, host=host, port=port, log_level="warning")


def _local(host: str) -> bool:
    if host in LOCAL:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
