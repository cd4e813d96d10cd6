"""One workload of a run: its model, recorder and autoscalers on the run's clock, and the events acting on it.

A scenario runs its workload (`spec.workload`, named by the scenario) and any others
(`spec.workloads`) on one Environment; with `spec.cluster` their pods share the nodes and the
scheduler (`wiring.placement`). Each has random streams of its own, so adding a workload never
changes the draws of another's traffic or launches, and each is the `Runtime` its events'
steps act on (`wiring.operations`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from skenario.autoscalers.base import Autoscaler
from skenario.autoscalers.cluster import ClusterContext
from skenario.core.environment import Environment
from skenario.model.cluster import ClusterModel
from skenario.recording.recorder import Recorder
from skenario.recording.summary import Summary, summarize
from skenario.recording.timeline import Operation, Timeline, as_detail
from skenario.scenario.format.cluster import PodSchedulingSpec
from skenario.scenario.format.events import Event
from skenario.scenario.wiring.placement import ClusterPlacement, WorkloadPlacement
from skenario.scenario.wiring.plugins import plugin_name
from skenario.scenario.wiring.prepare import PreparedWorkload


class WorkloadRun:
    """A workload wired into a run, from what `wiring.prepare` read and built of it. Its name names its pods
    (`<name>-<id>`); `prefix` goes before its autoscalers' names in the timeline (empty for
    `spec.workload`, `<name>/` for the others), and `target` is what the timeline says their decisions
    act on."""

    def __init__(
        self,
        env: Environment,
        prepared: PreparedWorkload,
        *,
        prefix: str,
        target: str,
        placement: ClusterPlacement | None,
        timeline: Timeline,
        pick: Callable[[str, int], int],
        note: Callable[[Event, str], None],
    ) -> None:
        self.env = env
        self.spec = spec = prepared.spec
        self.name = name = prepared.name
        self.prefix = prefix
        self.target = target
        self.streams = prepared.streams
        self.timeline = timeline
        self._pick = pick
        self._note = note
        self.placement = placement  # the cluster, shared: node events act on it
        self.pods: WorkloadPlacement | None = None
        if placement is not None:
            workload = spec.workload
            self.pods = placement.workload(
                workload.pod or PodSchedulingSpec.model_validate({}),
                name,
                workload.resources.memory_request,
                workload.image_pull_policy,
            )
        self.model = ClusterModel(env, spec.cluster_spec(), prepared.arrivals, self.streams, self.pods, prepared.fluid)
        if self.pods is not None:
            self.pods.attach(self.model)
        self.autoscalers: dict[str, Autoscaler] = {}
        self.recorder = Recorder(env, self.model, spec.recording.interval, self._gauges)
        self._contexts: dict[str, ClusterContext] = {}
        self._decisions_taken: dict[str, int] = {}  # by autoscaler name: decisions already in the timeline
        for autoscaler_name, autoscaler in prepared.autoscalers:
            self.start_autoscaler(autoscaler_name, autoscaler)
        self.planner = prepared.planner
        self.objects = prepared.objects

    # -- the Runtime that events' steps act on ---------------------------------------------------

    def start_autoscaler(self, name: str, autoscaler: Autoscaler) -> None:
        source = self.prefix + name

        def record(action: str, **detail: Any) -> None:
            if not hasattr(autoscaler, "decisions"):
                detail["action"] = action
                self.timeline.add(self.env.now(), source, Operation.DECISION, self.target, action, detail)

        random = self.streams.generator(f"autoscaler.{name}")
        cls = type(autoscaler)
        plugin = None if cls.__module__.startswith("skenario.") else f"'{source}' ({plugin_name(cls)})"
        container = self.spec.workload.container_name
        context = ClusterContext(
            self.model, on_action=record, container=container, random=random, plugin=plugin, phases=(self.streams, name)
        )
        self.autoscalers[name] = autoscaler
        self._decisions_taken[name] = 0
        self._contexts[name] = context
        context.guarded(lambda: autoscaler.start(context), "start")()

    def stop_autoscaler(self, name: str) -> None:
        self.take_decisions()
        self._contexts.pop(name).close()
        self.autoscalers.pop(name)
        for source in [s for s in self._decisions_taken if s == name or s.startswith(f"{name}/")]:
            del self._decisions_taken[source]

    def pick(self, event_id: str, count: int) -> int:
        return self._pick(event_id, count)

    def note(self, event: Event, message: str) -> None:
        self._note(event, message)

    # -- results ---------------------------------------------------------------------------------

    def _gauges(self) -> dict[str, Any]:
        """What the recorder reads beside the model: the most replicas the autoscalers allow, the cluster, and a
        stream's lag (messages not consumed) and whether its consumers are paused for a rebalance."""
        gauges = {"replicas_max": self.replicas_max(), **(self.placement.gauges() if self.placement else {})}
        stream = self.model.stream
        if stream is not None:
            gauges["consumer_lag"] = stream.lag()
            gauges["consumers_paused"] = int(stream.paused_until is not None)
        return gauges

    def replicas_max(self) -> int | None:
        """The most replicas the workload's autoscalers allow now (the least of their maxReplicas or
        max-scale); None when none of them sets a bound."""
        bounds = [bound for a in self.autoscalers.values() if (bound := getattr(a, "max_replicas", None)) is not None]
        return min(bounds, default=None)

    def _decision_lists(self) -> Iterator[tuple[str, list[Any]]]:
        """Each built-in autoscaler's list of its decisions, by its source in the timeline (KEDA's HPA: name/part)."""
        for name, autoscaler in self.autoscalers.items():
            parts = getattr(autoscaler, "parts", None)  # controllers it runs of its own (KEDA's HPA): name/part
            owned = [(f"{name}/{part}", each) for part, each in parts.items()] if isinstance(parts, dict) else []
            for source, each in [(name, autoscaler), *owned]:
                decisions = getattr(each, "decisions", None)
                if isinstance(decisions, list):
                    yield source, decisions

    def take_decisions(self) -> None:
        """Move the decisions built-in autoscalers keep into the timeline (a cheap read, not per decision)."""
        for source, decisions in self._decision_lists():
            taken = self._decisions_taken.get(source, 0)
            for record in decisions[taken:]:
                detail = as_detail(record)
                message = str(detail.get("reason") or "")
                at = int(detail.get("at", self.env.now()))
                self.timeline.add(at, self.prefix + source, Operation.DECISION, self.target, message, detail)
            self._decisions_taken[source] = len(decisions)

    def forget_decisions(self) -> None:
        """Let the decisions already in the timeline go from the autoscalers' own lists (a run store holds them),
        so a long run's memory does not grow with them; those to come are taken as before."""
        for source, decisions in self._decision_lists():
            taken = self._decisions_taken.get(source, 0)
            if taken:
                del decisions[:taken]
                self._decisions_taken[source] = 0

    def summary(self, seed: int, others: dict[str, Summary] | None = None) -> Summary:
        return summarize(self.name, seed, self.env, self.model, others)
