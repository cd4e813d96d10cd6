"""The documentation's figures about replay and calibration: the calibrated Flink scenarios replayed.

The values are those `skenario calibrate` wrote into examples/calibration/*.calibrated.yaml (the command is on
docs/how-to/calibration.md); the errors are what replaying those files gives now.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml
from figures import ROOT, Examples, block, figure, table_of  # type: ignore[import-not-found]

FOLDER = "examples/calibration"
RUNS = ("hpa-50", "hpa-90", "hpa-70")
FITTED = ("workload.request.cpuTime", "workload.stream.rebalancePause", "workload.launch.containerStart")


def _calibrated(run: str) -> str:
    return f"{FOLDER}/flink-{run}.calibrated.yaml"


def _held_out(run: str) -> bool:
    """What the calibrated file's second line says: the runs the fit never saw."""
    second = (ROOT / _calibrated(run)).read_text().splitlines()[1]
    held = second.split("held out:", 1)[1]
    return f"flink-{run}.yaml" in held


def _replayed(examples: Examples, run: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(examples.cli("replay", _calibrated(run), "--no-store", "-o", "json"))
    return document


def _value(document: dict[str, Any], path: str) -> Any:
    node: Any = document["spec"]
    for part in path.split("."):
        node = node[part]
    return node


@figure("calibration.replay")
def _replay(examples: Examples) -> str:
    store = str(examples.store / "calibration")  # a store of its own: other pages' run numbers stay theirs
    printed = examples.cli("replay", _calibrated("hpa-70"), "--store", store)
    stored = re.search(r"stored as run (\d+)", printed)
    assert stored is not None, printed
    examples.cli("plot", stored[1], "--store", store, "--to", str(examples.work / "calibration-hpa-70.png"))
    examples.files["docs/images/calibration-hpa-70.png"] = examples.work / "calibration-hpa-70.png"
    return block(table_of(printed))


@figure("calibration.fitted")
def _fitted(examples: Examples) -> str:
    values = [yaml.safe_load((ROOT / _calibrated(run)).read_text()) for run in RUNS]
    rows = ["| field | fitted value |", "|---|---|"]
    for path in FITTED:
        found = {str(_value(document, path)) for document in values}
        if len(found) != 1:
            raise ValueError(f"the calibrated scenarios disagree on {path}: {sorted(found)}")
        rows.append(f"| `{path}` | {found.pop()} |")
    return "\n" + "\n".join(rows) + "\n"


@figure("calibration.errors")
def _errors(examples: Examples) -> str:
    rows = [
        "| run | figures are | replica MAE | replica-seconds | scale events observed / simulated / matched "
        "| decisions matched (all / either moved) |",
        "|---|---|---|---|---|---|",
    ]
    for run in RUNS:
        error = _replayed(examples, run)["replicas"]
        rows.append(
            f"| {run} | {'held out' if _held_out(run) else 'in-sample'} | {error['mae']:.2f} "
            f"| {error['replica_seconds_error_pct']:+.1f}% "
            f"| {error['events_observed']} / {error['events_simulated']} / {error['events_matched']} "
            f"| {error['decision_match']:.1%} / {error['decision_match_moving']:.1%} |"
        )
    return "\n" + "\n".join(rows) + "\n"
