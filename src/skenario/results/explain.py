"""Why a replica count is what it is: the autoscalers' decisions of a run, read back and explained.

In the spirit of `kubectl describe hpa`: for an HPA its conditions (AbleToScale, ScalingActive,
ScalingLimited) with the time each took its value, the decision's inputs (each metric's usage and
target, utilisation, usage over target, unready and missing pods, min and max replicas) and the
rule that set the result (`hpa.controller.decision_rule`); for a KPA what Knative's `Scale`
(`pkg/autoscaler/scaling/autoscaler.go`) read and worked out (the stable and panic windows'
averages over the target, the rate limits, panic mode, the excess burst capacity and the activator
mode it implies) and the rules of the decider and of the reconciler (`kpa/scaler.go`) that set the
result; for a VPA its bounds and evictions; for the cluster autoscaler its scale-ups, scale-downs
and the reasons pods did not trigger one. Everything comes from the run's timeline, as the run
store keeps it, so a run explains itself long after it ran.

Instants read as clock times (`00:05:00`, `format_clock`) or relative to the explained one
(`-1m30s`, `format_relative`); durations in human units (`format_human_duration`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from skenario.autoscalers.kpa.decider import DECIDER_RULES
from skenario.autoscalers.kpa.scaler import SCALER_RULES
from skenario.core.time import format_clock, format_human_duration, format_relative
from skenario.errors import SkenarioError
from skenario.results.rundata import RunData

DECISION = "Decision"
CONDITIONS = ("AbleToScale", "ScalingActive", "ScalingLimited")
RECENT = 10  # decisions listed under "changes" and "decisions"

NO_DATA = (
    "-1, no decision: the decider had no data. Knative's `Scale` returns an invalid `ScaleResult` "
    "when its stable window holds no sample yet (`ErrNoData`: no pod has reported and no request "
    "waited at the activator), and -1 is the reconciler's `scaleUnknown`: nothing changes unless "
    "the revision is activating"
)
"""What a KPA proposal of -1 means, in plain words."""


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
        out.append(Explanation(name, kind, until, explainer(mine, until) if mine else []))
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
    if "triggers" in keys and "cooldown" in keys:
        return "keda"
    if "triggers" in keys and "created" in keys:
        return "keda-jobs"
    return "other"


_t = format_clock


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _number(value: float) -> str:
    """A setting or a product of settings, without float noise: 7, 0.7, 1960."""
    return f"{value:.6g}"


def _last_changes(
    rows: list[dict[str, Any]],
    changed: Callable[[dict[str, Any]], bool],
    line: Callable[[dict[str, Any]], tuple[str, ...]],
) -> list[tuple[str, ...]]:
    return [line(row) for row in [r for r in rows if changed(r)][-RECENT:]]


# -- the HPA ---------------------------------------------------------------------------------------


def _explain_hpa(rows: list[dict[str, Any]], at: int) -> list[Section]:
    last = rows[-1]
    detail = last["detail"]
    conditions = Section(
        f"conditions at {_t(at)}, from the sync at {_t(last['time_ns'])}", ("type", "status", "reason", "since")
    )
    for kind in CONDITIONS:
        value = detail.get("conditions", {}).get(kind, "")
        since = last["time_ns"]
        for row in reversed(rows):
            if row["detail"].get("conditions", {}).get(kind) != value:
                break
            since = row["time_ns"]
        status, _, reason = value.partition(" ")
        conditions.rows.append((kind, status, reason, f"{_t(since)} ({format_relative(since, at)})"))
    decision = Section(f"the decision at {_t(last['time_ns'])}", ("what", "value"))
    decision.rows.append(("replicas before", _cell(detail.get("current"))))
    decision.rows.append(("bounds", _hpa_bounds(detail)))
    for metric, values in (detail.get("metrics") or {}).items():
        decision.rows.append((f"metric {metric}", _hpa_metric(metric, values)))
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


def _hpa_bounds(detail: dict[str, Any]) -> str:
    low, high = detail.get("min_replicas"), detail.get("max_replicas")
    if low is None and high is None:
        return "- (not recorded by this run)"
    return f"minReplicas {_cell(low)}, maxReplicas {_cell(high)}"


def _quantity(milli: Any, metric: str) -> str:
    """A metric's milli-units as a reader wants them: memory in MiB, the rest in milli-units (`420m`)."""
    if not isinstance(milli, int | float) or isinstance(milli, bool):
        return "-"
    if metric.startswith("memory"):
        return f"{milli / 1000 / 2**20:.1f}Mi"
    return f"{_number(milli)}m"


def _hpa_target(metric: str, values: dict[str, Any]) -> str:
    kind, target = values.get("target_type"), values.get("target")
    if kind == "Utilization":
        return f"{target}% of request"
    if kind == "AverageValue":
        return f"{_quantity(target, metric)} per pod"
    if kind == "Value":
        return f"{_quantity(target, metric)} in all"
    return "- (not recorded by this run)"


def _hpa_metric(metric: str, values: dict[str, Any]) -> str:
    usage = f"usage {_quantity(values.get('usage'), metric)}"
    if values.get("utilization") is not None:
        usage += f" ({values['utilization']}% of request)"
    return (
        f"{usage} against a target of {_hpa_target(metric, values)}: usage/target {_cell(values.get('usage_ratio'))}; "
        f"{values.get('unready', 0)} unready and {values.get('missing', 0)} missing pod(s) left out; "
        f"proposes {values.get('replicas')}"
    )


# -- the KPA ---------------------------------------------------------------------------------------

_KPA_METRICS = {"concurrency": "concurrency (requests in flight)", "rps": "requests per second"}


def _explain_kpa(rows: list[dict[str, Any]], at: int) -> list[Section]:
    last = rows[-1]
    detail = last["detail"]
    settings: dict[str, Any] = next(
        (r["detail"]["settings"] for r in reversed(rows) if r["detail"].get("settings")), {}
    )
    decision = Section(f"the decision at {_t(last['time_ns'])}", ("what", "value"))
    decision.rows = _kpa_decision(detail, settings, _panic_since(rows), at)
    panic = Section(
        "panic mode (the decider's `PANICKING` and `Un-panicking` log lines)",
        ("time", "change", "ready", "the panic window asked for"),
    )
    before = False
    for row in rows:
        now = bool(row["detail"].get("panic"))
        if now != before:
            panic.rows.append(
                (
                    _t(row["time_ns"]),
                    "entered" if now else "left",
                    _cell(row["detail"].get("ready")),
                    _pods(row["detail"].get("panic_pods")),
                )
            )
        before = now
    panic.rows = panic.rows[-RECENT:]
    changes = Section("recent changes of the desired count", ("time", "desired", "mode", "rule"))
    previous: dict[str, Any] = {}
    changed: list[tuple[str, ...]] = []
    for row in rows:
        d = row["detail"]
        if d.get("desired") != previous.get("desired"):
            rule = ", ".join(key for key in (d.get("rule"), d.get("scaler")) if key) or "-"
            changed.append(
                (
                    _t(row["time_ns"]),
                    f"{previous.get('desired', '-')} -> {d.get('desired')}",
                    "panic" if d.get("panic") else "stable",
                    rule,
                )
            )
        previous = d
    changes.rows = changed[-RECENT:]
    return [decision, panic, changes]


def _pods(count: Any) -> str:
    return "-" if count is None else f"{count} pod(s)"


def _panic_since(rows: list[dict[str, Any]]) -> int | None:
    """When the panic mode the last decision is in began (None: not in panic)."""
    since = None
    for row in reversed(rows):
        if not row["detail"].get("panic"):
            break
        since = row["time_ns"]
    return since


def _kpa_decision(
    d: dict[str, Any], settings: dict[str, Any], panic_since: int | None, at: int
) -> list[tuple[str, ...]]:
    """The rows of a KPA decision: what `Scale` read, what it worked out, and what the reconciler did."""
    ready = d.get("ready")
    target = settings.get("target")
    ready_for_limits = max(1, int(ready or 0))  # `Scale` counts zero ready pods as one
    rows: list[tuple[str, ...]] = [("ready pods", _cell(ready))]
    if settings:
        rows += _kpa_targets(settings, ready)
    observed = d.get("observed_stable") is not None  # runs stored before the inputs were recorded have none
    if observed and target:
        threshold = settings.get("panic_threshold")
        stable_window = format_human_duration(int(settings.get("stable_window", 0)))
        panic_window = format_human_duration(int(settings.get("panic_window", 0)))
        rows.append(
            (
                f"stable window ({stable_window}) average",
                f"{_cell(d['observed_stable'])}: ceil({_cell(d['observed_stable'])} / {_number(target)}) "
                f"= {d.get('stable_pods')} pod(s)",
            )
        )
        share = (d.get("panic_pods") or 0) / ready_for_limits
        threshold_text = "" if threshold is None else f" (panic from {_number(threshold)}x)"
        rows.append(
            (
                f"panic window ({panic_window}) average",
                f"{_cell(d['observed_panic'])}: ceil({_cell(d['observed_panic'])} / {_number(target)}) "
                f"= {d.get('panic_pods')} pod(s), {share:.2f}x the {ready_for_limits} ready pod(s){threshold_text}",
            )
        )
        rows.append(("rate limits", _kpa_rate_limits(settings, ready_for_limits)))
    elif observed:
        rows.append(("stable and panic averages", f"{_cell(d['observed_stable'])}, {_cell(d['observed_panic'])}"))
    mode = "stable"
    if d.get("panic"):
        mode = "panic"
        if panic_since is not None:
            mode = f"panic, since {_t(panic_since)} ({format_relative(panic_since, at)})"
    rows.append(("mode", mode))
    proposal = d.get("proposed")
    no_data = isinstance(proposal, int) and proposal < 0
    rows.append(("proposal (`Scale`'s DesiredPodCount)", NO_DATA if no_data else _cell(proposal)))
    rule = d.get("rule")
    if rule:
        rows.append(("the decider's rule", f"{rule}: {DECIDER_RULES.get(rule, '')}".rstrip(": ")))
    if settings:
        rows.append(("bounds", _kpa_bounds(settings)))
    scaler = d.get("scaler")
    rows.append(
        (
            "the reconciler's rule",
            f"{scaler}: {SCALER_RULES.get(scaler, '')}".rstrip(": ") if scaler else "applied as proposed",
        )
    )
    rows.append(("replicas set", _cell(d.get("desired"))))
    rows.append(("PodAutoscaler", _cell(d.get("state"))))
    rows.append(("excess burst capacity", _kpa_ebc(d, settings)))
    rows.append(("activator", _kpa_activator(d)))
    return rows


def _kpa_targets(settings: dict[str, Any], ready: Any) -> list[tuple[str, str]]:
    target, total = settings.get("target"), settings.get("total")
    metric = str(settings.get("metric", "concurrency"))
    rows = [("metric", _KPA_METRICS.get(metric, metric))]
    if target is not None and total:
        rows.append(("target per pod", f"{_number(target)} ({target / total:.0%} of the {_number(total)} a pod takes)"))
    if target is not None and ready is not None:
        rows.append(("target for the ready pods", f"{_number(target)} x {ready} = {_number(target * ready)}"))
    return rows


def _kpa_rate_limits(settings: dict[str, Any], ready: int) -> str:
    """`Scale`'s bounds on one decision: ceil(max-scale-up-rate x ready), floor(ready / max-scale-down-rate)."""
    up_rate, down_rate = settings.get("max_scale_up_rate"), settings.get("max_scale_down_rate")
    if up_rate is None or down_rate is None:
        return "-"
    up = math.ceil(up_rate * ready)
    if not settings.get("reachable", True):
        return f"at most ceil({_number(up_rate)} x {ready}) = {up}; no lower limit (the revision is unreachable)"
    down = math.floor(ready / down_rate)
    return (
        f"at most ceil({_number(up_rate)} x {ready}) = {up}, "
        f"at least floor({ready} / {_number(down_rate)}) = {down} (max-scale-up-rate, max-scale-down-rate)"
    )


def _kpa_bounds(settings: dict[str, Any]) -> str:
    high = settings.get("max_scale")
    parts = [
        f"min-scale {settings.get('min_scale')}",
        f"max-scale {high}" + (" (unbounded)" if high == 0 else ""),
        f"initial-scale {settings.get('initial_scale')}",
    ]
    if settings.get("activation_scale"):
        parts.append(f"activation-scale {settings['activation_scale']}")
    if settings.get("enable_scale_to_zero", True):
        grace = format_human_duration(int(settings.get("scale_to_zero_grace_period", 0)))
        parts.append(f"scale to zero after a grace period of {grace}")
        if settings.get("scale_to_zero_pod_retention_period"):
            retention = format_human_duration(int(settings["scale_to_zero_pod_retention_period"]))
            parts.append(f"the last pod kept for {retention}")
    else:
        parts.append("no scale to zero")
    if settings.get("scale_down_delay"):
        parts.append(f"scale-down-delay {format_human_duration(int(settings['scale_down_delay']))}")
    return ", ".join(parts)


def _kpa_ebc(d: dict[str, Any], settings: dict[str, Any]) -> str:
    """The excess burst capacity as `Scale` computes it (autoscaler.go): floor(ready x total - TBC - panic average)."""
    ebc = d.get("ebc")
    if ebc is None:
        return "- (no data this pass)"
    tbc = settings.get("target_burst_capacity")
    if tbc == 0:
        return "0 (target-burst-capacity 0: the activator leaves the path once pods are wanted)"
    if tbc == -1:
        return "-1 (target-burst-capacity -1: the activator always stays in the path)"
    total, panic = settings.get("total"), d.get("observed_panic")
    if tbc is None or total is None or panic is None:
        return str(ebc)
    return (
        f"floor({d.get('ready')} x {_number(total)} - {_number(tbc)} - {_cell(panic)}) = {ebc} "
        "(ready pods x what a pod takes - target-burst-capacity - the panic average)"
    )


def _kpa_activator(d: dict[str, Any]) -> str:
    """The SKS mode the KPA reconciler's `ReconcileKind` picked: Serve only when pods are wanted and the EBC
    is not negative, else Proxy (the activator in the request path)."""
    sks = d.get("sks")
    if sks is None:
        return "- (not recorded by this run)"
    if sks == "Serve":
        return "out of the request path (SKS Serve): pods are wanted and the excess burst capacity is not negative"
    ebc = d.get("ebc")
    why = "the excess burst capacity is negative" if ebc is not None and ebc < 0 else "no pods are wanted or no data"
    return f"in the request path (SKS Proxy): {why}"


# -- the VPA ---------------------------------------------------------------------------------------


def _explain_vpa(rows: list[dict[str, Any]], at: int) -> list[Section]:
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


def _explain_cluster_autoscaler(rows: list[dict[str, Any]], at: int) -> list[Section]:
    counts = Section("decisions so far", ("action", "count"))
    for action, count in pd.Series([r["detail"].get("action") for r in rows]).value_counts().sort_index().items():
        counts.rows.append((str(action), str(count)))
    recent = Section("recent decisions", ("time", "action", "group", "pods", "reason"))
    for row in rows[-RECENT:]:
        d = row["detail"]
        group = str(d.get("group") or "-")
        recent.rows.append((_t(row["time_ns"]), str(d.get("action")), group, _names(d.get("pods")), row["message"]))
    return [counts, recent]


# -- KEDA's operator --------------------------------------------------------------------------------


def _explain_keda(rows: list[dict[str, Any]], at: int) -> list[Section]:
    """The last poll (each trigger's value, the activity, the cooldown) and the polls that moved the target:
    KEDA's operator only scales to and from zero (or idle); its HPA, `<name>/hpa`, scales in between."""
    last_row = rows[-1]
    d = last_row["detail"]
    poll = Section(f"the poll at {_t(last_row['time_ns'])}", ("what", "value"))
    poll.rows.append(("replicas before", _cell(d.get("current"))))
    for metric, value in (d.get("triggers") or {}).items():
        poll.rows.append((f"trigger {metric}", value if isinstance(value, str) else _cell(value)))
    if d.get("composite") is not None:
        poll.rows.append(("composite-metric (the formula)", _cell(d.get("composite"))))
    if d.get("fallback"):
        poll.rows.append(("falling back", ", ".join(d["fallback"])))
    poll.rows.append(("active", "yes" if d.get("active") else "no" + (" (a trigger failed)" if d.get("error") else "")))
    last_active = d.get("last_active")
    if last_active is not None:
        until = int(last_active) + int(d.get("cooldown") or 0)
        poll.rows.append(("last active", f"{_t(int(last_active))}; the cooldown ends at {_t(until)}"))
    poll.rows.append(("outcome", str(last_row["message"])))
    changes = Section("recent activations and deactivations", ("time", "replicas", "why"))
    moved = [
        r
        for r in rows
        if r["detail"].get("desired") is not None and r["detail"].get("desired") != r["detail"].get("current")
    ]
    for row in moved[-RECENT:]:
        detail = row["detail"]
        changes.rows.append(
            (_t(row["time_ns"]), f"{detail.get('current')} -> {detail.get('desired')}", str(row["message"]))
        )
    return [poll, changes]


def _explain_keda_jobs(rows: list[dict[str, Any]], at: int) -> list[Section]:
    """A ScaledJob's polls: each trigger's queue, the Jobs running and pending, and the Jobs created."""
    created = sum(int(r["detail"].get("created") or 0) for r in rows)
    totals = Section("so far", ("what", "value"))
    totals.rows.append(("polls", str(len(rows))))
    totals.rows.append(("jobs created", str(created)))
    recent = Section("recent polls", ("time", "queue", "running", "pending", "created", "why"))
    for row in rows[-RECENT:]:
        d = row["detail"]
        queue = ", ".join(v if isinstance(v, str) else _cell(v) for v in (d.get("triggers") or {}).values())
        recent.rows.append(
            (
                _t(row["time_ns"]),
                queue,
                _cell(d.get("running")),
                _cell(d.get("pending")),
                _cell(d.get("created")),
                str(row["message"]),
            )
        )
    return [totals, recent]


def _names(pods: Iterable[str] | None) -> str:
    names = list(pods or [])
    if len(names) > 3:
        return f"{', '.join(names[:3])} and {len(names) - 3} more"
    return ", ".join(names) or "-"


def _explain_other(rows: list[dict[str, Any]], at: int) -> list[Section]:
    recent = Section("recent decisions", ("time", "action", "detail"))
    for row in rows[-RECENT:]:
        detail = {k: v for k, v in row["detail"].items() if k not in ("at", "action")}
        recent.rows.append((_t(row["time_ns"]), row["message"], json.dumps(detail, sort_keys=True)))
    return [recent]


_EXPLAINERS: dict[str, Callable[[list[dict[str, Any]], int], list[Section]]] = {
    "hpa": _explain_hpa,
    "kpa": _explain_kpa,
    "vpa": _explain_vpa,
    "cluster-autoscaler": _explain_cluster_autoscaler,
    "keda": _explain_keda,
    "keda-jobs": _explain_keda_jobs,
}
