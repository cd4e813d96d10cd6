"""The run store: every run's scenario, seed, phase, summary, time series and timeline, in one SQLite file.

SQLite needs no server and survives a killed writer: each batch is one transaction, so the file
always holds whole batches. A run's row is written first with phase Running and the writer's
process id; a run whose process is gone while it still says Running is marked Failed the next
time the store is opened, so a killed run never looks finished or still under way.

The store lives in `.skenario/runs.sqlite` by default (`SKENARIO_STORE` or `--store` name
another folder). Its jobs, one module each:

    schema      the tables, and the numbered migrations an older store file is brought up by
    base        the file: opened, upgraded, and its dead Running runs and sweeps reaped
    reserve     room kept beside it so runs can be deleted when its disk is full
    references  what a user types for a run or sweep (a number, `latest`, -N, a name, a tag)
    writer      the one way a run goes in: `RunWriter` reading a `RunOutput`, in batches or whole
    runs        runs listed, loaded and removed
    sweeps      sweeps and studies, their points and the runs they made

`RunStore` is all of them at once, as every command uses it.
"""

from __future__ import annotations

from collections.abc import Sequence

from skenario.results.store.base import DATABASE, DEFAULT_STORE, PATIENCE, StoreError, StoreFull, StoreLocked
from skenario.results.store.references import check_label
from skenario.results.store.runs import RUN_FIELDS
from skenario.results.store.sweeps import SWEEP_FIELDS, Sweeps
from skenario.results.store.writer import FinishedRun, RunOutput, RunWriter

__all__ = [
    "DATABASE",
    "DEFAULT_STORE",
    "PATIENCE",
    "RUN_FIELDS",
    "SWEEP_FIELDS",
    "FinishedRun",
    "RunOutput",
    "RunStore",
    "RunWriter",
    "StoreError",
    "StoreFull",
    "StoreLocked",
    "check_label",
]


class RunStore(Sweeps):
    """The runs kept in one folder."""

    def begin(
        self,
        run: RunOutput,
        scenario_file: str | None,
        *,
        name: str | None = None,
        tags: Sequence[str] = (),
        release: bool = False,
    ) -> RunWriter:
        """A new run, phase Running, with its own name and tags if given; its results follow through the writer
        (with `release`, the run lets go of the history each batch stored)."""
        return RunWriter.start(self, run, scenario_file, name=name, tags=tags, release=release)

    def keep(
        self,
        run: RunOutput,
        scenario_file: str | None,
        *,
        wall_s: float | None,
        name: str | None = None,
        tags: Sequence[str] = (),
    ) -> int:
        """A run already over, written whole in one transaction (never seen Running); its id."""
        with self._connect(create=True) as db, db:
            self._reap(db)
            return RunWriter.whole(db, run, wall_s, scenario_file, name=name, tags=tags)
