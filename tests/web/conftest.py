"""A store with one run of every kind the dashboard shows, and the dashboard served over it for a browser."""

from __future__ import annotations

import socket
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import uvicorn
from click.testing import CliRunner

from skenario.cli import cli
from skenario.results.store import DATABASE
from skenario.web.app import create_app

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SWEEP_SET = "autoscalers[0].manifest.spec.metrics[0].resource.target.averageUtilization=50,70,90"


@dataclass(frozen=True)
class World:
    """The store's folder and the run (or sweep) number of each kind."""

    store: Path
    cluster: int  # a scenario on nodes with an HPA and the cluster autoscaler: KEP-140 results per pod
    kep: int  # a KEP-140 timeline: a taint leaves one pod unschedulable
    batch: int  # a YARN replay under the Capacity Scheduler
    replay: int  # a replay held against its real cluster's series
    sweep: int  # three HPA targets, two seeds each
    sweep_runs: tuple[int, ...]
    kueue: int  # Kueue's admission of two teams' workloads under a cohort
    study: int  # `skenario tune`: three trials of an HPA's target, two objectives


def invoke(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), terminal_width=400, env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    return result.output


def build_world(folder: Path) -> World:
    store = folder / "store"
    keep = ["--store", str(store), "--no-progress"]
    invoke("run", str(EXAMPLES / "hpa-cluster-autoscaler.yaml"), *keep)
    invoke("run", str(EXAMPLES / "kep140" / "taint-and-delete.yaml"), *keep)
    invoke("run", str(EXAMPLES / "yarn" / "capacity-replay.yaml"), *keep)
    invoke("replay", str(EXAMPLES / "calibration" / "flink-hpa-70.calibrated.yaml"), "--store", str(store))
    short = folder / "sweep.yaml"
    short.write_text((EXAMPLES / "sweep" / "hpa.yaml").read_text().replace("duration: 1h", "duration: 10m"))
    invoke("sweep", str(short), "--set", SWEEP_SET, "--seeds", "2", "--workers", "1", "--no-progress", *keep[:2])
    kueue = EXAMPLES / "kueue"
    nodes, manifests = str(kueue / "nodes.csv"), str(kueue / "manifests.yaml")
    invoke("schedule", str(kueue / "pods.csv"), "--nodes", nodes, "--kueue", manifests, *keep[:2])
    target = SWEEP_SET.replace("=50,70,90", "=40..90:int")
    objectives = ["--objective", "min:replica_hours", "--objective", "min:p99"]
    tune = ["--trials", "3", "--seeds", "1", "--workers", "1", "--no-progress", "--to", str(folder / "tune")]
    invoke("tune", str(short), "--space", target, *objectives, *tune, *keep[:2])
    return World(store, 1, 2, 3, 4, sweep=1, sweep_runs=(5, 6, 7, 8, 9, 10), kueue=11, study=2)


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return build_world(tmp_path_factory.mktemp("dashboard"))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def serving(store: Path) -> Iterator[str]:
    """The dashboard over `store`, on a free port of this machine, while in it: its address."""
    app = create_app(store, files=EXAMPLES)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=free_port(), log_level="warning"))
    started = threading.Event()
    original = server.startup

    async def startup(sockets: list[socket.socket] | None = None) -> None:
        await original(sockets)
        started.set()

    def run() -> None:
        try:
            server.run()
        finally:  # a server that could not start ends here too: the wait below is never left hanging
            started.set()

    server.startup = startup  # type: ignore[method-assign]
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    started.wait()
    assert server.started, "the dashboard's server did not start"
    try:
        yield f"http://127.0.0.1:{server.config.port}"
    finally:
        server.should_exit = True
        thread.join()


@pytest.fixture(scope="session")
def served(world: World) -> Iterator[str]:
    """The dashboard over the world's store."""
    with serving(world.store) as address:
        yield address


@pytest.fixture
def own_store(world: World, tmp_path: Path) -> Path:
    """A copy of the world's store for a test that adds or deletes runs: SQLite's own backup, as the world's
    store may be open in the dashboard serving it (its log files come and go)."""
    copy = tmp_path / "store"
    copy.mkdir()
    with (
        closing(sqlite3.connect(world.store / DATABASE)) as source,
        closing(sqlite3.connect(copy / DATABASE)) as target,
    ):
        source.backup(target)
    return copy
