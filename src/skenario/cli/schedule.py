"""`skenario schedule`: replay a batch trace of pods through the scheduler on the event clock."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path

import click
import yaml
from rich.markup import escape

from skenario.cli.common import (
    check_output_dirs,
    err,
    out,
    output_option,
    plugin_options,
    print_json,
    store_option,
)
from skenario.cli.scheduling import (
    JOB_COLUMNS,
    KUEUE_QUEUE_COLUMNS,
    QUEUE_COLUMNS,
    WORKLOAD_COLUMNS,
    batch_table,
    write_jobs_csv,
    write_results,
)
from skenario.cli.store import run_store
from skenario.core.time import parse_duration
from skenario.errors import Halt, SkenarioError
from skenario.results.podresults import ResultsFile
from skenario.results.store import check_label
from skenario.runs import BatchRun, Executed, Stopped, execute
from skenario.runs.batch import open_batch, replay_document
from skenario.scenario.format.scenario import MAX_SEED
from skenario.scenario.io import yaml_documents
from skenario.scheduling.attempts import PLUGIN_RESULTS, PluginResults
from skenario.scheduling.replay import BatchReplay
from skenario.scheduling.traces import TRACE_KINDS


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
    help="With a queue scheduler: write one row per job (YARN) or workload (Kueue), with its wait and why (CSV).",
)
@click.option("--no-store", is_flag=True, help="Do not keep the replay in the run store.")
@click.option("--name", default=None, help="A name to refer to the replay by in the store.")
@click.option("--tag", "tags", multiple=True, help="A tag to find the replay by; may be given again.")
@store_option
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
    no_store: bool,
    name: str | None,
    tags: tuple[str, ...],
    store: Path | None,
    output: str,
) -> None:
    """Replay TRACE on its nodes: its pods with kube-scheduler (--scheduler's profile, Kueue's admission
    with --kueue), or an SLS trace's jobs under YARN's Capacity or Fair Scheduler; keep it in the run store.

    The replay is kept as a `kind: BatchReplay` document of these options, so `skenario show`,
    `export`, `report` and `explain --job` read it and `skenario run` can run it again. Attempts are
    written to --results as they happen, so memory does not grow with them.
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
    yarn = capacity_file is not None or fair_file is not None
    if yarn and kind not in ("sls", "synth"):
        option = "--capacity-scheduler" if capacity_file is not None else "--fair-scheduler"
        raise SkenarioError(
            f"{option} replays YARN jobs: give an SLS trace with --format sls (or synth)", field="--format", value=kind
        )
    if queues_file is not None and not yarn and kueue_file is None:
        raise SkenarioError(
            "--queues is written by a queue scheduler: give --capacity-scheduler, --fair-scheduler or --kueue",
            field="--queues",
        )
    if why and not yarn and kueue_file is None:
        raise SkenarioError("--why explains YARN jobs and Kueue workloads: give a scheduler or --kueue", field="--why")
    if jobs_file is not None and not yarn and kueue_file is None:
        raise SkenarioError(
            "--jobs is written by a queue scheduler's replay: give --capacity-scheduler, --fair-scheduler or --kueue",
            field="--jobs",
        )
    if no_plugin_results or results_file is None:
        plugin_results = "none"  # nothing would show them
    elif plugin_results is None:
        plugin_results = "unschedulable" if results_for else "all"
    if yarn and (hold or any(o is not None for o in (scheduler_file, heartbeat_delay, pods_file, results_file))):
        raise SkenarioError(
            "--scheduler, --hold, --heartbeat-delay, --pods and --results are kube-scheduler's: a YARN scheduler "
            "places the jobs (--jobs and --queues write what it did)",
            field="--capacity-scheduler" if capacity_file is not None else "--fair-scheduler",
        )
    if name is not None:
        check_label(name, "--name")
    for tag in tags:
        check_label(tag, "--tag")
    document = replay_document(
        trace,
        kind=kind,
        nodes=nodes,
        seed=seed,
        until=_checked(until, "--until"),
        heartbeat=_checked(heartbeat, "--heartbeat"),
        heartbeat_delay=_checked(heartbeat_delay, "--heartbeat-delay", zero=True),
        hold=hold,
        scheduler=scheduler_file,
        capacity=capacity_file,
        fair=fair_file,
        site=site_file,
        kueue=kueue_file,
    )
    text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
    started = time.perf_counter()  # the trace read and the replay: what `wallSeconds` says
    run = open_batch(
        yaml_documents(text, str(trace)),
        file=trace,
        text=text,
        base_dir=Path.cwd(),
        plugin_results=plugin_results,
        results_for=results_for,
    )
    kept = None if no_store else run_store(store)
    replay = run.replay
    with ResultsFile(results_file) if results_file is not None else nullcontext() as spilled:
        if spilled is not None and isinstance(replay, BatchReplay):
            spilled.follow(replay.controller)
        try:
            done = execute(run, kept, scenario_file=None, name=name, tags=tags)
        except Stopped as stopped:
            err.print(f"[bold red]{escape(str(stopped))}[/]", highlight=False, soft_wrap=True, markup=True)
            raise Halt(stopped.exit_code) from None
        if isinstance(replay, BatchReplay):
            write_results(replay.controller, pods_file, results_file, spilled)
    wall = time.perf_counter() - started
    reasons = _reasons(run.why, why)
    if jobs_file is not None:
        write_jobs_csv(run.jobs(), jobs_file, JOB_COLUMNS if run.yarn else WORKLOAD_COLUMNS)
    if queues_file is not None:
        columns = QUEUE_COLUMNS if run.yarn else KUEUE_QUEUE_COLUMNS
        write_jobs_csv(run.queue_rows(), queues_file, columns)
    _render(run, done, wall, trace=trace, kind=kind, seed=seed, reasons=reasons, output=output)


def _render(
    run: BatchRun,
    done: Executed,
    wall: float,
    *,
    trace: Path,
    kind: str,
    seed: int,
    reasons: dict[str, str],
    output: str,
) -> None:
    """The replay's summary: a table, or one JSON or YAML document; `wall`: seconds from reading the trace."""
    batch = run.batch_summary()
    if output in ("json", "yaml"):
        document = batch["summary"] | {"wallSeconds": wall, "trace": str(trace), "run": done.run_id}
        extra_document = ({"kueue": batch["kueue"]} if "kueue" in batch else {}) | ({"why": reasons} if reasons else {})
        print_json(document | extra_document, output)
        return
    extra = [("simulated time", f"{run.simulated() / 86400e9:,.1f} days"), ("wall time", f"{wall:,.2f} s")]
    extra.extend((f"why {name}", reason) for name, reason in reasons.items())
    names = {"CapacityScheduler": "Capacity Scheduler", "FairScheduler": "Fair Scheduler"}
    out.print(batch_table(batch, title=f"{trace.name} ({names.get(run.scheduler, kind)}, seed {seed})", extra=extra))
    if done.run_id is not None:
        out.print(f"stored as run [bold]{done.run_id}[/] in {escape(str(done.store))}", highlight=False, markup=True)


def _reasons(explain: Callable[[str], str], names: tuple[str, ...]) -> dict[str, str]:
    """Each name's reason; a name the run does not know is a user's mistake (exit 2)."""
    out = {}
    for name in names:
        try:
            out[name] = explain(name)
        except KeyError as exc:
            raise SkenarioError(str(exc.args[0]), field="--why", value=name) from None
    return out


def _checked(value: str | None, option: str, *, zero: bool = False) -> str | None:
    """A duration option as given, once it reads as one (a mistake names the option, not the document's field)."""
    if value is None:
        return None
    try:
        duration = parse_duration(value)
    except ValueError as exc:
        raise SkenarioError(str(exc), field=option, value=value) from None
    if duration < 0 or (duration == 0 and not zero):
        raise SkenarioError(f"{option} must be more than 0", field=option, value=value)
    return value
