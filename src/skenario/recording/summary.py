"""The summary of a run and its digest.

The digest hashes everything the run determined (counts, every latency bucket, the exact latency
total, the movement counts) and nothing it did not (wall time), so the same scenario and seed
give the same digest in any process, and any change in the results changes it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from skenario.core.environment import Environment
from skenario.model.cluster import ClusterModel


@dataclass(frozen=True)
class Summary:
    scenario: str
    seed: int
    simulated_ns: int
    requests_arrived: int
    requests_completed: int
    requests_failed: int
    requests_in_flight: int
    failures: dict[str, int]
    latency_p50_ns: int | None
    latency_p95_ns: int | None
    latency_p99_ns: int | None
    latency_mean_ns: float | None
    cpu_utilisation: float | None
    replicas_desired: int
    replicas_active: int
    replicas_started: int
    replicas_terminated: int
    movements_completed: int
    movements_ignored: int
    ignored: dict[str, int]
    digest: str = field(default="")
    # With request classes: per class, its priority, counts and latency (see `class_figures`).
    classes: dict[str, dict[str, Any]] = field(default_factory=dict)
    # With memory modelled: OOM kills, restarts, evictions and the peak working set (see `memory_figures`).
    memory: dict[str, int] = field(default_factory=dict)
    # With retries or abandoned requests: attempts against requests (see `client_figures`).
    clients: dict[str, int] = field(default_factory=dict)
    # With several workloads (spec.workloads): each other one's summary, by name.
    workloads: dict[str, dict[str, Any]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def summarize(
    name: str, seed: int, env: Environment, model: ClusterModel, others: dict[str, Summary] | None = None
) -> Summary:
    """The run as one workload saw it; `others` are the summaries of the workloads beside it, whose
    digests the digest covers."""
    latency = model.requests_complete.latency
    busy = model.busy_core_ns()
    facts: dict[str, Any] = {
        "scenario": name,
        "seed": seed,
        "simulated_ns": env.now(),
        "requests_arrived": model.requests_arrived,
        "requests_completed": model.requests_complete.count(),
        "requests_failed": model.requests_failed.count(),
        "requests_in_flight": model.requests_in_flight,
        "failures": dict(sorted(model.requests_failed.reasons.items())),
        "latency_p50_ns": latency.percentile(50),
        "latency_p95_ns": latency.percentile(95),
        "latency_p99_ns": latency.percentile(99),
        "latency_mean_ns": latency.mean(),
        "cpu_utilisation": busy / capacity if (capacity := model.capacity_core_ns()) > 0 else None,
        "replicas_desired": model.desired,
        "replicas_active": model.replicas_active.count(),
        "replicas_started": model.replica_source.emitted,
        "replicas_terminated": model.replicas_terminated.count(),
        "movements_completed": env.movements_completed,
        "movements_ignored": env.movements_ignored,
        "ignored": {str(reason): n for reason, n in env.ignored_counts.items() if n},
    }
    material = {
        **{k: v for k, v in facts.items() if k not in ("latency_mean_ns", "cpu_utilisation")},
        "busy_core_ns": round(busy),
        "latency_total_ns": latency.total,
        "latency_buckets": list(latency.buckets()),
    }
    classes = class_figures(model)
    if classes:  # absent otherwise, so runs without classes keep their digests
        material["classes"] = classes
    memory = memory_figures(model)
    if memory:  # likewise for runs that do not model memory
        material["memory"] = memory
    clients = client_figures(model)
    if clients:  # likewise for runs with no retries and nothing abandoned
        material["clients"] = clients
    workloads = {other: summary.as_dict() for other, summary in (others or {}).items()}
    if workloads:  # likewise for runs of one workload
        material["workloads"] = {other: summary["digest"] for other, summary in workloads.items()}
    digest = hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()[:16]
    return Summary(**facts, digest=digest, classes=classes, memory=memory, clients=clients, workloads=workloads)


def client_figures(model: ClusterModel) -> dict[str, int]:
    """Attempts sent for the requests (retries amplify load), and attempts abandoned to their servers."""
    clients = model.clients
    if not clients.retries and not clients.abandoned_total and model.spec.client.retries is None:
        return {}
    return {
        "attempts": model.requests_arrived + clients.retries,
        "retries": clients.retries,
        "abandoned": clients.abandoned_total,
    }


def memory_figures(model: ClusterModel) -> dict[str, int]:
    """OOM kills, container restarts, kubelet evictions and the largest working set; empty without memory."""
    peak = model.memory_peak()
    if peak is None:
        return {}
    return {
        "oom_kills": model.oom_kills,
        "container_restarts": model.restarts,
        "evictions": model.evictions,
        "working_set_peak_bytes": peak,
    }


def class_figures(model: ClusterModel) -> dict[str, dict[str, Any]]:
    """Per request class: priority, arrived, completed, failed, in flight and latency percentiles."""
    complete = model.requests_complete
    if complete.by_class is None:
        return {}
    figures = {}
    for i, cls in enumerate(model.spec.requests.classes):
        latency = complete.by_class[i]
        arrived = model.traffic_source.arrived_by_class[i]
        failed = model.requests_failed.by_class[i]
        figures[cls.name] = {
            "priority": cls.priority,
            "arrived": arrived,
            "completed": latency.count,
            "failed": failed,
            "in_flight": arrived - latency.count - failed,
            "latency_p50_ns": latency.percentile(50),
            "latency_p95_ns": latency.percentile(95),
            "latency_p99_ns": latency.percentile(99),
            "latency_mean_ns": latency.mean(),
        }
    return figures
