"""`skenario run`: run a scenario, show its summary, keep it in the run store.

A run stops early, kept in the store as Failed with what it recorded, in two ways: SIGTERM or
Ctrl-C (`StopRequests`), and its process passing the memory budget (`MemoryGuard`). Both stop
it between two movements, within about a second of wall time, however far apart its steps are.
"""

from __future__ import annotations

import _thread
import json
import math
import os
import re
import resource
import signal
import sys
import threading
import time
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from types import FrameType
from typing import Any

import click
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from skenario.cli.check import preflight, validated
from skenario.cli.common import check_output_dirs, err, out, store_option, user_errors
from skenario.cli.kep import check_kep, read_kep, run_kep
from skenario.cli.scheduling import scheduling_table, write_results
from skenario.cli.tables import class_table, ignored_table, summary_table, workloads_table
from skenario.core.time import SECOND, format_duration
from skenario.errors import SkenarioError
from skenario.results.files import atomic_path
from skenario.results.readout import node_cpu_rows
from skenario.results.store import RunStore, RunWriter, check_label
from skenario.scenario.format.scenario import MAX_SEED
from skenario.scenario.io import read_text
from skenario.scenario.preflight import estimate
from skenario.scenario.simulation import Phase, Simulation

# The run stops this many times on its way: to draw progress and to write a batch of results.
STEPS = 100


class Stopped(Exception):
    """The run was stopped before its end (a signal, the memory budget); it is kept, marked Failed."""

    def __init__(self, reason: str, exit_code: int) -> None:
        super().__init__(reason)
        self.exit_code = exit_code

    @classmethod
    def by_signal(cls, signum: int) -> Stopped:
        """Stopped by SIGTERM or SIGINT: exit status 128 + its number, as a shell reports a process it killed."""
        return cls(f"stopped by signal {signal.Signals(signum).name}", 128 + signum)


class StopRequests:
    """Stops the run within a second of SIGTERM or SIGINT, whatever its simulated length.

    The signal asks the kernel to pause after the movement it is in (`on_stop`), so the run stops
    between movements with the model and the last batch written whole. Should one movement (or
    the setup) take longer than `GRACE`, the main thread is interrupted where it is; a second
    signal does that at once. Another thread stops the run the same way with `ask`.
    """

    SIGNALS = (signal.SIGTERM, signal.SIGINT)
    GRACE = 0.8  # seconds of wall time between the signal and the interruption

    def __init__(self, on_stop: Callable[[], object] | None = None) -> None:
        self.stop: Stopped | None = None
        self.on_stop = on_stop
        self._asked: Stopped | None = None  # a stop another thread asked for, on its way in as a signal
        self._previous: dict[int, Any] = {}
        self._watchdog: threading.Timer | None = None

    def __enter__(self) -> StopRequests:
        for signum in self.SIGNALS:
            self._previous[signum] = signal.signal(signum, self._note)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def ask(self, stop: Stopped) -> None:
        """Stop the run for this reason, from any thread: it reaches the main thread as a SIGTERM
        would (Python runs signal handlers there, between two bytecodes, where pausing is safe)."""
        self._asked = stop
        _thread.interrupt_main(signal.SIGTERM)  # nothing once `ignore` has set the signal aside

    def _note(self, signum: int, frame: FrameType | None) -> None:
        asked, self._asked = self._asked, None
        if self.stop is not None:
            if asked is not None:  # asked after a signal: that stop goes on
                return
            raise self.stop  # a signal twice: stop where it is
        self.stop = asked or Stopped.by_signal(signum)
        if self.on_stop is not None:
            self.on_stop()
        self._watchdog = threading.Timer(self.GRACE, _thread.interrupt_main)
        self._watchdog.daemon = True
        self._watchdog.start()

    def check(self) -> None:
        if self.stop is not None:
            raise self.stop

    def ignore(self) -> None:
        """From now on (writing the end of the run) a further signal is not let in halfway."""
        if self._watchdog is not None:
            self._watchdog.cancel()
        for signum in self.SIGNALS:
            signal.signal(signum, signal.SIG_IGN)


_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*(%|b|[kmgtp]i?b?)?\s*", re.IGNORECASE)
_UNIT_POWERS = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
DEFAULT_MEMORY_SHARE = 0.5  # of physical memory, when --max-memory is not given


def memory_budget(text: str | None) -> int | None:
    """`--max-memory` in bytes: `2GiB`, `500MiB` or `2Gi` (powers of 1024), `2GB` or `2G` (of 1000),
    plain bytes, or a share of physical memory (`50%`, the default); None for no limit (`0`, `none`)."""
    physical = physical_memory()
    if text is None:
        return None if physical is None else int(physical * DEFAULT_MEMORY_SHARE)
    if text.strip().lower() == "none":
        return None
    match = _SIZE.fullmatch(text)
    if match is None:
        raise SkenarioError(
            "not a size; write a number and a unit such as 2GiB, 500MiB or 50% (of physical memory), "
            "or 0 or none for no limit",
            field="--max-memory",
            value=text,
        )
    number, unit = Fraction(match.group(1)), (match.group(2) or "").lower()  # exact, however many digits
    if unit == "%":
        if physical is None:
            raise SkenarioError("this machine does not say how much memory it has", field="--max-memory", value=text)
        size = number / 100 * physical
    else:
        size = number * (1024 if "i" in unit else 1000) ** _UNIT_POWERS[unit.rstrip("ib")]
    return math.ceil(size) or None


def physical_memory() -> int | None:
    """The machine's memory in bytes, or None where the system does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def resident_memory() -> int:
    """This process's resident memory in bytes: now (Linux's /proc), else its peak so far."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024  # macOS counts bytes, Linux KiB


def format_size(size: float) -> str:
    """Bytes as people write them: `2 GiB`, `2.1 GiB`, `118.4 MiB`."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(size) < 1024 or unit == "TiB":
            break
        size /= 1024
    return f"{f'{size:.1f}'.removesuffix('.0')} {unit}"


class MemoryGuard:
    """Stops the run (`StopRequests.ask`) once the process's resident memory passes `budget` bytes.

    A thread reads the resident size every `PERIOD` seconds of wall time: a read of /proc costs
    microseconds, so the run does not notice it. The stop is a Failed run with exit status 1.
    """

    PERIOD = 0.5
    EXIT_CODE = 1

    def __init__(self, budget: int | None, stops: StopRequests, now: Callable[[], int]) -> None:
        self.budget = budget
        self._stops = stops
        self._now = now
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="memory-guard", daemon=True)

    def __enter__(self) -> MemoryGuard:
        if self.budget is not None:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        if self._thread.is_alive():
            self._thread.join()

    def _watch(self) -> None:
        assert self.budget is not None
        while not self._done.wait(self.PERIOD):
            resident = resident_memory()
            if resident > self.budget:
                reason = (
                    f"memory budget {format_size(self.budget)} exceeded: {format_size(resident)} resident "
                    f"at simulated {format_duration(self._now() // SECOND * SECOND)}"
                )
                self._stops.ask(Stopped(reason, self.EXIT_CODE))
                return


@click.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--seed", type=click.IntRange(0, MAX_SEED), default=None, help="Override the scenario's seed.")
@click.option("--show-ignored", is_flag=True, help="Also print the ignored movements and why they were ignored.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object instead of a table.")
@click.option("--no-progress", is_flag=True, help="Do not draw a progress bar.")
@click.option("--no-store", is_flag=True, help="Do not keep the run in the run store.")
@click.option("--no-plugins", is_flag=True, help="Refuse a scenario that names plugins (their code would run).")
@click.option("--force", is_flag=True, help="Run even a scenario whose estimate passes the limits (skenario check).")
@click.option(
    "--dry-run",
    is_flag=True,
    help="Validate and estimate the run as `skenario check` does; run nothing (KEP-140 input runs in memory).",
)
@click.option(
    "--max-memory",
    default=None,
    metavar="SIZE",
    help="Stop the run, kept as Failed, past this resident memory: 2GiB, 500MiB, 50%; 0 or none for no limit "
    f"(default {DEFAULT_MEMORY_SHARE:.0%} of physical memory).",
)
@click.option("--name", default=None, help="A name to refer to the run by (the newest run of a name wins).")
@click.option("--tag", "tags", multiple=True, help="A tag to find the run by; may be given again.")
@store_option
@click.option(
    "--series",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the time series (one row per recording interval) to this CSV file.",
)
@click.option(
    "--pods",
    "pods_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="With spec.cluster: write one row per pod (created, bound, node, wait, end) to this CSV file.",
)
@click.option(
    "--results",
    "results_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="With spec.cluster: write KEP-140's PodResults (every attempt's plugin results) and the timeline as JSON.",
)
@user_errors
def run(
    file: Path,
    seed: int | None,
    show_ignored: bool,
    as_json: bool,
    no_progress: bool,
    no_store: bool,
    no_plugins: bool,
    force: bool,
    dry_run: bool,
    max_memory: str | None,
    name: str | None,
    tags: tuple[str, ...],
    store: Path | None,
    series: Path | None,
    pods_file: Path | None,
    results_file: Path | None,
) -> None:
    """Run the scenario in FILE, print a summary of what happened and keep the run in the store."""
    budget = memory_budget(max_memory)
    if name is not None:
        check_label(name, "--name")
    for tag in tags:
        check_label(tag, "--tag")
    text = read_text(file)
    kep = read_kep(file, text)
    if kep is not None:
        check_output_dirs(("--pods", pods_file), ("--results", results_file))
        if dry_run:
            check_kep(kep, file=file, text=text, seed=seed)
            return
        run_kep(
            kep,
            file=file,
            text=text,
            seed=seed,
            as_json=as_json,
            store=store,
            no_store=no_store,
            name=name,
            tags=tags,
            pods_file=pods_file,
            results_file=results_file,
        )
        return
    check_output_dirs(("--series", series), ("--pods", pods_file), ("--results", results_file))
    if dry_run:
        preflight(file, validated(file, text, seed=seed))
        return
    # The one validation `check` makes, plugins loaded (their code runs): everything the scenario names is
    # read and built by now, before the estimate, so a run refused costs no more than a check.
    prepared = validated(file, text, seed=seed, plugins="refuse" if no_plugins else "load")
    cost = estimate(prepared)
    if (over := cost.over()) and not force:
        for line in cost.lines():
            err.print(f"  {line}", highlight=False, soft_wrap=True)
        raise SkenarioError(
            f"refused: the run would take {'; '.join(over)}. Run it anyway with --force", file=str(file)
        )
    simulation = Simulation(prepared.scenario, scenario_text=text, prepared=prepared)
    with StopRequests(on_stop=simulation.env.pause_soon) as stops:
        # Everything the scenario names is read and checked by now: only a valid run reaches the store.
        writer = None if no_store else RunStore(store).begin(simulation, str(file), name=name, tags=tags)
        started = time.perf_counter()
        try:
            try:
                with MemoryGuard(budget, stops, simulation.env.now):
                    _run(simulation, writer, stops, show_progress=not (no_progress or as_json))
            except KeyboardInterrupt:  # the watchdog's interruption, or Ctrl-C before the handler was in
                raise stops.stop or Stopped.by_signal(signal.SIGINT) from None
        except Stopped as stopped:
            stops.ignore()
            simulation.fail(str(stopped))
            kept = ""
            if writer is not None:
                writer.finish(time.perf_counter() - started)
                kept = f": run {writer.run_id} kept in the store as Failed"
            err.print(f"[bold red]{escape(str(stopped))}[/]{kept}", highlight=False, soft_wrap=True)
            raise SystemExit(stopped.exit_code) from None
        except Exception:
            stops.ignore()
            if writer is not None:
                writer.finish(time.perf_counter() - started)  # the run, marked Failed, with what it had made
            raise
        wall = time.perf_counter() - started
        stops.ignore()
        if writer is not None:
            writer.finish(wall)
    summary = simulation.summary()
    if series is not None:
        with atomic_path(series) as partial:
            simulation.series().to_csv(partial, index=False)
    placement = simulation.placement
    if placement is not None:
        write_results(placement.controller, pods_file, results_file)
    if as_json:
        document = summary.as_dict() | {"wall_s": wall, "speedup": summary.simulated_ns / SECOND / wall}
        if placement is not None:
            document["scheduling"] = placement.summary().as_dict() | placement.autoscaler_figures()
        document |= {"phase": simulation.phase.value, "run": writer.run_id if writer else None}
        click.echo(json.dumps(document, indent=2))
        return
    out.print(summary_table(summary, wall))
    if (workloads := workloads_table(summary)) is not None:
        out.print(workloads)
    if (classes := class_table(summary)) is not None:
        out.print(classes)
    if placement is not None:
        extra = [(k, f"{v:,}") for k, v in placement.autoscaler_figures().items()]
        extra += node_cpu_rows(placement.node_cpu_utilisation().values())
        out.print(scheduling_table(placement.summary(), extra=extra))
    out.print(f"digest: [bold]{summary.digest}[/]", highlight=False)
    if simulation.phase is not Phase.COMPLETED:
        out.print(f"phase: {simulation.phase.value}: {simulation.message}", highlight=False)
    if writer is not None:
        out.print(f"stored as run [bold]{writer.run_id}[/] in {writer.store.path}", highlight=False)
    if show_ignored:
        out.print(ignored_table(simulation.env))


def _run(simulation: Simulation, writer: RunWriter | None, stops: StopRequests, *, show_progress: bool) -> None:
    """Run in STEPS stretches, writing each stretch's results as one batch and heeding stop requests."""

    def step(now: int) -> None:
        if writer is not None:
            writer.flush()
        stops.check()

    if not show_progress:
        simulation.run(steps=STEPS, progress=step)
        return
    with Progress(
        TextColumn(f"[bold]{simulation.scenario.metadata.name}"),
        BarColumn(),
        TextColumn("{task.fields[simulated]} simulated"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    ) as progress:
        task = progress.add_task("run", total=simulation.end, simulated=format_duration(0))

        def advance(now: int) -> None:
            step(now)
            progress.update(task, completed=now, simulated=format_duration(now))

        simulation.run(steps=STEPS, progress=advance)
