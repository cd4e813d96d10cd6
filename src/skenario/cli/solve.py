"""`skenario solve FILE`: a queueing model file solved analytically, as a report or JSON."""

from __future__ import annotations

from pathlib import Path

import click

from skenario.cli.common import out, output_option, print_json
from skenario.cli.validate import comparison_dict, comparison_table
from skenario.queueing.modelfile import load_model
from skenario.queueing.network import QueueingModelError
from skenario.queueing.report import report, solution_dict
from skenario.queueing.solution import Method
from skenario.queueing.solve import Priorities
from skenario.validation.models import Analytic, StandardModel
from skenario.validation.network import MemoryConstraint
from skenario.validation.replications import compare, replicate


@click.command()
@click.argument("model_file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--method",
    type=click.Choice([m.value for m in Method]),
    default=None,
    help="canonical (open), exact or approx (closed); default: the file's, else canonical or exact.",
)
@click.option(
    "--priorities",
    type=click.Choice([p.value for p in Priorities]),
    default=None,
    help="How priority centres are solved: formulas (Cobham, preemptive-resume; open only) or shadow.",
)
@output_option("table", "wide", "json", "yaml")
@click.option("--simulate", is_flag=True, help="Also simulate the model and show each value beside its 95% interval.")
@click.option("--replications", type=click.IntRange(min=2), default=10, show_default=True, help="With --simulate.")
@click.option(
    "--length", type=click.FloatRange(min=1), default=20_000, show_default=True, help="Model time per replication."
)
@click.option("--seed", type=click.IntRange(min=0), default=1, show_default=True, help="With --simulate.")
def solve(
    model_file: Path,
    method: str | None,
    priorities: str | None,
    output: str,
    simulate: bool,
    replications: int,
    length: float,
    seed: int,
) -> None:
    """Solve a queueing model file: throughput, response, residence, utilisation and queues.

    With --simulate, `-o json` prints a second document, the comparisons (`-o yaml`: a second YAML document).
    """
    as_json = output in ("json", "yaml")
    model = load_model(model_file)
    written = model.written or model.network
    if simulate:  # before any output: refused, it prints nothing
        for k, centre in enumerate(written.centres):
            if centre.rates:
                raise QueueingModelError(
                    "--simulate runs the system itself, and a centre with rates stands for one: write the "
                    "subsystem's centres (with a memoryConstraint, if that is what the rates come from)",
                    file=str(model_file),
                    field=f"centres.{k}.rates",
                )
    solution = model.solve(method, priorities=priorities)
    if as_json:
        print_json(solution_dict(solution), output)
    else:
        out.print(report(solution), highlight=False, markup=False, soft_wrap=True)
    if simulate:
        label = solution.method.value + (" (approximate)" if not solution.exact else "")
        memory = MemoryConstraint(*model.constraint) if model.constraint is not None else None
        standard = StandardModel(
            written.name,
            "",
            written,
            lambda _: [Analytic(label, solution)],
            duration=length + length / 40,
            warmup=length / 40,
            memory=memory,
        )
        with out.status(f"simulating {replications} replications"):
            comparisons = compare(standard, replicate(standard, replications=replications, seed=seed))
        if as_json:
            if output == "yaml":
                click.echo("---")
            print_json([comparison_dict(c) for c in comparisons], output)
        else:
            out.print(comparison_table(comparisons, f"Simulation ({replications} replications, seed {seed})"))
