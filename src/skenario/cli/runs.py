"""The commands on stored runs: `runs`, `show`, `compare`, `export`, `plot` and `report`.

Each RUN is what `RunStore.resolve` takes: a number, a name, a tag, `latest` or -N.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from skenario.cli.common import err, out, output_option, print_csv, print_document, store_option, to_option
from skenario.cli.scheduling import BATCH_FIGURES, batch_figure, batch_table, scheduling_table, waiting_table
from skenario.cli.store import run_store
from skenario.cli.tables import class_table, runs_rows, runs_table, summary_table, workloads_table
from skenario.cli.terminal import Terminal
from skenario.core.time import format_duration, parse_duration
from skenario.errors import SkenarioError
from skenario.recording.summary import Summary
from skenario.results.readout import cost_rows, limit_rows, node_cpu_rows, slo_verdict
from skenario.results.rundata import RunData, stated_objectives
from skenario.results.store import RunStore, StoreFull
from skenario.results.trajectory import TrajectoryError
from skenario.runs.supervise import format_size
from skenario.scenario.simulation import Phase
from skenario.scheduling.analysis import SchedulingSummary

F = TypeVar("F", bound=Callable[..., Any])

# A RUN such as -2 (counting back) is an argument, not an unknown option.
TAKES_RUNS = {"ignore_unknown_options": True}


def slo_options(command: Any) -> Any:
    """--slo-latency / --slo-percentile / --slo-error-rate; by default each run's own `spec.slo`."""
    command = click.option("--slo-error-rate", type=click.FloatRange(0, 1), default=None, help="e.g. 0.01 for 1%.")(
        command
    )
    command = click.option("--slo-percentile", type=click.Choice(["50", "95", "99"]), default=None)(command)
    return click.option("--slo-latency", default=None, help="Latency target such as 500ms (default: spec.slo).")(
        command
    )


def objectives(
    run: RunData, latency: str | None, percentile: str | None, error_rate: float | None
) -> dict[str, Any] | None:
    """The objectives to judge a run by (`analysis.slo` arguments): the options given, else the run's
    own `spec.slo`, else none."""
    own = stated_objectives(run) or {"percentile": 99, "error_rate": 0.01}
    if latency is not None:
        try:
            own["latency_ms"] = parse_duration(latency) / 1e6
        except ValueError as exc:
            raise SkenarioError(str(exc), field="--slo-latency", value=latency) from None
    if "latency_ms" not in own:
        return None
    if percentile is not None:
        own["percentile"] = int(percentile)
    if error_rate is not None:
        own["error_rate"] = error_rate
    return own


@click.group(invoke_without_command=True)
@store_option
@click.option("--name", default=None, help="Only the runs of this name (`run --name`).")
@click.option("--tag", default=None, help="Only the runs carrying this tag (`run --tag`).")
@click.option("--phase", type=click.Choice([p.value for p in Phase], case_sensitive=False), default=None)
@click.option("--sweep", "sweep_ref", default=None, metavar="SWEEP", help="Only the runs of this sweep or study.")
@click.option("--last", type=click.IntRange(1), default=None, help="Only the newest N runs (of those filtered).")
@output_option("table", "wide", "json", "yaml", "csv")
@click.pass_context
def runs(
    context: click.Context,
    store: Path | None,
    name: str | None,
    tag: str | None,
    phase: str | None,
    sweep_ref: str | None,
    last: int | None,
    output: str,
) -> None:
    """List the stored runs (`runs rm` and `runs gc` delete them, `runs check` checks the store)."""
    if context.invoked_subcommand is not None:
        return
    runs_store = run_store(store)
    sweep = None if sweep_ref is None else runs_store.resolve_sweep(sweep_ref)
    found = runs_store.runs(name=name, tag=tag, phase=phase, sweep=sweep, last=last)
    if output in ("json", "yaml"):
        print_document(found, output)
        return
    if output == "csv":
        print_csv(*runs_rows(found))
        return
    table = runs_table(found, f"runs in {runs_store.path}", wide=output == "wide")
    if output == "wide" and not out.is_terminal:  # piped: whole cells, however long the lines
        natural = Measurement.get(out, out.options.update_width(10**4), table).maximum
        Terminal(file=out.file, width=max(out.width, natural)).print(table)
    else:
        out.print(table)


@runs.command("rm", context_settings=TAKES_RUNS)
@click.argument("run", nargs=-1, required=True)
@store_option
def remove(run: tuple[str, ...], store: Path | None) -> None:
    """Delete each RUN (a number, name, tag or `latest`) and everything it recorded."""
    removed = run_store(store).remove(list(run))
    out.print(f"deleted run{'s' if len(removed) > 1 else ''} {', '.join(map(str, removed))}", highlight=False)


@runs.command("check")
@store_option
def check_store(store: Path | None) -> None:
    """Check the store: SQLite's own integrity check, and every stored row that cannot be read back (exit 1 if any)."""
    runs_store = run_store(store)
    problems = runs_store.check()
    for line in problems:
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    if problems:
        raise SystemExit(1)
    out.print(f"{runs_store.path}: whole", markup=False, highlight=False)


def load_run(runs_store: RunStore, run: str | int) -> RunData:
    """A stored run; each of its rows that could not be read back is said on stderr (one line each) and left out."""
    data = runs_store.load(run)
    for line in data.damaged:
        err.print(f"warning: run {data.id}: {line}; left out", markup=False, highlight=False, soft_wrap=True)
    return data


@runs.command("gc")
@click.option("--keep", type=click.IntRange(0), required=True, help="How many of the newest finished runs to keep.")
@store_option
def collect(keep: int, store: Path | None) -> None:
    """Delete all but the newest finished runs, and give their space back to the disk."""
    runs_store = run_store(store)
    removed = runs_store.keep_newest(keep)
    deleted = f"deleted {len(removed)} run{'' if len(removed) == 1 else 's'}"
    if not runs_store.exists():
        out.print(deleted, highlight=False)
        return
    try:
        before, after = runs_store.compact()
    except StoreFull:
        out.print(
            f"{deleted}; no room on the disk to give their space back (it takes a copy of the store): the next "
            "runs reuse it, or free some space and run `skenario runs gc` again",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        return
    out.print(f"{deleted}; the store takes {format_size(after)} (was {format_size(before)})", highlight=False)


@click.command(context_settings=TAKES_RUNS)
@click.argument("run")
@store_option
@slo_options
@output_option("table", "wide", "json", "yaml")
def show(
    run: str,
    store: Path | None,
    slo_latency: str | None,
    slo_percentile: str | None,
    slo_error_rate: float | None,
    output: str,
) -> None:
    """Show one stored RUN (a number, name, tag or `latest`): summary, objectives, cost and events."""
    from skenario.results import analysis  # pandas: loaded only by the commands that read runs

    runs_store = run_store(store)
    run_id = runs_store.resolve(run)
    data = load_run(runs_store, run_id)
    if (batch := data.documents.get("batch")) is not None:  # a batch replay: its scheduler's figures
        _show_batch(data, batch, runs_store.record(run_id), output)
        return
    judged = objectives(data, slo_latency, slo_percentile, slo_error_rate)
    verdict = None if judged is None else analysis.slo_summary(data, **judged)
    spend = analysis.cost(data)
    events = analysis.events(data)
    decisions = analysis.decisions(data).groupby("autoscaler").size()
    if output in ("json", "yaml"):
        events_list = [{"time_s": t} | row for t, row in zip(events.index, events.to_dict("records"), strict=True)]
        document = runs_store.record(run_id) | {
            "slo": verdict,
            "cost": spend,
            "limits": analysis.limits(data),
            "events": events_list,
            "decisions": decisions.to_dict(),
            "scheduling": data.documents.get("scheduling"),
        }
        if (replayed := data.documents.get("replay")) is not None:  # the comparison, not the series drawn
            document["replay"] = {key: value for key, value in replayed.items() if key != "observed"}
        print_document(document, output)
        return
    head = f"{data.name}, seed {data.seed}, {data.phase}: {data.message or ''}"
    out.print(f"run [bold]{data.id}[/]: {escape(head)}", markup=True)
    if output == "wide":
        out.print(_wide_line(runs_store.record(run_id)), highlight=False, soft_wrap=True)
    if data.summary:
        summary = Summary.from_dict(data.summary)
        out.print(summary_table(summary, wall=None))
        if (workloads := workloads_table(summary)) is not None:
            out.print(workloads)
        if (classes := class_table(summary)) is not None:
            out.print(classes)
    if (scheduling := data.documents.get("scheduling")) is not None:
        placed = SchedulingSummary.from_dict(scheduling)
        known = set(placed.as_dict())  # the rest are the cluster autoscaler's counts
        extra = [(k, f"{v:,}") for k, v in scheduling.items() if k not in known and isinstance(v, int)]
        extra += node_cpu_rows(node.get("cpu_utilisation") for node in data.documents.get("nodes", []))
        out.print(scheduling_table(placed, extra=extra))
    if (replayed := data.documents.get("replay")) is not None:
        lines = TrajectoryError.from_dict(replayed["replicas"]).lines()
        out.print("against the observed cluster: " + "; ".join(lines), highlight=False, soft_wrap=True)
    if verdict is not None:
        out.print(_slo_line(verdict), soft_wrap=True, markup=True)
    out.print(_rows_table("cost (OpenCost's terms) and limits", cost_rows(spend) + limit_rows(analysis.limits(data))))
    if len(events):
        table = Table(title="events")
        for column in ("time", "id", "operation", "target", "what happened"):
            table.add_column(column)
        for time_s, row in zip(events.index, events.itertuples(index=False), strict=True):
            table.add_row(format_duration(round(time_s * 1e9)), row.id, row.operation, row.target, row.message)
        out.print(table)
    if len(decisions):
        out.print("decisions: " + ", ".join(f"{name} {n:,}" for name, n in decisions.items()), highlight=False)


def _show_batch(data: RunData, batch: dict[str, Any], record: dict[str, Any], output: str) -> None:
    """A stored batch replay: its scheduler's summary, and the jobs or workloads left waiting, with why."""
    jobs = data.documents.get("jobs", [])
    if output in ("json", "yaml"):
        waiting = {str(j.get("job", j.get("workload"))): j["why"] for j in jobs if j.get("why")}
        print_document(record | {"batch": batch, "waiting": waiting}, output)
        return
    head = f"{data.name}, seed {data.seed}, {data.phase}: {data.message or ''}"
    out.print(f"run [bold]{data.id}[/]: {escape(head)}", markup=True)
    if output == "wide":
        out.print(_wide_line(record), highlight=False, soft_wrap=True)
    out.print(batch_table(batch, title=f"{batch['scheduler']} replay"))
    if (left := waiting_table(jobs)) is not None:
        out.print(left)


def _wide_line(record: dict[str, Any]) -> str:
    """What `show -o wide` adds under the first line: the run's name and tags, file, times and wall time."""
    wall = record["wall_s"]
    parts = [
        f"name {record['name'] or '-'}",
        f"tags {', '.join(record['tags']) or '-'}",
        f"file {record['scenario_file'] or '-'}",
        f"started {record['started_at']}",
        f"finished {record['finished_at'] or '-'}",
        f"wall {'-' if not isinstance(wall, int | float) else f'{wall:.2f} s'}",
    ]
    return escape("; ".join(parts))


def _rows_table(title: str, rows: list[tuple[str, str]]) -> Table:
    table = Table(title=title, show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value", justify="right")
    for what, value in rows:
        table.add_row(Text(what), Text(value))
    return table


def _slo_line(result: dict[str, Any]) -> str:
    colour = {True: "green", False: "red"}.get(result["met"], "yellow")
    verdict = f"[{colour}]{escape(slo_verdict(result))}[/]"
    latency = "-" if result["latency_ms"] is None else f"{result['latency_ms']:.1f} ms"
    rate = "-" if result["error_rate"] is None else f"{result['error_rate']:.2%}"
    fraction = "-" if result["compliant_fraction"] is None else f"{result['compliant_fraction']:.0%}"
    return (
        f"SLO p{result['percentile']} <= {result['latency_target_ms']:g} ms and errors <= "
        f"{result['error_rate_target']:.2%}: {verdict} (p{result['percentile']} {latency}, errors {rate}; "
        f"{fraction} of intervals compliant)"
    )


@click.command(context_settings=TAKES_RUNS)
@click.argument("run_ids", metavar="RUN RUN...", nargs=-1, required=True)
@store_option
@slo_options
@output_option("table", "wide", "json", "yaml", "csv")
def compare(
    run_ids: tuple[str, ...],
    store: Path | None,
    slo_latency: str | None,
    slo_percentile: str | None,
    slo_error_rate: float | None,
    output: str,
) -> None:
    """Compare stored runs side by side: outcomes, latency, replicas, cost and objectives."""
    from skenario.results import analysis  # pandas: loaded only by the commands that read runs

    runs_store = run_store(store)
    datas = [load_run(runs_store, run) for run in run_ids]
    batches = ["batch" in data.documents for data in datas]
    if any(batches):
        if not all(batches):
            kinds = ", ".join(
                f"run {d.id} {'a batch replay' if b else 'a scenario'}" for d, b in zip(datas, batches, strict=True)
            )
            raise SkenarioError(f"compare runs of one kind: {kinds}")
        _compare_batches(datas, output)
        return
    table = Table(title="runs compared")
    table.add_column("")
    for data in datas:
        table.add_column(f"run {data.id}\n{data.name}", justify="right")
    rows: list[tuple[str, list[str]]] = []

    def add(label: str, values: list[str]) -> None:
        rows.append((label, values))

    summaries = [data.summary for data in datas]
    add("seed / phase", [f"{d.seed} / {d.phase}" for d in datas])
    for key, label in (("requests_arrived", "requests arrived"), ("requests_completed", "completed")):
        add(label, [f"{s.get(key, 0):,}" for s in summaries])
    add("failed", [f"{s.get('requests_failed', 0):,} ({_rate(s)})" for s in summaries])
    for p in (50, 95, 99):
        add(f"latency p{p}", [_ms(s.get(f"latency_p{p}_ns")) for s in summaries])
    add("CPU of request (HPA's view)", [_share(s.get("cpu_request_utilisation")) for s in summaries])
    add("CPU of nodes' allocatable", [_share(s.get("node_cpu_utilisation")) for s in summaries])
    add("replicas started (bound)", [f"{s.get('replicas_started', 0):,}" for s in summaries])
    costs = [analysis.cost(data) for data in datas]
    add("pod-hours (billed)", [f"{c['replica_hours']:.2f}" for c in costs])
    add(
        "CPU core-h (requested / used)",
        [
            f"{c['cpu_core_hours']:.2f} ({c['cpu_core_request_hours']:.2f} / {c['cpu_core_usage_hours']:.2f})"
            for c in costs
        ],
    )
    if any(c["ram_byte_hours"] for c in costs):
        add("memory GiB-hours requested", [f"{c['ram_byte_hours'] / 2**30:.2f}" for c in costs])
    if any(c["node_hours"] is not None for c in costs):
        add("node-hours", ["-" if c["node_hours"] is None else f"{c['node_hours']:.2f}" for c in costs])
    limited = [analysis.limits(data) for data in datas]
    for key, label in (("at_max_replicas", "time at maxReplicas"), ("pods_pending", "time with pods Pending")):
        if any(figures[key] for figures in limited):
            add(label, [_share(figures[key]) for figures in limited])
    verdicts = []
    judgements: list[dict[str, Any] | None] = []
    for data in datas:
        judged = objectives(data, slo_latency, slo_percentile, slo_error_rate)
        if judged is None:
            verdicts.append("no SLO")
            judgements.append(None)
            continue
        result = analysis.slo_summary(data, **judged)
        judgements.append(result)
        fraction = result["compliant_fraction"]
        verdicts.append(
            f"{slo_verdict(result)}: p{judged['percentile']} <= {judged['latency_ms']:g} ms in "
            f"{'-' if fraction is None else f'{fraction:.0%}'} of intervals"
        )
    add("SLO", verdicts)
    add("digest", [data.digest or "-" for data in datas])
    if output in ("json", "yaml"):  # each run's own figures, unrounded, as `show -o json` names them
        print_document(
            [
                {"run": d.id, "name": d.name, "seed": d.seed, "phase": d.phase, "digest": d.digest}
                | {"summary": d.summary, "cost": c, "limits": lim, "slo": slo}
                for d, c, lim, slo in zip(datas, costs, limited, judgements, strict=True)
            ],
            output,
        )
        return
    if output == "csv":
        print_csv(["", *(f"run {data.id} {data.name}" for data in datas)], ([label, *values] for label, values in rows))
        return
    for label, values in rows:
        table.add_row(label, *values)
    out.print(table)


def _compare_batches(datas: list[RunData], output: str) -> None:
    """Batch replays side by side: their jobs (or pods), waits, preemptions and allocation."""
    if output in ("json", "yaml"):
        print_document(
            [
                {"run": d.id, "name": d.name, "seed": d.seed, "phase": d.phase, "digest": d.digest}
                | {"batch": d.documents["batch"]}
                for d in datas
            ],
            output,
        )
        return
    rows = [(label, [batch_figure(d.documents["batch"], key) for d in datas]) for key, label in BATCH_FIGURES]
    rows.append(("digest", [d.digest or "-" for d in datas]))
    rows.insert(1, ("seed / phase", [f"{d.seed} / {d.phase}" for d in datas]))
    if output == "csv":
        print_csv(["", *(f"run {data.id} {data.name}" for data in datas)], ([label, *values] for label, values in rows))
        return
    table = Table(title="batch replays compared")
    table.add_column("")
    for data in datas:
        table.add_column(f"run {data.id}\n{data.name}", justify="right")
    for label, values in rows:
        table.add_row(label, *values)
    out.print(table)


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _rate(summary: dict[str, Any]) -> str:
    finished = summary.get("requests_completed", 0) + summary.get("requests_failed", 0)
    return "-" if not finished else f"{summary.get('requests_failed', 0) / finished:.2%}"


def _ms(ns: float | None) -> str:
    return "-" if ns is None else f"{ns / 1e6:,.1f} ms"


@click.command(context_settings=TAKES_RUNS)
@click.argument("run")
@click.option("--format", "fmt", type=click.Choice(["parquet", "csv"]), default="parquet", show_default=True)
@to_option("The folder to write (default run-<id>-<name>); it must not exist yet.", folder=True)
@output_option(to=True)
@store_option
def export(run: str, fmt: str, to: Path | None, store: Path | None) -> None:
    """Export a stored RUN's tables (series, replica_series, replicas, timeline, summary; with a cluster
    also pods, nodes, attempts and kep140.json; a batch replay's jobs) to a folder."""
    data = load_run(run_store(store), run)
    folder = to or Path(f"run-{data.id}-{re.sub(r'[^A-Za-z0-9._-]+', '_', data.name).strip('.')}")
    if folder.exists():
        raise SkenarioError("the output folder exists already; name another with --to", value=str(folder))
    if not folder.resolve().parent.is_dir():
        raise SkenarioError("no such directory for the output folder", value=str(folder.parent))
    timeline = data.timeline.assign(detail=data.timeline["detail"].map(json.dumps))
    tables = {
        "series": data.series.reset_index(),
        "replica_series": data.replica_series,
        "replicas": data.replicas,
        "timeline": timeline,
    }
    # A run with a cluster: its pods, nodes and scheduling attempts, and KEP-140's per-pod results.
    tables.update({name: data.table(name) for name in ("pods", "nodes", "attempts") if name in data.documents})
    # A batch replay: one row per job or workload (its series holds each queue's figures).
    if "batch" in data.documents:
        tables |= {"series": tables["series"].dropna(axis=1, how="all"), "jobs": data.table("jobs")}
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.resolve().parent))
    try:
        for name, frame in tables.items():
            if fmt == "csv":
                frame.to_csv(staging / f"{name}.csv", index=False)
            else:
                frame.to_parquet(staging / f"{name}.parquet", index=False)
        summary = {"run": data.id, "name": data.name, "seed": data.seed, "phase": data.phase, **data.summary}
        summary |= {"batch": data.documents["batch"]} if "batch" in data.documents else {}
        (staging / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        (staging / "scenario.yaml").write_text(data.scenario)
        if "kep140" in data.documents:
            (staging / "kep140.json").write_text(json.dumps(data.documents["kep140"], indent=1) + "\n")
        staging.chmod(0o755)  # mkdtemp makes it private; an export is for sharing
        staging.rename(folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    out.print(f"wrote {', '.join(sorted(p.name for p in folder.iterdir()))} to {folder}", highlight=False)


def _to_option(what: str, suffix: str) -> Callable[[F], F]:
    """`--to FILE` (and the old `-o FILE`, hidden): the file a command writes, by default run-<id>.`suffix`."""
    to = to_option(f"{what} (default run-<id>.{suffix}).")
    return lambda command: to(output_option(to=True)(command))


@click.command(context_settings=TAKES_RUNS)
@click.argument("run")
@_to_option("The PNG to write", "png")
@store_option
def plot(run: str, to: Path | None, store: Path | None) -> None:
    """Plot a stored RUN to a PNG: replicas, requests, latency, CPU, with its events marked."""
    from skenario.results.plot import plot_run  # matplotlib: only for this command

    data = load_run(run_store(store), run)
    path = _output_path(to, data, "png")
    plot_run(data, path)
    out.print(f"wrote {path}", highlight=False)


@click.command(context_settings=TAKES_RUNS)
@click.argument("run")
@_to_option("The HTML page to write", "html")
@store_option
@slo_options
def report(
    run: str,
    to: Path | None,
    store: Path | None,
    slo_latency: str | None,
    slo_percentile: str | None,
    slo_error_rate: float | None,
) -> None:
    """Write a stored RUN as one self-contained HTML page with interactive charts."""
    from skenario.results.report import write_report  # plotly: only for this command

    data = load_run(run_store(store), run)
    path = _output_path(to, data, "html")
    judged = objectives(data, slo_latency, slo_percentile, slo_error_rate)
    write_report(data, path, objectives=judged)
    out.print(f"wrote {path}", highlight=False)


def _output_path(to: Path | None, data: RunData, suffix: str) -> Path:
    path = to or Path(f"run-{data.id}.{suffix}")
    if not path.resolve().parent.is_dir():
        raise SkenarioError("no such directory", value=str(path.parent))
    return path
