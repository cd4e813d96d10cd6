"""A user's own Filter or Score plugin: plain Python that sees one pod and one node at a time.

The protocol, all optional but at least one of `filter` and `score`:

```python
class PreferZoneA:
    def filter(self, pod: PodSpec, node: NodeView) -> str | None: ...   # None passes; a reason rejects
    def score(self, pod: PodSpec, node: NodeView) -> int: ...            # higher is better
    def normalize(self, scores: list[int]) -> list[int]: ...             # to 0..100 (NormalizeScore)
```

A rejection is final for that node (upstream's UnschedulableAndUnresolvable): preemption does not
try to make room on it. Without `normalize`, scores must already lie in 0..100, as kube-scheduler
requires of every score plugin.

The scenario names such a class in `scheduler.customPlugins` ('file.py:Class', loaded by
`skenario.scenario.wiring.plugins.load_class`); `UserPlugin` adapts it to the framework's vector
interface. What the class raises in `filter`, `score` or `normalize` (`SystemExit` too) is one
`PluginError` naming the plugin as written, the method and the simulated time (the scheduler's
clock, once `SchedulingController` is made with it).
It is skenario's counterpart of kube-scheduler's out-of-tree plugins (`app.WithPlugin`), which join
the in-tree registry (`plugins.registry`) under their own name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from skenario.core.time import format_duration
from skenario.errors import PluginError, plugin_failure
from skenario.scheduling.objects import NodeSpec, PodSpec
from skenario.scheduling.plugins.interface import MAX_NODE_SCORE, FilterResult, Ints
from skenario.scheduling.snapshot import ClusterSnapshot


@dataclass(frozen=True)
class NodeView:
    """A node as a user's plugin sees it: its spec, what is requested on it and the pods bound there."""

    spec: NodeSpec
    allocatable: Mapping[str, int]
    requested: Mapping[str, int]
    pods: tuple[PodSpec, ...]

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def labels(self) -> Mapping[str, str]:
        return self.spec.labels

    def free(self, resource: str) -> int:
        return self.allocatable.get(resource, 0) - self.requested.get(resource, 0)


def node_view(snap: ClusterSnapshot, i: int) -> NodeView:
    names = snap.resources
    return NodeView(
        snap.nodes[i],
        dict(zip(names, snap.allocatable[i].tolist(), strict=True)),
        dict(zip(names, snap.requested[i].tolist(), strict=True)),
        tuple(snap.pods_on[i].values()),
    )


class UserPlugin:
    """Adapts a user's per-node plugin to the framework's vector interface."""

    def __init__(self, name: str, instance: Any, where: str, plugin: str | None = None) -> None:
        self.name = name
        self.instance = instance
        self.where = where
        self.plugin = plugin or name  # as the scenario names it: file.py:Class
        self.now: Callable[[], int] | None = None  # the scheduler's clock, for a failure's time
        self.filters = callable(getattr(instance, "filter", None))
        self.scores = callable(getattr(instance, "score", None))
        if not self.filters and not self.scores:
            raise PluginError("a scheduler plugin needs a filter(pod, node) or score(pod, node) method", field=where)

    def filter(self, pod: PodSpec, snap: ClusterSnapshot, nodes: Ints) -> FilterResult:
        reasons = [""]
        codes = np.zeros(len(nodes), dtype=np.int64)
        for k, i in enumerate(nodes.tolist()):
            verdict = self._call("filter", pod, node_view(snap, i))
            if verdict is None or verdict is True:
                continue
            text = verdict if isinstance(verdict, str) and verdict else f"rejected by {self.name}"
            if text not in reasons:
                reasons.append(text)
            codes[k] = reasons.index(text)
        return FilterResult(codes, reasons, frozenset(range(1, len(reasons))))

    def score(self, pod: PodSpec, snap: ClusterSnapshot, nodes: Ints) -> Ints:
        out = []
        for i in nodes.tolist():
            value = self._call("score", pod, node_view(snap, i))
            if isinstance(value, bool) or not isinstance(value, int | np.integer):
                raise PluginError(
                    f"score() must return an integer, got {value!r} for node {snap.nodes[i].name}", field=self.where
                )
            out.append(int(value))
        return np.array(out, dtype=np.int64)

    def normalize(self, scores: Ints) -> Ints | None:
        normalize = getattr(self.instance, "normalize", None)
        result = np.array(self._call("normalize", scores.tolist()), dtype=np.int64) if callable(normalize) else scores
        if len(result) != len(scores) or ((result < 0) | (result > MAX_NODE_SCORE)).any():
            raise PluginError(
                f"scores must lie in 0..{MAX_NODE_SCORE} after normalize, got {result.tolist()}", field=self.where
            )
        return result

    def _call(self, method: str, *args: Any) -> Any:
        """The instance's `method`, what it raises said as the plugin's failure (`errors.plugin_failure`)."""
        try:
            return getattr(self.instance, method)(*args)
        except BaseException as exc:
            when = "while scheduling" if self.now is None else f"at {format_duration(self.now())}"
            failure = plugin_failure(exc, f"{self.name} ({self.plugin})", method, when)
            if failure is None:
                raise
            failure.field = self.where
            raise failure from exc
