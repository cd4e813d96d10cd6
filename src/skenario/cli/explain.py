"""`skenario explain` and `skenario decisions`: why a stored run's replica counts are what they are."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from skenario.cli.common import out, output_option, print_document, store_option
from skenario.cli.runs import load_run
from skenario.cli.store import run_store
from skenario.core.time import format_clock, parse_clock, parse_duration
from skenario.errors import SkenarioError
from skenario.results.rundata import RunData
from skenario.runs.batch import replay_to


@click.command()
@click.argument("run")
@click.option(
    "--at",
    "at",
    default=None,
    help="Explain as of this simulated time (12m30s or 00:12:30, as the tables print it); default the end.",
)
@click.option(
    "--autoscaler", default=None, help="Only this autoscaler (its name in the scenario, or cluster-autoscaler)."
)
@click.option(
    "--job",
    "jobs",
    multiple=True,
    metavar="NAME",
    help="A batch replay's job (YARN) or workload (Kueue): why it waits at --at, in its scheduler's terms; "
    "repeatable. Without it, a replay lists what had not finished.",
)
@store_option
@output_option("table", "wide", "json", "yaml")
def explain(
    run: str, at: str | None, autoscaler: str | None, jobs: tuple[str, ...], store: Path | None, output: str
) -> None:
    """Why RUN's autoscalers did what they did: conditions, inputs and the rule behind each decision.
    For a batch replay, why its jobs or workloads wait.

    RUN is a number, a name, a tag or `latest`.
    """
    from skenario.results.explain import explain as explain_run

    runs_store = run_store(store)
    data = load_run(runs_store, runs_store.resolve(run))
    when = None
    if at is not None:
        try:
            when = parse_clock(at) if ":" in at else parse_duration(at)
        except ValueError as exc:
            raise SkenarioError(str(exc), field="--at", value=at) from None
    if "batch" in data.documents:
        _explain_batch(data, when, jobs, output)
        return
    if jobs:
        raise SkenarioError(f"run {data.id} is not a batch replay: it has no jobs to explain", field="--job")
    explanations = explain_run(data, when, autoscaler)
    if output in ("json", "yaml"):  # the tables' cells as printed, each section's rows under its columns
        document = [
            {"run": data.id, "name": data.name, "autoscaler": e.autoscaler, "kind": e.kind, "at_s": e.at / 1e9}
            | {
                "sections": [
                    {"title": s.title, "rows": [dict(zip(s.columns, row, strict=False)) for row in s.rows]}
                    for s in e.sections
                ]
            }
            for e in explanations
        ]
        print_document(document, output)
        return
    if not explanations:
        out.print(f"run {data.id} ({data.name}) has no autoscaler decisions")
        return
    for explanation in explanations:
        out.print(
            f"[bold]{escape(explanation.autoscaler)}[/] ({explanation.kind}) in run {data.id}, {escape(data.name)}, "
            f"as of {format_clock(explanation.at)}",
            markup=True,
        )
        if not explanation.sections:
            out.print("  no decision yet at that time")
        for section in explanation.sections:
            table = Table(title=section.title, title_justify="left")
            for column in section.columns:
                table.add_column(column)
            for row in section.rows:
                table.add_row(*row)
            out.print(table)


@click.command()
@click.argument("run")
@click.option("--autoscaler", default=None, help="Only this autoscaler's decisions.")
@output_option("csv", "json", "yaml", default="csv")
@store_option
def decisions(run: str, autoscaler: str | None, output: str, store: Path | None) -> None:
    """Every decision of RUN's autoscalers, the raw table: CSV (one column per input) or JSON (nested)."""
    from skenario.results import analysis
    from skenario.results.explain import decision_records

    runs_store = run_store(store)
    data = load_run(runs_store, runs_store.resolve(run))
    records = decision_records(data, autoscaler)  # also refuses an autoscaler the run does not have
    if output in ("json", "yaml"):
        print_document(records, output)
        return
    analysis.decisions(data, autoscaler).reset_index().to_csv(sys.stdout, index=False)


FUTURE = (None, "not submitted yet")
"""What a job not worth listing says: finished (no reason), or not yet in the replay."""


def _explain_batch(data: RunData, when: int | None, jobs: tuple[str, ...], output: str) -> None:
    """Why a stored batch replay's jobs wait: at the end from what the store holds; at `when` by
    replaying the stored document to that moment with the run's seed (the same decisions up to it)."""
    if when is None or when >= data.simulated_ns:  # the end: what the store holds
        rows = data.documents.get("jobs", [])
        at = data.simulated_ns
    else:
        replayed = replay_to(data.scenario, f"run {data.id}", seed=data.seed, until=when)
        rows, at = replayed.jobs(), min(when, replayed.simulated())
    by_name = {str(row.get("job", row.get("workload"))): row for row in rows}
    for name in jobs:
        if name not in by_name:
            raise SkenarioError(f"run {data.id} has no job or workload {name!r}", field="--job", value=name)
    # Without names: every job submitted and not finished by then (those still to come are left out).
    chosen = [by_name[name] for name in jobs] if jobs else [row for row in rows if row.get("why") not in FUTURE]
    if output in ("json", "yaml"):
        print_document({"run": data.id, "name": data.name, "at_s": at / 1e9, "jobs": chosen}, output)
        return
    out.print(f"run {data.id} ({escape(data.name)}) as of {format_clock(at)}", markup=True, highlight=False)
    if not chosen:
        out.print("  every job had finished")
        return
    key = "job" if "job" in chosen[0] else "workload"
    table = Table()
    for column in (key, "queue", "submitted", "first started", "why"):
        table.add_column(column)
    for row in chosen:
        submitted = row.get("submitted_s", row.get("created_s"))
        started = row.get("started_s", row.get("admitted_s"))
        table.add_row(
            str(row[key]),
            str(row.get("queue") or row.get("clusterQueue") or ""),
            _clock(submitted),
            _clock(started),
            str(row.get("why") or row.get("state") or "finished"),
        )
    out.print(table)


def _clock(seconds: float | None) -> str:
    return "-" if seconds is None else format_clock(round(seconds * 1e9))
