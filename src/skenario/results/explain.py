"""Why a replica count is what it is: the autoscalers' decisions of a run, read back and explained.

In the spirit of `kubectl describe hpa`: for an HPA its conditions (AbleToScale, ScalingActive,
ScalingLimited) with the time each took its value, the decision's inputs (each metric's usage,
utilisation, usage over target, unready and missing pods) and the rule that set the result
(`hpa.controller.decision_rule`); for a KPA its panic entries and exits; for a VPA its bounds and
evictions; for the cluster autoscaler its scale-ups, scale-downs and the reasons pods did not
trigger one. Everything comes from the run's timeline, as the run store keeps it, so a run
explains itself long after it ran.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from skenario.core.time import format_duration
from skenario.errors import SkenarioError
from skenario.results.rundata import RunData

DECISION = "Decision"
CONDITIONS = ("AbleToScale", "ScalingActive", "ScalingLimited")
RECENT = 10  # decisions listed under "changes" and "decisions"


@dataclass
class Section:
    """One table of an explanation."""

    title: str
    columns: tuple[str, ...]
    rows: list[tuple[str, ...]] = field(default_factory=list)


@dataclass
class Explanation:
    """What one autoscaler decided up to a time, and why."""

    autoscaler: str
    kind: str
    at: int
    sections: list[Section]


def decision_records(run: RunData, autoscaler: str | None = None) -> list[dict[str, Any]]:
    """Every autoscaler decision of the run (or of the one named), in time order, details nested.

    The flat table of the same decisions is `analysis.decisions`.
    """
    return [
        {"time_s": row["time_ns"] / 1e9, "autoscaler": row["source"], "message": row["message"], **row["detail"]}
        for row in _decision_rows(run, autoscaler)
    ]


def explain(run: RunData, at: int | None = None, autoscaler: str | None = None) -> list[Explanation]:
    """An explanation per autoscaler (or for the one named), as of `at` ns (default: the run's end)."""
    until = run.simulated_ns if at is None else at
    rows = _decision_rows(run, autoscaler)
    names = list(dict.fromkeys(row["source"] for row in rows))
    if not names:
        return []
    out = []
    for name in names:
        mine = [row for row in rows if row["source"] == name and row["time_ns"] <= until]
        kind = _kind(name, [row["detail"] for row in rows if row["source"] == name])
        explainer = _EXPLAINERS.get(kind, _explain_other)
        out.append(Explanation(name, kind, until, explainer(mine) if mine else []))
    return out


def _decision_rows(run: RunData, autoscaler: str | None) -> list[dict[str, Any]]:
    timeline = run.timeline
    chosen = timeline[timeline["operation"] == DECISION]
    known = sorted(set(chosen["source"]))
    if autoscaler is not None:
        if autoscaler not in known:
            have = ", ".join(known) if known else "none"
            raise SkenarioError(f"run {run.id} has no decisions of autoscaler {autoscaler!r} (it has: {have})")
        chosen = chosen[chosen["source"] == autoscaler]
    return [
        {"time_ns": int(t), "source": str(s), "message": str(m), "detail": dict(d) if isinstance(d, dict) else {}}
        for t, s, m, d in zip(chosen["time_ns"], chosen["source"], chosen["message"], chosen["detail"], strict=True)
    ]


def _kind(name: str, details: list[dict[str, Any]]) -> str:
    keys = set().union(*(d.keys() for d in details)) if details else set()
    if "conditions" in keys:
        return "hpa"
    if "panic" in keys:
        return "kpa"
    if "template_request" in keys:
        return "vpa"
    if "groups" in keys and "action" in keys:
        return "cluster-autoscaler"
    return "other"


def _t(ns: int) -> str:
    return format_duration(ns)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _last_changes(
    rows: list[dict[str, Any]],
    changed: Callable[[dict[str, Any]], bool],
    line: Callable[[dict[str, Any]], tuple[str, ...]],
) -> list[tuple[str, ...]]:
    return [line(row) for row in [r for r in rows if changed(r)][-RECENT:]]


# -- the HPA ---------------------------------------------------------------------------------------


def _explain_hpa(rows: list[dict[str, Any]]) -> list[Section]:
    last = rows[-1]
    detail = last["detail"]
    conditions = Section(f"conditions at {_t(last['time_ns'])}", ("type", "status", "reason", "since"))
    for kind in CONDITIONS:
        value = detail.get("conditions", {}).get(kind, "")
        since = last["time_ns"]
        for row in reversed(rows):
            if row["detail"].get("conditions", {}).get(kind) != value:
                break
            since = row["time_ns"]
        status, _, reason = value.partition(" ")
        conditions.rows.append((kind, status, reason, _t(since)))
    decision = Section(f"the decision at {_t(last['time_ns'])}", ("what", "value"))
    decision.rows.append(("replicas before", _cell(detail.get("current"))))
    for metric, values in (detail.get("metrics") or {}).items():
        usage = f"usage {_cell(values.get('usage'))}m"
        if values.get("utilization") is not None:
            usage += f" ({values['utilization']}% of request)"
        decision.rows.append(
            (
                f"metric {metric}",
                f"{usage}, usage/target {_cell(values.get('usage_ratio'))}, "
                f"{values.get('unready', 0)} unready and {values.get('missing', 0)} missing pod(s) left out, "
                f"proposes {values.get('replicas')}",
            )
        )
    if detail.get("error"):
        decision.rows.append(("metric error", str(detail["error"])))
    decision.rows.append(("proposal (largest of the metrics)", _cell(detail.get("proposed"))))
    decision.rows.append(("stabilised recommendation", _cell(detail.get("stabilized"))))
    decision.rows.append(("replicas set", _cell(detail.get("desired"))))
    decision.rows.append(("rule", str(detail.get("rule") or last["message"])))
    changes = Section("recent changes", ("time", "replicas", "rule"))
    changes.rows = _last_changes(
        rows,
        lambda r: r["detail"].get("desired") != r["detail"].get("current"),
        lambda r: (
            _t(r["time_ns"]),
            f"{r['detail'].get('current')} -> {r['detail'].get('desired')}",
            str(r["detail"].get("rule") or r["message"]),
        ),
    )
    return [conditions, decision, changes]


# -- the KPA ---------------------------------------------------------------------------------------


def _explain_kpa(rows: list[dict[str, Any]]) -> list[Section]:
    last = rows[-1]["detail"]
    decision = Section(f"the decision at {_t(rows[-1]['time_ns'])}", ("what", "value"))
    for label, key in (("ready pods", "ready"), ("proposal", "proposed"), ("desired", "desired")):
        decision.rows.append((label, _cell(last.get(key))))
    decision.rows.append(("mode", "panic" if last.get("panic") else "stable"))
    decision.rows.append(("SKS / state", _cell(last.get("state"))))
    decision.rows.append(("applied", _cell(last.get("applied"))))
    panic = Section("panic mode (the decider's `PANICKING` and `Un-panicking` log lines)", ("time", "change", "ready"))
    before = False
    for row in rows:
        now = bool(row["detail"].get("panic"))
        if now != before:
            panic.rows.append((_t(row["time_ns"]), "entered" if now else "left", _cell(row["detail"].get("ready"))))
        before = now
    panic.rows = panic.rows[-RECENT:]
    changes = Section("recent changes of the desired count", ("time", "desired", "mode"))
    previous: dict[str, Any] = {}
    changed: list[tuple[str, ...]] = []
    for row in rows:
        if row["detail"].get("desired") != previous.get("desired"):
            changed.append(
                (
                    _t(row["time_ns"]),
                    f"{previous.get('desired', '-')} -> {row['detail'].get('desired')}",
                    "panic" if row["detail"].get("panic") else "stable",
                )
            )
        previous = row["detail"]
    changes.rows = changed[-RECENT:]
    return [decision, panic, changes]


# -- the VPA ---------------------------------------------------------------------------------------


def _explain_vpa(rows: list[dict[str, Any]]) -> list[Section]:
    last = rows[-1]["detail"]
    recommendation = Section(f"the recommendation at {_t(rows[-1]['time_ns'])}", ("what", "cpu (m)", "memory (bytes)"))
    for label, cpu, memory in (
        ("lower bound", "lower_bound", "memory_lower_bound"),
        ("target", "target", "memory_target"),
        ("upper bound", "upper_bound", "memory_upper_bound"),
        ("template request", "template_request", "template_memory_request"),
    ):
        recommendation.rows.append((label, _cell(last.get(cpu)), _cell(last.get(memory))))
    evictions = sum(int(r["detail"].get("evicted") or 0) for r in rows)
    recommendation.rows.append(("pods evicted so far", str(evictions), ""))
    changes = Section("recent evictions and request changes", ("time", "template request", "evicted"))
    previous: dict[str, Any] = {}
    changed: list[tuple[str, ...]] = []
    for row in rows:
        d = row["detail"]
        if d.get("evicted") or d.get("template_request") != previous.get("template_request"):
            changed.append((_t(row["time_ns"]), _cell(d.get("template_request")), _cell(d.get("evicted"))))
        previous = d
    changes.rows = changed[-RECENT:]
    return [recommendation, changes]


# -- the cluster autoscaler and the rest -------------------------------------------------------------


def _explain_cluster_autoscaler(rows: list[dict[str, Any]]) -> list[Section]:
    counts = Section("decisions so far", ("action", "count"))
    for action, count in pd.Series([r["detail"].get("action") for r in rows]).value_counts().sort_index().items():
        counts.rows.append((str(action), str(count)))
    recent = Section("recent decisions", ("time", "action", "group", "pods", "reason"))
    for row in rows[-RECENT:]:
        d = row["detail"]
        recent.rows.append(
            (_t(row["time_ns"]), str(d.get("action")), str(d.get("group") or "-"), _pods(d.get("pods")), row["message"])
        )
    return [counts, recent]


def _pods(pods: Iterable[str] | None) -> str:
    names = list(pods or [])
    if len(names) > 3:
        return f"{', '.join(names[:3])} and {len(names) - 3} more"
    return ", ".join(names) or "-"


def _explain_other(rows: list[dict[str, Any]]) -> list[Section]:
    recent = Section("recent decisions", ("time", "action", "detail"))
    for row in rows[-RECENT:]:
        detail = {k: v for k, v in row["detail"].items() if k not in ("at", "action")}
        recent.rows.append((_t(row["time_ns"]), row["message"], json.dumps(detail, sort_keys=True)))
    return [recent]


_EXPLAINERS: dict[str, Callable[[list[dict[str, Any]]], list[Section]]] = {
    "hpa": _explain_hpa,
    "kpa": _explain_kpa,
    "vpa": _explain_vpa,
    "cluster-autoscaler": _explain_cluster_autoscaler,
}
