"""README figures about single runs: what a run prints, the cluster model's examples, results and sweeps.

Each function is one figure of README.md, registered by the name the README marks it with.
"""

from __future__ import annotations

import json
from typing import Any

from figures import Examples, block, figure, table_of  # type: ignore[import-not-found]


@figure("quickstart")
def _quickstart(examples: Examples) -> str:
    printed = examples.cli("run", "examples/quickstart.yaml", "--no-progress", "--store", str(examples.store / "q"))
    return block(printed.replace(str(examples.store / "q"), ".skenario"))


COMPARE = ("hpa-80", "hpa-50", "hpa-50-fast")


def _compared(examples: Examples) -> dict[str, dict[str, Any]]:
    """The three runs of examples/compare, kept by name as the README tells, and each as `show` reads it."""
    shown = {}
    for name in COMPARE:
        examples.cli("run", f"examples/compare/{name}.yaml", "--name", name, "--no-progress")
        shown[name] = json.loads(examples.cli("show", name, "-o", "json"))
    return shown


@figure("compare")
def _compare(examples: Examples) -> str:
    _compared(examples)
    return block(table_of(examples.cli("compare", *COMPARE)))


@figure("compare.story")
def _compare_story(examples: Examples) -> str:
    runs = _compared(examples)

    def said(name: str) -> str:
        run = runs[name]
        verdict = "met" if run["slo"]["met"] else "missed"
        return (
            f"{run['cost']['replica_hours']:.2f} pod-hours and {verdict} the objective "
            f"(p99 {run['slo']['latency_ms']:.1f} ms, {run['slo']['compliant_fraction']:.0%} of intervals within it)"
        )

    default, fast = runs["hpa-50"], runs["hpa-50-fast"]
    cheaper = "fewer" if fast["cost"]["replica_hours"] < default["cost"]["replica_hours"] else "more"
    change = abs(fast["cost"]["replica_hours"] / default["cost"]["replica_hours"] - 1)
    return (
        f"At 80% the HPA ran {said('hpa-80')}; at 50%, {said('hpa-50')}; with the fast behavior, "
        f"{said('hpa-50-fast')}. The fast behavior used {change:.0%} {cheaper} pod-hours than the default "
        f"behavior at the same target and started {fast['summary']['replicas_started']} replicas against "
        f"{default['summary']['replicas_started']}"
    )
