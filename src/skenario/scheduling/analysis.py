"""What a scheduling run comes to: per-pod waits, the cluster's allocation over time, each node's use.

All three are step functions rebuilt from the controller's records (the pods, and the allocation
log of every change to a node's requests), so nothing is sampled and nothing is lost between rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from skenario.core.time import SECOND
from skenario.scheduling.departed import AnyPod
from skenario.scheduling.history import AllocationLog
from skenario.scheduling.pods import Pod
from skenario.scheduling.snapshot import ClusterSnapshot

if TYPE_CHECKING:
    import pandas as pd

    from skenario.scheduling.controller import SchedulingController


POD_COLUMNS = (
    "pod",
    "priority",
    "created_s",
    "bound_s",
    "node",
    "wait_s",
    "preempted_s",
    "preempted_by",
    "finished_s",
    "end",
    "attempts",
)


def _seconds(ns: int | None) -> float | None:
    return None if ns is None else ns / SECOND


def pod_records(pods: Iterable[AnyPod]) -> list[dict[str, Any]]:
    """One record per pod (POD_COLUMNS): KEP-140's PodResult without the attempts, times in seconds."""
    return list(pod_rows(pods))


def pod_rows(pods: Iterable[AnyPod]) -> Iterator[dict[str, Any]]:
    """`pod_records` one at a time (a table of 150,000 pods written without holding it)."""
    for pod in pods:
        yield {
            "pod": pod.name,
            "priority": pod.priority,
            "created_s": pod.created_at / SECOND,
            "bound_s": _seconds(pod.bound_at),
            "node": pod.node if pod.bound_at is not None else None,
            "wait_s": _seconds(pod.wait),
            "preempted_s": _seconds(pod.preempted_at),
            "preempted_by": pod.preempted_by,
            "finished_s": _seconds(pod.finished_at),
            "end": None if pod.end is None else str(pod.end),
            "attempts": pod.tries,
        }


def pod_table(pods: Iterable[AnyPod]) -> pd.DataFrame:
    """`pod_records` as a DataFrame."""
    import pandas as pd

    return pd.DataFrame(pod_records(pods), columns=list(POD_COLUMNS))


def waiting_times(pods: Iterable[Pod], now: int) -> pd.Series:
    """Each pod's wait in seconds: creation to binding, or to `now` for a pod still pending."""
    import pandas as pd

    waits = {}
    for pod in pods:
        if pod.bound_at is not None:
            waits[pod.name] = (pod.bound_at - pod.created_at) / SECOND
        elif pod.end is None:
            waits[pod.name] = (now - pod.created_at) / SECOND
    return pd.Series(waits, name="wait_s", dtype=float)


def _delta_matrix(deltas: list[tuple[int, ...]], columns: int) -> np.ndarray:
    """The deltas as rows of `columns` (a delta logged before a resource was first named is shorter)."""
    out = np.zeros((len(deltas), columns), dtype=np.int64)
    widths = {len(delta) for delta in deltas}
    if len(widths) == 1:  # the usual case: one conversion, not a row at a time
        width = widths.pop()
        if width:
            out[:, :width] = np.array(deltas, dtype=np.int64)
        return out
    for k, delta in enumerate(deltas):
        out[k, : len(delta)] = delta
    return out


def allocation_steps(
    log: AllocationLog,
    capacity: list[tuple[int, tuple[int, ...]]],
    resources: list[str],
) -> dict[str, np.ndarray]:
    """The columns of `allocation_over_time` as arrays, without pandas (a replay's summary needs no more)."""
    # At the end of a replay of 150,000 pods this is the run's largest moment: each array is made
    # once, summed in place and cut to the instants' last rows as soon as it can be.
    columns = len(resources)
    times, deltas = log.logged()
    cap_times = np.array([t for t, _ in capacity], dtype=np.int64)
    cap_deltas = _delta_matrix([delta for _, delta in capacity], columns)
    # One timeline of both kinds of change; capacity first within an instant, so a node that comes
    # and takes a pod at once never shows more than 100%.
    all_times = np.concatenate([cap_times, times])
    kind = np.concatenate([np.zeros(len(cap_times), dtype=np.int8), np.ones(len(times), dtype=np.int8)])
    order = np.lexsort((kind, all_times))
    del kind
    time_s = all_times[order] / SECOND
    del all_times
    last = np.append(time_s[1:] != time_s[:-1], True)  # the state at the end of each instant
    used = _running_sum(deltas, len(cap_times), columns, order)[last]
    total = _running_sum(cap_deltas, 0, columns, order)
    del order
    allocatable = [bool(column.any()) for column in total.T]  # a resource some node had at some moment
    total = total[last]
    steps = {"time_s": time_s[last]}
    for col, name in enumerate(resources):
        if allocatable[col]:
            with np.errstate(divide="ignore", invalid="ignore"):
                steps[name] = np.where(total[:, col] > 0, used[:, col] / np.maximum(total[:, col], 1), 0.0)
    steps["nodes_allocatable_" + resources[0]] = total[:, 0]
    return steps


def _running_sum(rows: np.ndarray, start: int, columns: int, order: np.ndarray) -> np.ndarray:
    """The running sums, taken in `order`, of a timeline that is zero but for `rows` from row `start`."""
    stacked = np.zeros((len(order), columns), dtype=np.int64)
    width = min(columns, rows.shape[1])
    stacked[start : start + len(rows), :width] = rows[:, :width]
    ordered: np.ndarray = stacked[order]
    del stacked
    np.cumsum(ordered, axis=0, out=ordered)
    return ordered


def allocation_over_time(
    log: AllocationLog,
    capacity: list[tuple[int, tuple[int, ...]]],
    resources: list[str],
) -> pd.DataFrame:
    """The cluster's allocation rate (requested / allocatable of the nodes present) after each change.

    `log` is the controller's allocation log, `capacity` its log of nodes coming and going; one row
    per instant, its last state.
    """
    import pandas as pd

    return pd.DataFrame(allocation_steps(log, capacity, resources))


def node_utilisation(log: AllocationLog, snapshot: ClusterSnapshot) -> pd.DataFrame:
    """Per node, requested / allocatable of each resource after each change on it (long format)."""
    import pandas as pd

    resources = snapshot.resources
    times, nodes, deltas = log.columns(len(resources))
    frames = []
    for i in np.unique(nodes):
        mine = nodes == i
        used = np.cumsum(deltas[mine], axis=0)
        frame = pd.DataFrame({"time_s": times[mine] / SECOND, "node": snapshot.nodes[int(i)].name})
        for col, name in enumerate(resources):
            cap = snapshot.allocatable[i, col]
            if cap:
                frame[name] = used[:, col] / cap
        frames.append(frame.groupby(["time_s", "node"], as_index=False).last())
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["time_s", "node", *resources])


def node_records(controller: SchedulingController, groups: Mapping[str, str]) -> list[dict[str, Any]]:
    """One record per node the run had: its group (None for a static node), when it joined and left
    (from the timeline's NodeAdded and NodeRemoved; a node there from the start joined at 0), and its
    allocatable CPU (millicores) and memory (bytes)."""
    added = {e.node: e.at for e in controller.timeline if e.kind == "NodeAdded"}
    removed = {e.node: e.at for e in controller.timeline if e.kind == "NodeRemoved"}
    return [
        {
            "node": node.name,
            "group": groups.get(node.name),
            "added_s": added.get(node.name, 0) / SECOND,
            "removed_s": None if node.name not in removed else removed[node.name] / SECOND,
            "cpu_millicores": node.cpu,
            "memory_bytes": node.memory,
        }
        for node in controller.snapshot.nodes
    ]


def attempt_records(pods: Iterable[AnyPod]) -> list[dict[str, Any]]:
    """One record per scheduling attempt: the pod, when, how many nodes were candidates and feasible,
    the node chosen (None: unschedulable) and the FitError message."""
    return [
        {
            "pod": pod.name,
            "time_s": attempt.at / SECOND,
            "candidates": attempt.candidates,
            "feasible": len(attempt.feasible),
            "selected": attempt.selected,
            "message": attempt.message or None,
        }
        for pod in pods
        for attempt in pod.attempts
    ]


def time_weighted_mean(frame: pd.DataFrame | Mapping[str, np.ndarray], column: str, start: float, end: float) -> float:
    """The mean of a step function given as rows (time_s, value) over [start, end]."""
    if end <= start or column not in frame or not len(frame["time_s"]):
        return 0.0
    times = np.clip(np.asarray(frame["time_s"], dtype=float), start, end)
    values = np.asarray(frame[column], dtype=float)
    spans = np.diff(np.append(times, end))
    return float((values * spans).sum() / (end - start))


@dataclass(frozen=True)
class SchedulingSummary:
    """Pods bound, pending and never bound, their waits for a node, allocation and nodes.

    The waits count every pod: a bound pod's until it was bound, a pod never bound until it was
    deleted or the run ended (a censored wait, a lower bound of the real one), so that pods left
    waiting are not missing from the mean. `never_bound` counts those pods, `pending` the ones
    still waiting at the end.
    """

    pods: int
    bound: int
    pending: int
    preempted: int
    unschedulable_attempts: int
    mean_wait_s: float
    p99_wait_s: float
    allocation_mean: dict[str, float]  # time-weighted, over the run
    allocation_peak: dict[str, float]
    nodes: int
    never_bound: int = 0
    max_wait_s: float = 0.0

    def as_dict(self) -> dict[str, object]:
        return {
            "pods": self.pods,
            "bound": self.bound,
            "pending": self.pending,
            "preempted": self.preempted,
            "unschedulableAttempts": self.unschedulable_attempts,
            "meanWaitSeconds": self.mean_wait_s,
            "p99WaitSeconds": self.p99_wait_s,
            "allocationMean": self.allocation_mean,
            "allocationPeak": self.allocation_peak,
            "nodes": self.nodes,
            "neverBound": self.never_bound,
            "maxWaitSeconds": self.max_wait_s,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SchedulingSummary:
        """Back from `as_dict` (keys it does not know are left out)."""
        return cls(
            pods=int(data.get("pods", 0)),
            bound=int(data.get("bound", 0)),
            pending=int(data.get("pending", 0)),
            preempted=int(data.get("preempted", 0)),
            unschedulable_attempts=int(data.get("unschedulableAttempts", 0)),
            mean_wait_s=float(data.get("meanWaitSeconds", 0.0)),
            p99_wait_s=float(data.get("p99WaitSeconds", 0.0)),
            allocation_mean=dict(data.get("allocationMean", {})),
            allocation_peak=dict(data.get("allocationPeak", {})),
            nodes=int(data.get("nodes", 0)),
            never_bound=int(data.get("neverBound", 0)),
            max_wait_s=float(data.get("maxWaitSeconds", 0.0)),
        )
