"""Time series of a run: the model sampled every interval, not every movement.

Recording is an observer on the clock rather than inside the run loop, so the per-request path
pays nothing for it. Each row holds the stocks' counts at the end of its interval and what
happened during it: arrivals, completions, failures by reason, the exact CPU utilisation two
ways and latency percentiles from that interval's streaming histogram. CPU utilisation is exact
integrals over the interval: `cpu_request_utilisation` is CPU used over CPU requested by the
serving replicas (what the HPA reads), `node_cpu_utilisation` CPU used on the nodes over their
allocatable CPU (a cluster's nodes, or without one the node each pod has to itself). Pending
replicas (pods not bound to a node) are counted apart from launching ones. Memory grows with the
number of intervals only, never with requests.

Beside the cluster-wide rows it keeps one row per replica per interval (its own CPU utilisation
and requests held) and a lifecycle record of every replica, for per-replica views and cost.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from skenario.core.environment import Environment
from skenario.core.time import MILLISECOND, SECOND
from skenario.model.cluster import ClusterModel
from skenario.model.replicas import Replica, ReplicaState

if TYPE_CHECKING:
    import pandas as pd

# Columns every row has, in order; failure reasons add `failed_<reason>` columns as they occur.
COLUMNS = (
    "time_ns",
    "replicas_desired",
    "replicas_pending",
    "replicas_launching",
    "replicas_active",
    "replicas_terminating",
    "replicas_terminated",
    "replicas_restarting",
    "requests_buffered",
    "requests_processing",
    "metrics_in_transit",
    "requests_arrived",
    "requests_completed",
    "requests_failed",
    "cpu_request_utilisation",
    "node_cpu_utilisation",
    "cpu_request_millicores",
    "memory_working_set_bytes",
    "latency_p50_ms",
    "latency_p95_ms",
    "latency_p99_ms",
    "latency_mean_ms",
)

# One row per live replica per interval.
REPLICA_COLUMNS = ("time_ns", "replica", "state", "cpu_utilisation", "requests_held")
_STATE_NAMES = {state: state.name.lower() for state in ReplicaState}  # one string each, shared by every row

# One record per replica ever made; times in ns, None while it has not happened yet (bound_ns: never for a
# replica whose pod stayed Pending).
LIFECYCLE_COLUMNS = (
    "replica",
    "created_ns",
    "bound_ns",
    "activated_ns",
    "terminated_ns",
    "cpu_request",
    "cpu_limit",
    "busy_core_ns",
    "memory_request",
    "restarts",
)


class Recorder:
    """Samples a ClusterModel every `interval` and at the end of the run."""

    def __init__(
        self,
        env: Environment,
        model: ClusterModel,
        interval: int = 10 * SECOND,
        gauges: Callable[[], Mapping[str, Any]] | None = None,
    ) -> None:
        if interval <= 0:
            raise ValueError(f"recording interval must be > 0 ns, got {interval}")
        self._env = env
        self._model = model
        self.interval = interval
        # Gauges of the world around the workload (a cluster's nodes and pending pods), read at each row.
        self._gauges = gauges
        self.gauge_names: tuple[str, ...] = tuple(gauges()) if gauges is not None else ()
        self.columns: dict[str, list[Any]] = {name: [] for name in (*COLUMNS, *self.gauge_names)}
        self._failures: list[dict[str, int]] = []
        self._last_at = 0
        self._last_arrived = 0
        self._last_completed = 0
        self._last_failures: Counter[str] = Counter()
        self._last_busy = 0.0
        self._last_requested = 0.0
        self._last_node = (0.0, 0.0)  # (busy, allocatable) core-ns on the nodes
        self.replica_columns: dict[str, list[Any]] = {name: [] for name in REPLICA_COLUMNS}
        self.replica_rows_forgotten = 0  # the first rows of `replica_columns`, let go (`forget_replica_rows`)
        self._replica_last: dict[int, tuple[int, float]] = {}  # id -> (time, busy core-ns) at its last row
        self._lifecycles: list[tuple[Any, ...]] = []  # of terminated replicas; live ones are read at the end
        model.replicas_terminated.on_terminated.append(self._replica_terminated)
        if interval < env.halt_at:
            env.call_at(interval, self._tick)

    def __len__(self) -> int:
        return len(self.columns["time_ns"])

    def _tick(self) -> None:
        self.record()
        env = self._env
        if env.now() + self.interval < env.halt_at:  # the row at the halt comes from `record()`
            env.call_later(self.interval, self._tick)

    def record(self) -> None:
        """Add a row for the time since the previous one (nothing if no time passed)."""
        now = self._env.now()
        if now <= self._last_at:
            return
        model = self._model
        states = Counter(r.state for r in model.replicas.values())
        arrived = model.requests_arrived
        completed = model.requests_complete.count()
        reasons = model.requests_failed.reasons
        failures = {reason: n - self._last_failures[reason] for reason, n in reasons.items()}
        busy = model.busy_core_ns()
        requested = model.requested_core_ns()
        node = model.node_cpu_core_ns()
        pending = model.replicas_launching.pending()
        latency = model.requests_complete.take_window()
        row: dict[str, Any] = {
            "time_ns": now,
            "replicas_desired": model.desired,
            "replicas_pending": pending,
            "replicas_launching": states[ReplicaState.LAUNCHING] - pending,
            "replicas_active": states[ReplicaState.ACTIVE],
            "replicas_terminating": states[ReplicaState.TERMINATING],
            "replicas_terminated": model.replicas_terminated.count(),
            "replicas_restarting": states[ReplicaState.RESTARTING],
            "requests_buffered": model.requests_buffered.count(),
            "requests_processing": model.requests_processing,
            "metrics_in_transit": model.metrics_pipeline.count(),
            "requests_arrived": arrived - self._last_arrived,
            "requests_completed": completed - self._last_completed,
            "requests_failed": sum(failures.values()),
            "cpu_request_utilisation": _ratio(busy - self._last_busy, requested - self._last_requested),
            "node_cpu_utilisation": _ratio(node[0] - self._last_node[0], node[1] - self._last_node[1]),
            "cpu_request_millicores": model.cpu_request,
            "memory_working_set_bytes": model.memory_working_set(),
            "latency_p50_ms": _ms(latency.percentile(50)),
            "latency_p95_ms": _ms(latency.percentile(95)),
            "latency_p99_ms": _ms(latency.percentile(99)),
            "latency_mean_ms": _ms(latency.mean()),
        }
        if self._gauges is not None:
            row.update(self._gauges())
        for name, value in row.items():
            self.columns[name].append(value)
        for replica in model.replicas.values():
            self._replica_row(replica, now)
        self._failures.append({reason: n for reason, n in failures.items() if n})
        self._last_at = now
        self._last_arrived = arrived
        self._last_completed = completed
        self._last_failures = Counter(reasons)
        self._last_busy = busy
        self._last_requested = requested
        self._last_node = node

    def _replica_row(self, replica: Replica, now: int) -> None:
        """The replica's CPU utilisation since its previous row (or activation); None before it serves."""
        busy = replica.processing.cpu.busy_core_ns()
        since, busy_before = self._replica_last.get(replica.id, (replica.activated_at, 0.0))
        utilisation = None
        if since is not None and now > since:
            utilisation = (busy - busy_before) / (replica.processing.cpu.millicores / 1000 * (now - since))
        if replica.activated_at is not None:
            self._replica_last[replica.id] = (now, busy)
        columns = self.replica_columns
        columns["time_ns"].append(now)
        columns["replica"].append(replica.id)
        columns["state"].append(_STATE_NAMES[replica.state])
        columns["cpu_utilisation"].append(utilisation)
        columns["requests_held"].append(replica.processing.count())

    def replica_rows(self, start: int = 0) -> list[tuple[Any, ...]]:
        """The per-replica rows from row `start` on (none of them let go), as REPLICA_COLUMNS tuples."""
        if start < self.replica_rows_forgotten:
            raise ValueError(f"rows before {self.replica_rows_forgotten} were let go: none from {start} can be read")
        columns, first = self.replica_columns, start - self.replica_rows_forgotten
        return list(zip(*(columns[name][first:] for name in REPLICA_COLUMNS), strict=True))

    def forget_replica_rows(self, n: int) -> None:
        """Let the first `n` per-replica rows go (a run store holds them); rows keep their numbers."""
        drop = n - self.replica_rows_forgotten
        if drop > 0:
            for column in self.replica_columns.values():
                del column[:drop]
            self.replica_rows_forgotten += drop

    def _replica_terminated(self, replica: Replica) -> None:
        now = self._env.now()
        if now > self._replica_last.get(replica.id, (now - 1, 0.0))[0]:
            self._replica_row(replica, now)  # the part of an interval it lived through
        self._replica_last.pop(replica.id, None)
        self._lifecycles.append(_lifecycle(replica))

    def lifecycles(self) -> list[tuple[Any, ...]]:
        """Every replica ever made, terminated ones first, as LIFECYCLE_COLUMNS tuples."""
        live = [_lifecycle(replica) for replica in self._model.replicas.values()]
        return [*self._lifecycles, *live]

    def failure_reasons(self) -> list[str]:
        return sorted({reason for row in self._failures for reason in row})

    def rows(self, start: int = 0) -> list[dict[str, Any]]:
        """The series from row `start` on, one dict per row, with a `failed_<reason>` entry per reason seen."""
        reasons = self.failure_reasons()
        result = []
        for i in range(start, len(self)):
            row = {name: self.columns[name][i] for name in (*COLUMNS, *self.gauge_names)}
            row.update({f"failed_{reason}": self._failures[i].get(reason, 0) for reason in reasons})
            result.append(row)
        return result

    def frame(self) -> pd.DataFrame:
        """The series as a pandas DataFrame indexed by time in seconds."""
        import pandas as pd

        names = [*COLUMNS, *self.gauge_names, *(f"failed_{r}" for r in self.failure_reasons())]
        frame = pd.DataFrame(self.rows(), columns=names)
        frame.index = pd.Index(frame["time_ns"] / SECOND, name="time_s")
        return frame


def _lifecycle(replica: Replica) -> tuple[Any, ...]:
    return (
        replica.id,
        replica.created_at,
        replica.bound_at,
        replica.activated_at,
        replica.terminated_at,
        replica.cpu_request,
        replica.cpu_limit,
        replica.processing.cpu.busy_core_ns(),
        replica.memory_request,
        replica.restarts,
    )


def _ratio(used: float, held: float) -> float | None:
    """Used over held; None when nothing was held (no replica served, no node stood)."""
    return used / held if held > 0 else None


def _ms(value: float | None) -> float | None:
    return None if value is None else value / MILLISECOND
