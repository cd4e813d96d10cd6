"""A sweep or study as the dashboard shows it (the table `skenario sweeps show` prints, and a Pareto front), and a
calibration as the replays of its scenarios show it.

The table is `sweeps.api.table_document` of the stored sweep (each point's settings, and each
figure's mean and 95% interval over its seeds), with the runs each point made, so a click on a
point opens its run. The front is drawn over two figures the page picks (a study's objectives unless it picks
others), from the points' means: each in its objective's direction, else minimised (SLO compliance
and met, the figures more of which is better, maximised).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skenario.errors import SkenarioError
from skenario.results.rundata import RunData
from skenario.results.store import RunStore
from skenario.sweeps import api
from skenario.sweeps.runner import METRICS
from skenario.web.views import pareto_mask, safe

MAXIMISED = frozenset({"slo_met", "slo_compliance"})
"""Figures where more is better: the front maximises them."""
DEFAULT_AXES = ("p99_ms", "replica_hours")
"""The front's figures unless the page or the study says: latency against what it cost in pods."""


def sweep_view(store: RunStore, ref: str, baseline: int | None, x: str | None, y: str | None) -> dict[str, Any]:
    """The sweep's table, its runs by point, and which points are on the front over figures `x` and `y`."""
    stored = api.stored_sweep(store, ref)
    table = stored.points(baseline)
    document = api.table_document(table, stored, baseline)
    record = stored.record
    runs: dict[int, list[int]] = {}
    for done in record["runs_done"]:
        if done["run"] is not None:
            runs.setdefault(int(done["point"]), []).append(int(done["run"]))
    present = [m for m in METRICS if any(p["figures"][m]["mean"] is not None for p in document["points"])]
    directions = _directions(record)
    first, second = _axes(list(directions), present, x, y)
    coordinates = [
        [
            _minimised(point["figures"][metric]["mean"], directions.get(metric, _direction(metric)))
            for metric in (first, second)
        ]
        for point in document["points"]
    ]
    front = pareto_mask(coordinates)
    for point, on_front in zip(document["points"], front, strict=True):
        point["runs_made"] = runs.get(point["point"], [])
        point["front"] = on_front
    head = {k: record[k] for k in ("sweep", "kind", "name", "scenario", "phase", "message", "started_at")}
    return safe(document | head | {"metrics": present, "axes": [first, second]})


def _directions(record: dict[str, Any]) -> dict[str, str]:
    """A study's objectives (`min:replica_hours`, `max:slo_compliance`) as figure -> min or max; none for a sweep."""
    objectives = (record.get("options") or {}).get("objectives") or []
    found = {}
    for objective in objectives:
        direction, _, metric = str(objective).rpartition(":")
        found[metric] = direction or _direction(metric)
    return found


def _direction(metric: str) -> str:
    return "max" if metric in MAXIMISED else "min"


def _axes(named: list[str], present: list[str], x: str | None, y: str | None) -> tuple[str, str]:
    """The front's two figures: as asked, else a study's first two objectives, else DEFAULT_AXES (those present)."""
    chosen = [a for a in (x, y) if a is not None]
    for field, axis in (("x", x), ("y", y)):
        if axis is not None and axis not in METRICS:
            raise SkenarioError(f"no such figure; the figures are {', '.join(METRICS)}", field=field, value=axis)
    for fallback in (*named, *DEFAULT_AXES, *present):
        if len(chosen) == 2:
            break
        if fallback in METRICS and fallback not in chosen and (fallback in present or fallback in named):
            chosen.append(fallback)
    while len(chosen) < 2:
        chosen.append(DEFAULT_AXES[len(chosen)])
    return chosen[0], chosen[1]


def _minimised(value: float | None, direction: str) -> float | None:
    return None if value is None else (-value if direction == "max" else value)


def calibration_view(store: RunStore, run: RunData) -> dict[str, Any] | None:
    """A replayed run's calibration, if its scenario is a calibrated one (`skenario calibrate` wrote it): the
    fitted values, and every stored replay of the scenarios calibrated together with the same values, each
    with its trajectory error, in-sample (a scenario the fit saw) or held out. None if it is not calibrated."""
    header = api.read_calibrated_header(run.scenario)
    if header is None:
        return None
    files = {name: "in-sample" for name in header.fitted_on} | {name: "held-out" for name in header.held_out}
    calibrated = {Path(name).stem + ".calibrated.yaml": name for name in files}
    replays = []
    for record in store.runs():
        written = Path(str(record.get("scenario_file") or "")).name
        if written not in calibrated or record["phase"] != "Completed":
            continue
        data = run if record["run"] == run.id else store.load(record["run"])
        found = api.read_calibrated_header(data.scenario)
        replay = data.documents.get("replay", {}).get("replicas")
        if found is None or found.values != header.values or replay is None:
            continue
        name = calibrated[written]
        replays.append(
            {
                "run": record["run"],
                "scenario": name,
                "set": files[name],
                "replica_mae": replay.get("mae"),
                "replica_seconds_error_pct": replay.get("replica_seconds_error_pct"),
                "decision_match": replay.get("decision_match"),
            }
        )
    return safe(
        {
            "file": header.file,
            "values": header.values,
            "fitted_on": header.fitted_on,
            "held_out": header.held_out,
            "replays": replays,
        }
    )
