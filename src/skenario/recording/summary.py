"""The summary of a run and its digest.

The digest hashes everything the run determined (counts, every latency bucket, the exact latency
total, the movement counts) and nothing it did not (wall time), so the same scenario and seed
give the same digest in any process, and any change in the results changes it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

from skenario.core.environment import Environment
from skenario.model.cluster import ClusterModel

# The document (`Simulation.documents`) holding the histogram of every completed request's latency the
# digest hashes, as `LatencyHistogram.as_document` writes it: kept beside the summary, never in the digest.
LATENCY_HISTOGRAM = "latency_histogram"

# Ratios of floats left out of the digest (their exact integrals, or the counts they come from, are in it).
_NOT_DIGESTED = ("latency_mean_ns", "cpu_request_utilisation", "node_cpu_utilisation")


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
    # CPU used over CPU requested by serving replicas: utilisation as the HPA reads it, of the request.
    cpu_request_utilisation: float | None
    # CPU used on the nodes over their allocatable CPU: a cluster's nodes (every workload's pods on
    # them), or without spec.cluster the node each pod has to itself.
    node_cpu_utilisation: float | None
    replicas_desired: int
    replicas_active: int
    replicas_pending: int  # at halt: pods not bound to a node
    replicas_started: int  # pods bound to a node, ever (a pod that stayed Pending never started)
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
    # discrete (every request simulated) or fluid (requests as flows: `spec.mode`).
    mode: str = "discrete"

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, stored: dict[str, Any]) -> Summary:
        """A summary as stored, including one an older skenario kept: fields it lacks are None, and
        fields this one no longer has are left out."""
        names = [f.name for f in fields(cls)]
        values: dict[str, Any] = {name: stored.get(name) for name in names if name in stored or _required(cls, name)}
        return cls(**values)


def summarize(
    name: str, seed: int, env: Environment, model: ClusterModel, others: dict[str, Summary] | None = None
) -> Summary:
    """The run as one workload saw it; `others` are the summaries of the workloads beside it, whose
    digests the digest covers."""
    latency = model.requests_complete.latency
    busy = model.busy_core_ns()
    requested = model.requested_core_ns()
    node_busy, node_held = model.node_cpu_core_ns()
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
        "cpu_request_utilisation": busy / requested if requested > 0 else None,
        "node_cpu_utilisation": node_busy / node_held if node_held > 0 else None,
        "replicas_desired": model.desired,
        "replicas_active": model.replicas_active.count(),
        "replicas_pending": model.replicas_launching.pending(),
        "replicas_started": model.replicas_started(),
        "replicas_terminated": model.replicas_terminated.count(),
        "movements_completed": env.movements_completed,
        "movements_ignored": env.movements_ignored,
        "ignored": {str(reason): n for reason, n in env.ignored_counts.items() if n},
    }
    material = {
        **{k: v for k, v in facts.items() if k not in _NOT_DIGESTED},
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
    mode = "discrete" if model.plant is None else "fluid"
    if mode != "discrete":  # absent otherwise, so discrete runs keep their digests
        material["mode"] = mode
    digest = hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()[:16]
    return Summary(
        **facts, digest=digest, classes=classes, memory=memory, clients=clients, workloads=workloads, mode=mode
    )


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


def _required(cls: type[Summary], name: str) -> bool:
    """Whether the field has no default: a stored summary without it gets None."""
    spec = cls.__dataclass_fields__[name]
    return spec.default is MISSING and spec.default_factory is MISSING
