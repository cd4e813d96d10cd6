"""`skenario schedule`: replay a batch trace of pods through the scheduler on the event clock."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path

import click

from skenario.cli.common import check_output_dirs, out, output_option, plugin_options, print_json
from skenario.cli.scheduling import (
    KUEUE_QUEUE_COLUMNS,
    QUEUE_COLUMNS,
    capacity_table,
    kueue_rows,
    scheduling_table,
    write_jobs_csv,
    write_results,
)
from skenario.core.time import parse_duration
from skenario.errors import SkenarioError
from skenario.results.podresults import ResultsFile
from skenario.runs import TraceOptions, open_run
from skenario.scenario.format.scenario import MAX_SEED
from skenario.scheduling.attempts import PLUGIN_RESULTS, PluginResults
from skenario.scheduling.queues.capacity_config import CapacityConfig, read_capacity_config
from skenario.scheduling.queues.fair_config import FairConfig, read_fair_config, with_site
from skenario.scheduling.queues.yarn_replay import YarnReplay
from skenario.scheduling.replay import BatchReplay
from skenario.scheduling.traces import TRACE_KINDS
from skenario.scheduling.traces.sls import SlsTrace


@click.command()
@click.argument("trace", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--format", "kind", type=click.Choice(TRACE_KINDS), default="csv", show_default=True, help="The trace's format."
)
@click.option(
    "--nodes",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The node list (SLS node file, openb node CSV, or a node CSV).",
)
@click.option(
    "--scheduler",
    "scheduler_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="A YAML file with a scenario's `scheduler` section.",
)
@click.option(
    "--seed",
    type=click.IntRange(0, MAX_SEED),
    default=0,
    show_default=True,
    help="Seeds the tie-break and the heartbeat phases.",
)
@click.option(
    "--hold",
    is_flag=True,
    help="Pods stay once bound (pack the cluster), instead of leaving after their trace lifetime.",
)
@click.option(
    "--until", default=None, help="Stop at this simulated time, such as '30d'; default: when the last pod ends."
)
@click.option(
    "--heartbeat",
    default=None,
    help="Node heartbeat interval, such as '1s' (YARN SLS's default); overrides the scheduler file.",
)
@click.option("--heartbeat-delay", default=None, help="How long a heartbeat takes to arrive, such as '100ms'.")
@click.option(
    "--plugin-results",
    type=click.Choice(PLUGIN_RESULTS),
    default=None,
    help="Which attempts write every plugin's verdict and score to --results: all (the default), or with "
    "--results-for, unschedulable (the default then) or none, beside the pods named.",
)
@click.option(
    "--results-for",
    "results_for",
    multiple=True,
    metavar="NAME",
    help="A pod name or shell pattern ('job-7-*') whose every attempt keeps its plugin results; repeatable.",
)
@click.option("--no-plugin-results", is_flag=True, help="The same as --plugin-results none.")
@click.option(
    "--pods",
    "pods_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write one row per pod (CSV).",
)
@click.option(
    "--results",
    "results_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write KEP-140's PodResults and the timeline (JSON).",
)
@click.option(
    "--capacity-scheduler",
    "capacity_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Replay an SLS trace (--format sls) through YARN's Capacity Scheduler, read from this capacity-scheduler.xml.",
)
@click.option(
    "--fair-scheduler",
    "fair_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Replay an SLS trace (--format sls) through YARN's Fair Scheduler, read from this fair-scheduler.xml.",
)
@click.option(
    "--yarn-site",
    "site_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="With --fair-scheduler: yarn-site.xml's switches (yarn.scheduler.fair.preemption, assignmultiple).",
)
@click.option(
    "--kueue",
    "kueue_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Kueue's manifests (ResourceFlavor, ClusterQueue, LocalQueue): pods naming a LocalQueue wait for admission.",
)
@click.option(
    "--queues",
    "queues_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="With a queue scheduler: write each queue's allocation, pending demand and jobs over time (CSV).",
)
@click.option(
    "--why",
    "why",
    multiple=True,
    metavar="NAME",
    help="Say why a job (YARN) or workload (Kueue) has not started or finished by the end; repeatable.",
)
@click.option(
    "--jobs",
    "jobs_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="With --capacity-scheduler or --fair-scheduler: write one row per job (CSV).",
)
@output_option("table", "wide", "json", "yaml")
@plugin_options
def schedule(
    trace: Path,
    kind: str,
    nodes: Path | None,
    scheduler_file: Path | None,
    seed: int,
    hold: bool,
    until: str | None,
    heartbeat: str | None,
    heartbeat_delay: str | None,
    plugin_results: PluginResults | None,
    results_for: tuple[str, ...],
    no_plugin_results: bool,
    pods_file: Path | None,
    results_file: Path | None,
    capacity_file: Path | None,
    fair_file: Path | None,
    site_file: Path | None,
    kueue_file: Path | None,
    queues_file: Path | None,
    why: tuple[str, ...],
    jobs_file: Path | None,
    output: str,
) -> None:
    """Replay the pods of TRACE on its nodes with kube-scheduler's default profile (or --scheduler's).

    Attempts are written to --results as they happen, so memory does not grow with them.
    """
    check_output_dirs(
        ("--pods", pods_file), ("--results", results_file), ("--jobs", jobs_file), ("--queues", queues_file)
    )
    if capacity_file is not None and fair_file is not None:
        raise SkenarioError("give --capacity-scheduler or --fair-scheduler, not both", field="--fair-scheduler")
    if (capacity_file is not None or fair_file is not None) and kueue_file is not None:
        raise SkenarioError(
            "--kueue admits pods for kube-scheduler; a YARN scheduler places jobs itself: give one of them",
            field="--kueue",
        )
    if site_file is not None and fair_file is None:
        raise SkenarioError(
            "--yarn-site sets the Fair Scheduler's switches: give --fair-scheduler", field="--yarn-site"
        )
    if capacity_file is not None or fair_file is not None:
        files = (capacity_file, fair_file, site_file)
        _yarn(trace, kind, nodes, files, seed, until, heartbeat, jobs_file, queues_file, why, output)
        return
    if queues_file is not None and kueue_file is None:
        raise SkenarioError(
            "--queues is written by a queue scheduler: give --capacity-scheduler, --fair-scheduler or --kueue",
            field="--queues",
        )
    if why and kueue_file is None:
        raise SkenarioError("--why explains YARN jobs and Kueue workloads: give a scheduler or --kueue", field="--why")
    if jobs_file is not None:
        raise SkenarioError(
            "--jobs is written by a YARN scheduler's replay: give --capacity-scheduler or --fair-scheduler",
            field="--jobs",
        )
    if no_plugin_results or results_file is None:
        plugin_results = "none"  # nothing would show them
    elif plugin_results is None:
        plugin_results = "unschedulable" if results_for else "all"
    options = TraceOptions(
        kind=kind,
        nodes=nodes,
        scheduler_file=scheduler_file,
        hold=hold,
        until=until,
        heartbeat=heartbeat,
        heartbeat_delay=heartbeat_delay,
        plugin_results=plugin_results,
        results_for=results_for,
        keep_timeline=False,  # counted; with --results, spilled to disk as it happens
        kueue=kueue_file,
    )
    started = time.perf_counter()
    replay = open_run(trace, seed=seed, trace=options)
    assert isinstance(replay, BatchReplay)
    with ResultsFile(results_file) if results_file is not None else nullcontext() as spilled:
        if spilled is not None:
            spilled.follow(replay.controller)
        summary = replay.run()
        wall = time.perf_counter() - started
        write_results(replay.controller, pods_file, results_file, spilled)
    kueue = replay.admission.summary() if replay.admission is not None else None
    reasons = _reasons(replay.admission.why, why) if replay.admission is not None else {}
    if queues_file is not None and replay.admission is not None:
        write_jobs_csv(replay.admission.queue_rows(), queues_file, KUEUE_QUEUE_COLUMNS)
    if output in ("json", "yaml"):
        document = summary.as_dict() | {"wallSeconds": wall, "trace": str(trace)}
        extra_document = ({"kueue": kueue} if kueue is not None else {}) | ({"why": reasons} if reasons else {})
        print_json(document | extra_document, output)
        return
    simulated = replay.end / 1e9
    extra = [("simulated time", f"{simulated / 86400:,.1f} days"), ("wall time", f"{wall:,.2f} s")]
    if kueue is not None:
        extra.extend(kueue_rows(kueue))
    extra.extend((f"why {name}", reason) for name, reason in reasons.items())
    out.print(scheduling_table(summary, title=f"{trace.name} ({kind}, seed {seed})", extra=extra))


def _yarn(
    trace: Path,
    kind: str,
    nodes: Path | None,
    files: tuple[Path | None, Path | None, Path | None],
    seed: int,
    until: str | None,
    heartbeat: str | None,
    jobs_file: Path | None,
    queues_file: Path | None,
    why: tuple[str, ...],
    output: str,
) -> None:
    """The SLS trace's jobs through YARN's Capacity or Fair Scheduler (`skenario.scheduling.queues`);
    `files`: capacity-scheduler.xml, fair-scheduler.xml and yarn-site.xml, as given."""
    capacity_file, fair_file, site_file = files
    option = "--capacity-scheduler" if capacity_file is not None else "--fair-scheduler"
    if kind != "sls":
        message = f"{option} replays YARN jobs: give an SLS trace with --format sls"
        raise SkenarioError(message, field="--format", value=kind)
    config: CapacityConfig | FairConfig
    if capacity_file is not None:
        config = read_capacity_config(capacity_file)
    else:
        assert fair_file is not None
        config = read_fair_config(fair_file)
        if site_file is not None:
            config = with_site(config, site_file)
    started = time.perf_counter()
    reader = SlsTrace(trace, nodes)
    interval = _duration(heartbeat, "--heartbeat")
    replay = YarnReplay(
        reader.jobs,
        reader.nodes(),
        config,
        seed=seed,
        nm_heartbeat=interval if interval is not None else 1_000_000_000,
        until=_duration(until, "--until"),
        trace_file=str(trace),
    )
    summary = replay.run(replay.until)
    wall = time.perf_counter() - started
    reasons = _reasons(replay.why, why)
    if jobs_file is not None:
        write_jobs_csv(replay.jobs_table(), jobs_file)
    if queues_file is not None:
        write_jobs_csv(replay.queue_rows(), queues_file, QUEUE_COLUMNS)
    if output in ("json", "yaml"):
        document = summary.as_dict() | {"wallSeconds": wall, "trace": str(trace)}
        print_json(document | ({"why": reasons} if reasons else {}), output)
        return
    extra = [("simulated time", f"{replay.end / 86400e9:,.1f} days"), ("wall time", f"{wall:,.2f} s")]
    extra.extend((f"why {name}", reason) for name, reason in reasons.items())
    name = "Capacity Scheduler" if capacity_file is not None else "Fair Scheduler"
    out.print(capacity_table(summary, title=f"{trace.name} ({name}, seed {seed})", extra=extra))


def _reasons(explain: Callable[[str], str], names: tuple[str, ...]) -> dict[str, str]:
    """Each name's reason; a name the run does not know is a user's mistake (exit 2)."""
    out = {}
    for name in names:
        try:
            out[name] = explain(name)
        except KeyError as exc:
            raise SkenarioError(str(exc.args[0]), field="--why", value=name) from None
    return out


def _duration(value: str | None, option: str) -> int | None:
    if value is None:
        return None
    try:
        duration = parse_duration(value)
    except ValueError as exc:
        raise SkenarioError(str(exc), field=option, value=value) from None
    if duration <= 0:
        raise SkenarioError(f"{option} must be more than 0", field=option, value=value)
    return duration
