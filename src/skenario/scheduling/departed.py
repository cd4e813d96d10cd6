"""Pods that are gone, let go of as they leave: what a replay's summary and tables still need of them.

A replay of 150,000 pods holds, at the end, 150,000 pod objects (about a kilobyte each) that no
decision reads again. Issue 32 asks that a replay keep in memory only what later decisions need:
with `SchedulingController.let_go` on, a pod that leaves is counted here (bound, preempted, its wait
for a node as a number) and its record goes, as one JSON line, to an anonymous temporary file;
the per-pod table and the results file read the records back in creation order at the end.
"""

from __future__ import annotations

import json
import os
import tempfile
import weakref
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import repeat
from typing import IO

import numpy as np
import numpy.typing as npt

from skenario.scheduling.pods import Pod, PodEnd, pod_result

Ints = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class PodRecord:
    """A departed pod as the tables read it: `Pod`'s fields that outlive it, with the same names."""

    id: int
    name: str
    priority: int
    created_at: int
    bound_at: int | None
    node: str | None
    preempted_at: int | None
    preempted_by: str | None
    finished_at: int | None
    end: PodEnd | None
    tries: int
    attempts: tuple[()] = ()  # a pod that kept its attempts is never let go of (`DepartedPods.takes`)

    @property
    def wait(self) -> int | None:
        """ns from creation to binding (None: never bound)."""
        return None if self.bound_at is None else self.bound_at - self.created_at

    def result(self) -> dict[str, object]:
        """KEP-140's `PodResult` as plain data, as `Pod.result` gives it (its attempts went with it)."""
        return pod_result(self, [])


AnyPod = Pod | PodRecord
"""A pod the tables read: one still held, or the record of one let go of."""


def record_of(pod: Pod) -> PodRecord:
    return PodRecord(*_fields(pod))


_Fields = tuple[int, str, int, int, int | None, str | None, int | None, str | None, int | None, PodEnd | None, int]


def _fields(pod: Pod) -> _Fields:
    """A pod's record, field by field (its end a `PodEnd`, which JSON writes as its string)."""
    return (
        pod.id,
        pod.name,
        pod.spec.priority,
        pod.created_at,
        pod.bound_at,
        pod.node,
        pod.preempted_at,
        pod.preempted_by,
        pod.finished_at,
        pod.end,
        pod.tries,
    )


class DepartedPods:
    """Departed pods: counted, each one's wait kept as a number by its id, its record spilled to disk."""

    def __init__(self) -> None:
        self.count = 0
        self.bound = 0
        self.preempted = 0
        self.last = 0  # the latest creation, binding or finish among them (ns)
        self._waits = array("q")  # by pod id, ns; -1: no departed pod of that id
        # Each record's place in the spill, in the order they left; read back in id order.
        self._ids = array("q")
        self._offsets = array("q")
        self._end = 0
        self._spill: IO[bytes] = tempfile.TemporaryFile(prefix="skenario-departed-")  # noqa: SIM115 - `close`
        weakref.finalize(self, self._spill.close)  # the tables may read it until the replay itself is let go of

    @staticmethod
    def takes(pod: Pod) -> bool:
        """Whether the pod may be let go of: one that kept its attempts' plugin results stays whole."""
        return not pod.attempts

    def add(self, pod: Pod) -> None:
        """Count a pod that has left (its finish, end and node final) and spill its record."""
        self.count += 1
        bound_at, finished = pod.bound_at, pod.finished_at or 0
        if bound_at is not None:
            self.bound += 1
        if pod.preempted_at is not None:
            self.preempted += 1
        self.last = max(self.last, pod.created_at, bound_at or 0, finished)
        waits, id = self._waits, pod.id
        if id >= len(waits):
            waits.extend(repeat(-1, max(id + 1, 2 * len(waits)) - len(waits)))
        waits[id] = pod.wait_until(finished)
        data = _encode(_fields(pod)).encode() + b"\n"
        self._ids.append(id)
        self._offsets.append(self._end)
        self._spill.write(data)
        self._end += len(data)

    def waits(self, created: int) -> tuple[Ints, npt.NDArray[np.bool_]]:
        """Each departed pod's wait (ns) by id over the first `created` ids, and which ids departed."""
        waits = np.full(created, -1, dtype=np.int64)
        have = min(created, len(self._waits))
        waits[:have] = np.array(self._waits[:have], dtype=np.int64)
        return waits, waits >= 0

    def records(self) -> Iterator[PodRecord]:
        """The departed pods' records in id order (creation order), read back from the spill."""
        spill = self._spill
        spill.flush()
        fd = spill.fileno()
        count = self.count
        # Copies: a view would hold the arrays' buffers, and a pod leaving meanwhile could not append.
        ids = np.array(self._ids[:count], dtype=np.int64)
        offsets = np.array(self._offsets[:count], dtype=np.int64)
        lengths = np.diff(np.append(offsets, self._end)).tolist()
        where = offsets.tolist()
        for k in np.argsort(ids, kind="stable").tolist():
            fields = json.loads(os.pread(fd, lengths[k], where[k]))
            end = fields[9]
            fields[9] = None if end is None else PodEnd(end)
            yield PodRecord(*fields)

    def close(self) -> None:
        self._spill.close()


_encode = json.JSONEncoder(separators=(",", ":")).encode
