"""`skenario validate`: the simulator against queueing theory on standard models, with 95% intervals."""

from __future__ import annotations

import sys

import click
from rich.table import Table
from rich.text import Text

from skenario.cli.common import err, out, output_option, print_csv, print_json
from skenario.errors import SkenarioError
from skenario.validation.models import standard_models
from skenario.validation.replications import Comparison, compare, replicate, widen_together


def _verdict(c: Comparison) -> str:
    if c.exact:
        if c.inside:
            return "[green]inside[/]"
        if c.inside_together:
            return f"[yellow]outside by chance?[/] ({c.error:+.2%}; inside the simultaneous interval)"
        return f"[bold red]OUTSIDE[/] ({c.error:+.2%}, even the simultaneous interval)"
    if c.inside:
        return "approximation, inside"
    return f"[yellow]approximation, off by {c.error:+.2%}[/]"


@click.command("theory")  # its name where the CLI is listed (docs/reference/cli.md); `validate` is an alias
@click.option("--replications", type=click.IntRange(min=2), default=20, show_default=True, help="Runs per model.")
@click.option("--seed", type=click.IntRange(min=0), default=1, show_default=True, help="Seed of every random stream.")
@click.option(
    "--length",
    type=click.FloatRange(min=0.01),
    default=1.0,
    show_default=True,
    help="Scale each replication's measured length (1 = 20,000 model seconds for most models).",
)
@click.option("--model", "only", multiple=True, help="Only this model (repeatable); see the table for names.")
@output_option("table", "wide", "json", "yaml", "csv")
def validate(replications: int, seed: int, length: float, only: tuple[str, ...], output: str) -> None:
    """Simulate standard queueing models and set each analytic value beside the simulated 95% interval.

    Each value's own 95% interval misses about once in 20 by chance, so with twenty-odd exact
    values one miss is no evidence of a fault. Exits 1 if an exact value falls outside its
    simultaneous interval (Bonferroni: all exact values' intervals hold together with 95%
    confidence), which is.
    """
    models = standard_models()
    known = [m.name for m in models]
    unknown = [name for name in only if name not in known]
    if unknown:
        raise SkenarioError(f"unknown model {unknown[0]!r}; models: {', '.join(known)}")
    comparisons: list[Comparison] = []
    with out.status("simulating") as status:
        for model in models:
            if only and model.name not in only:
                continue
            status.update(f"simulating {model.name} ({replications} replications)")
            comparisons += compare(model, replicate(model, replications=replications, seed=seed, scale=length))
    comparisons = widen_together(comparisons)
    failed = [c for c in comparisons if c.exact and not c.inside_together]
    if output in ("json", "yaml"):
        print_json([comparison_dict(c) for c in comparisons], output)
    elif output == "csv":
        records = [comparison_dict(c) for c in comparisons]
        print_csv(list(records[0]) if records else [], ([*r.values()] for r in records))
    else:
        _print(comparisons, replications, seed)
    if failed:
        err.print(f"{len(failed)} exact analytic value(s) outside even the simultaneous 95% interval", highlight=False)
        sys.exit(1)


def _print(comparisons: list[Comparison], replications: int, seed: int) -> None:
    out.print(comparison_table(comparisons, f"Simulation ({replications} replications, seed {seed}) against theory"))
    exact = [c for c in comparisons if c.exact]
    approximate = [c for c in comparisons if not c.exact]
    inside = sum(c.inside for c in exact)
    together = sum(c.inside_together for c in exact)
    out.print(
        f"Exact methods: {inside} of {len(exact)} values inside their own 95% interval "
        f"(about {0.05 * len(exact):.1f} misses expected by chance), {together} of {len(exact)} inside the "
        f"simultaneous 95% intervals. Approximations: {sum(not c.inside for c in approximate)} of "
        f"{len(approximate)} outside their interval.",
        highlight=False,
    )


def comparison_table(comparisons: list[Comparison], title: str) -> Table:
    """Analytic values beside the simulated intervals, one row per value and method."""
    table = Table(title=title, title_justify="left")
    for name, justify in (("model", "left"), ("quantity", "left"), ("method", "left"), ("analytic", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    table.add_column("simulated, 95% interval", justify="right")
    table.add_column("verdict")
    previous = None
    for c in comparisons:
        interval = f"{c.simulated.mean:.4f} ± {c.simulated.half_width:.4f}"
        model = c.model if c.model != previous else ""
        table.add_row(model, c.quantity, c.method, f"{c.analytic:.4f}", interval, Text.from_markup(_verdict(c)))
        previous = c.model
    return table


def comparison_dict(c: Comparison) -> dict[str, object]:
    return {
        "model": c.model,
        "quantity": c.quantity,
        "method": c.method,
        "exact": c.exact,
        "analytic": c.analytic,
        "simulatedMean": c.simulated.mean,
        "halfWidth": c.simulated.half_width,
        "replications": c.simulated.replications,
        "inside": c.inside,
        "insideSimultaneous": c.inside_together,
        "relativeError": c.error,
    }
