"""KEP-140's Scenario on FakeTime: a step's operations, the scheduler until nothing more fits, the next step.

FakeTime step `t` is the kernel's instant `(t + 1)` seconds (the instant 0 belongs to the run's
start). At each step every operation of the step is applied, in any order: the scheduler's pass
waits until the instant has settled (`Environment.call_when_settled`), so its outcome never
depends on the order in which same-step operations were written, and it goes on (preemption,
pods replaced by their owners, evictions a drain makes) until nothing more can be placed. Then
the results of the step are final and time moves on.

The phases are the KEP's: Pending, Running, Paused once every event has run and none was Done
(new events may then be added with `add_events` and the run goes on: events at a step already
past are ignored, as the KEP says), Completed at the Done event, Failed if an operation could not
be carried out. `result()` is the KEP's ScenarioResult: its Timeline keyed by FakeTime, with the
operations' results and PodScheduled, PodUnscheduled and PodPreempted, each with the pod's
PodResult and every ScheduleResult (AllCandidateNodes, AllFilteredNodes and each plugin's filter
verdict and raw, normalized and final score).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic.alias_generators import to_camel

from skenario.core.environment import Environment
from skenario.core.random import RandomStreams
from skenario.core.time import SECOND
from skenario.errors import ScenarioError
from skenario.scenario.format.kep import KepScenario, ScenarioEvent, is_kep_scenario
from skenario.scenario.format.scheduler import Plugins, SchedulerSpec
from skenario.scenario.io import Documents, read_text, validate_document, validate_node, yaml_documents
from skenario.scenario.simulation import Phase
from skenario.scenario.wiring.apiserver import ObjectStore, parse_patch
from skenario.scenario.wiring.scheduler import build_profile
from skenario.scheduling.analysis import SchedulingSummary, attempt_records, pod_records
from skenario.scheduling.attempts import Attempt
from skenario.scheduling.controller import SchedulingController
from skenario.scheduling.framework import Framework
from skenario.scheduling.plugins.builtin import PointSet, refusals
from skenario.scheduling.plugins.registry import NOT_MODELLED
from skenario.scheduling.pods import Pod
from skenario.scheduling.replay import summarize
from skenario.scheduling.snapshot import ClusterSnapshot
from skenario.version import __version__

FAKE_STEP = SECOND  # one FakeTime step in the kernel's time
# The store keeps every attempt's per-node plugin results up to this many (node, plugin) verdicts; past
# it (10,000 pods on 1,000 nodes make ~40 million) they are left out there, and `--results` has them.
STORED_PLUGIN_RESULTS = 2_000_000
HORIZON = 2**62

# The KubeSchedulerConfiguration fields skenario reads; the rest (client connection, leader election,
# parallelism, backoff: real time that FakeTime does not have) are the real scheduler's business.
_CONFIGURATION_READ = ("percentageOfNodesToScore", "profiles")


def instant(time: int) -> int:
    """The kernel's instant of FakeTime `time`."""
    return (time + 1) * FAKE_STEP


def fake_time(at: int) -> int:
    """The FakeTime step of a kernel instant."""
    return max(at // FAKE_STEP - 1, 0)


def scheduler_spec(configuration: dict[str, Any] | None, source: str) -> SchedulerSpec:
    """A KubeSchedulerConfiguration read as the scenario's `scheduler` section (its first profile).

    A configuration as kube-scheduler-simulator exports it lists every extension point, defaults
    expanded: the filter and score sets are read, with multiPoint and the points of the built-in
    plugins (preEnqueue, queueSort, postFilter, bind: `postFilter: {disabled: [{name: "*"}]}` turns
    preemption off); the other points (preFilter, reserve, permit, ...) are skenario's own
    machinery and are left out, as are the in-tree plugins skenario does not model and the args of
    plugins that take none here. A profile left without SchedulingGates, PrioritySort or
    DefaultBinder is an error naming the plugin and the `disabled` entry that turned it off.
    """
    data = {k: v for k, v in (configuration or {}).items() if k in _CONFIGURATION_READ}
    profiles = data.get("profiles")
    if isinstance(profiles, list):
        data["profiles"] = [_profile(p) for p in profiles[:1] if isinstance(p, dict)]
    shape = "a KubeSchedulerConfiguration: {profiles: [{plugins: ..., pluginConfig: ...}], percentageOfNodesToScore}"
    return validate_document(data, SchedulerSpec, f"{source} (spec.schedulerConfiguration)", shape)


def _profile(profile: dict[str, Any]) -> dict[str, Any]:
    plugins = profile.get("plugins")
    out: dict[str, Any] = {}
    if isinstance(plugins, dict):
        _refuse_disabling_built_ins(plugins)
        kept = {}
        for point in _POINTS_READ:
            sets = plugins.get(point)
            if isinstance(sets, dict):
                kept[point] = {
                    which: [ref for ref in sets.get(which) or [] if not _unmodelled(ref)]
                    for which in ("enabled", "disabled")
                }
        out["plugins"] = kept
    configs = []
    for config in profile.get("pluginConfig") or []:
        if isinstance(config, dict) and config.get("name") in _ARGS:
            args = config.get("args") or {}
            known = _ARGS[config["name"]]
            configs.append({"name": config["name"], "args": {k: v for k, v in args.items() if k in known}})
    out["pluginConfig"] = configs
    return out


def _refuse_disabling_built_ins(plugins: dict[str, Any]) -> None:
    """A required built-in plugin (SchedulingGates, PrioritySort, DefaultBinder) the profile turns
    off is an error naming it, at the `disabled` entry that did it: skenario cannot run without it."""
    points = {point: PointSet(_names(sets, "enabled"), _names(sets, "disabled")) for point, sets in plugins.items()}
    for where, problem in refusals(points)[:1]:
        raise ScenarioError(
            problem,
            field=f"spec.schedulerConfiguration.profiles.0.plugins.{where.point}.disabled.{where.index}.name",
            value=where.name,
        )


def _names(sets: Any, which: str) -> list[str]:
    """The names in a point's `enabled` or `disabled` list as written, a malformed entry as ""."""
    refs = sets.get(which) if isinstance(sets, dict) else None
    return [
        name if isinstance(ref, dict) and isinstance(name := ref.get("name"), str) else ""
        for ref in (refs if isinstance(refs, list) else [])
    ]


def _unmodelled(ref: Any) -> bool:
    return isinstance(ref, dict) and ref.get("name") in NOT_MODELLED


# The extension points read: those of the scenario's `scheduler` section (the filters', the scores'
# and the built-in plugins').
_POINTS_READ = tuple(to_camel(point) for point in Plugins.model_fields)

_ARGS = {
    "NodeResourcesFit": ("scoringStrategy",),
    "NodeResourcesBalancedAllocation": ("resources",),
    "InterPodAffinity": ("hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods"),
}


@dataclass
class TimelineEntry:
    """One ScenarioTimelineEvent: an operation's result, or what the scheduler did to a pod."""

    time: int
    operation: str
    body: dict[str, Any]
    pod: str | None = None  # PodScheduled / PodUnscheduled / PodPreempted: the pod, for its PodResult
    at: int = 0  # the kernel instant (PodResult's attempts up to it)


@dataclass
class FakeTimeRun:
    """One KEP-140 Scenario, wired and ready to run. Deterministic: the same scenario and seed give the same results.
    It meets `skenario.runs.Runnable`."""

    kind: ClassVar[str] = "kep140"

    scenario: KepScenario
    source: str = "<scenario>"
    base_dir: Path = field(default_factory=Path.cwd)
    seed: int | None = None
    # A Patch or Delete of an object already gone here (preempted, or evicted by a drain) is skipped
    # and its id kept in `skipped`, instead of failing the run: for replays of a recorded cluster,
    # whose scheduler did not preempt and evict as this one does.
    skip_gone: bool = False

    def __post_init__(self) -> None:
        spec = self.scenario.spec
        self.seed = spec.seed if self.seed is None else self.seed
        streams = RandomStreams(self.seed)
        scheduler = scheduler_spec(spec.scheduler_configuration, self.source)
        self.env = Environment(halt_at=HORIZON)
        self.snapshot = ClusterSnapshot()
        self.framework = Framework(
            build_profile(scheduler, self.base_dir), self.snapshot, streams.generator("scheduler.tie-break")
        )
        self.controller = SchedulingController(
            self.env, self.snapshot, self.framework, scheduler.settings(), streams.generator("scheduler.heartbeats")
        )
        self.store = ObjectStore(self.env, self.controller, FAKE_STEP)
        self.phase = Phase.PENDING
        self.message: str | None = "not started"
        self.time = 0  # the current FakeTime
        self.timeline: list[TimelineEntry] = []
        self._events: list[tuple[str, ScenarioEvent]] = []
        self._done: int | None = None
        self._ran: set[str] = set()
        self._seen_scheduler = 0  # controller timeline entries already taken
        self.skipped: list[str] = []  # with skip_gone: the operations whose object was gone
        self.add_events(spec.events, field_prefix="spec.events")

    # -- events ------------------------------------------------------------------------------------

    def add_events(self, events: Iterable[ScenarioEvent], *, field_prefix: str = "events") -> list[str]:
        """Add events; those at a FakeTime already past are ignored (their ids are returned), as KEP-140 says."""
        if self.phase in (Phase.COMPLETED, Phase.FAILED):
            raise ScenarioError(f"the scenario is {self.phase.value}: it takes no more events")
        ignored = []
        known = {event.id for _, event in self._events}
        started = self.phase is not Phase.PENDING
        for i, event in enumerate(events):
            where = f"{field_prefix}.{i}"
            if event.id in known:
                raise ScenarioError(f"an event with the id {event.id!r} exists already", field=f"{where}.id")
            known.add(event.id)
            if started and event.time <= self.time:
                ignored.append(event.id)
                continue
            self._events.append((where, event))
        return ignored

    def _events_at(self, time: int) -> list[tuple[str, ScenarioEvent]]:
        return [(where, e) for where, e in self._events if e.time == time]

    # -- running -----------------------------------------------------------------------------------

    def run(self, until: int | None = None, *, steps: int = 1, progress: Callable[[int], object] | None = None) -> None:
        """Run every event not yet run (up to FakeTime `until`), step by step; pause after the last, or
        complete at Done. `progress(now)` hears each FakeTime step: the steps are the scenario's own."""
        if self.phase in (Phase.COMPLETED, Phase.FAILED):
            raise RuntimeError(f"the scenario is {self.phase.value.lower()}: {self.message}")
        self.phase, self.message = Phase.RUNNING, None
        times = sorted(
            {e.time for _, e in self._events if e.id not in self._ran and (until is None or e.time <= until)}
        )
        try:
            for time in times:
                self._step(time)
                if progress is not None:
                    progress(self.env.now())
                if self._done is not None:
                    break
        except ScenarioError as exc:
            self.phase, self.message = Phase.FAILED, str(exc)
            raise
        if self._done is not None:
            self.phase, self.message = Phase.COMPLETED, f"done at FakeTime {self._done}"
        else:
            self.phase = Phase.PAUSED
            self.message = f"paused at FakeTime {self.time}: every event has run and none was Done"

    def _step(self, time: int) -> None:
        """One FakeTime step: its operations, then the scheduler (and drains) until nothing more moves."""
        self.time = time
        events = self._events_at(time)
        at = instant(time)

        def operations() -> None:
            for where, event in sorted(events, key=lambda item: item[1].operation == "Done"):
                try:
                    self._apply(where, event)
                except ScenarioError as exc:  # named by its id as well as its field
                    exc.message = f"event {event.id!r} at FakeTime {event.time}: {exc.message}"
                    exc.args = (exc.message,)
                    raise
            self.store.retry_drains()

        self.env.call_at(at, operations)
        self.env.run(until=at + 1)
        self._take_scheduler_events()

    def _apply(self, where: str, event: ScenarioEvent) -> None:
        self._ran.add(event.id)
        body = event.body
        result: dict[str, Any]
        if event.operation == "Done":
            self._done = event.time
            result = {"done": True}
        elif event.operation == "Create":
            self.store.create(body.object, f"{where}.createOperation.object")
            result = {"object": body.object}
        elif self.skip_gone and not self.store.holds(
            body.type_meta.kind, body.object_meta.namespace, body.object_meta.name
        ):
            self.skipped.append(event.id)
            return
        elif event.operation == "Patch":
            meta = body.object_meta
            patch = parse_patch(body.patch, f"{where}.patchOperation.patch")
            _, after = self.store.patch(
                body.type_meta.kind, meta.namespace, meta.name, patch, f"{where}.patchOperation"
            )
            result = {
                "typeMeta": body.type_meta.model_dump(by_alias=True),
                "objectMeta": meta.model_dump(exclude_defaults=True),
                "patch": body.patch,
                "object": after,
            }
        else:
            meta = body.object_meta
            self.store.delete(body.type_meta.kind, meta.namespace, meta.name, f"{where}.deleteOperation")
            result = {
                "typeMeta": body.type_meta.model_dump(by_alias=True),
                "objectMeta": meta.model_dump(exclude_defaults=True),
            }
        key = event.operation.lower()
        self.timeline.append(TimelineEntry(event.time, event.operation, {"id": event.id, key: result}))

    def _holds(self, body: Any) -> bool:
        """Whether the object a Patch or Delete names is here now."""
        return self.store.holds(body.type_meta.kind, body.object_meta.namespace, body.object_meta.name)

    def _take_scheduler_events(self) -> None:
        """The scheduler's PodScheduled / PodUnscheduled / PodPreempted, and a drain's evictions, into the timeline."""
        kinds = {"PodScheduled": "podScheduled", "PodUnscheduled": "podUnscheduled", "PodPreempted": "podPreempted"}
        events = self.controller.timeline[self._seen_scheduler :]
        self._seen_scheduler = len(self.controller.timeline)
        evicted = {(at, pod) for at, pod, _ in self.store.evicted}
        for event in events:
            time = fake_time(event.at)
            if event.kind in kinds:
                self.timeline.append(TimelineEntry(time, event.kind, {}, event.pod, event.at))
            elif event.kind == "PodFinished" and (event.at, event.pod) in evicted:
                namespace, _, name = event.pod.rpartition("/")
                body = {
                    "typeMeta": {"apiVersion": "v1", "kind": "Pod"},
                    "objectMeta": {"name": name, "namespace": namespace or "default"},
                }
                self.timeline.append(
                    TimelineEntry(time, "Delete", {"delete": body, "reason": f"evicted: node {event.node} drained"})
                )

    # -- results -----------------------------------------------------------------------------------

    def pod_result(self, pod: Pod, until: int | None = None, *, plugin_results: bool = True) -> dict[str, Any]:
        """KEP-140's PodResult: the pod, where and when it was bound or preempted, and each ScheduleResult."""
        attempts = [a for a in pod.attempts if until is None or a.at <= until]
        manifest = self._manifest(pod)
        return {
            "pod": manifest,
            "boundTo": pod.node if pod.bound_at is not None and (until is None or pod.bound_at <= until) else None,
            "preemptedBy": pod.preempted_by
            if pod.preempted_at is not None and (until is None or pod.preempted_at <= until)
            else None,
            "createdAt": fake_time(pod.created_at),
            "boundAt": _fake(pod.bound_at, until),
            "preemptedAt": _fake(pod.preempted_at, until),
            "scheduleResult": [schedule_result(a, plugin_results=plugin_results) for a in attempts],
        }

    def _manifest(self, pod: Pod) -> dict[str, Any]:
        namespace, _, name = pod.name.rpartition("/")
        manifest = self.store.objects.get(("Pod", namespace or "default", name))
        if manifest is not None:
            if pod.bound_at is None or manifest.get("spec", {}).get("nodeName"):
                return manifest
            return {**manifest, "spec": {**manifest.get("spec", {}), "nodeName": pod.node}}
        owner = pod.owner
        meta: dict[str, Any] = {"name": name, "namespace": namespace or "default", "labels": dict(pod.spec.labels)}
        if owner is not None:
            meta["ownerReferences"] = [
                {"kind": owner.kind if owner.kind != "Deployment" else "ReplicaSet", "name": owner.name}
            ]
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": meta,
            "spec": {"nodeName": pod.node} if pod.bound_at else {},
        }

    def result(self, *, plugin_results: bool = True) -> dict[str, Any]:
        """KEP-140's ScenarioResult: the simulator's version and the Timeline keyed by FakeTime."""
        timeline: dict[str, list[dict[str, Any]]] = {}
        for entry in self.timeline:
            event: dict[str, Any] = {"time": entry.time, "operation": entry.operation}
            if entry.pod is not None:
                key = entry.operation[0].lower() + entry.operation[1:]
                pod = self.controller.pods[entry.pod]
                event[key] = self.pod_result(pod, until=entry.at, plugin_results=plugin_results)
            else:
                event |= entry.body
            timeline.setdefault(str(entry.time), []).append(event)
        return {"simulatorVersion": f"skenario {__version__}", "timeline": timeline}

    def status(self, *, plugin_results: bool = True) -> dict[str, Any]:
        """KEP-140's ScenarioStatus: phase, message, the current FakeTime and the ScenarioResult."""
        result = self.result(plugin_results=plugin_results)
        return {"phase": self.phase.value, "message": self.message, "time": self.time, "scenarioResult": result}

    def plugin_verdicts(self) -> int:
        """How many (node, plugin) results every attempt holds together: what the full ScenarioResult weighs."""
        return sum(
            sum(len(f.nodes) for f in a.filters) + len(a.feasible) * len(a.scores)
            for pod in self.controller.pods.values()
            for a in pod.attempts
        )

    def pause_soon(self) -> None:
        """Return from the kernel after the movement under way: the stop is then the caller's to make
        (`skenario.runs.execute` keeps no KEP-140 run stopped half-way)."""
        self.env.pause_soon()

    def fail(self, message: str) -> None:
        """Mark the run Failed: it was stopped from outside."""
        self.phase, self.message = Phase.FAILED, message

    def simulated(self) -> int:
        """The kernel's time reached, in ns (FakeTime is `time`)."""
        return self.env.now()

    def summary(self) -> SchedulingSummary:
        return summarize(self.controller, self.env.now())

    def pods(self) -> list[Pod]:
        return list(self.controller.pods.values())

    def documents(self) -> dict[str, Any]:
        """What the run store keeps: the summary, the pods and attempts tables, and the KEP's status."""
        pods = self.pods()
        return {
            "scheduling": self.summary().as_dict(),
            "pods": pod_records(pods),
            "attempts": attempt_records(pods),
            "kep140": self.status(plugin_results=self.plugin_verdicts() <= STORED_PLUGIN_RESULTS),
        }

    def steps(self) -> list[dict[str, Any]]:
        """Per FakeTime step: operations run, pods scheduled, left unschedulable and preempted, and nodes."""
        rows: dict[int, dict[str, Any]] = {}
        for entry in self.timeline:
            row = rows.setdefault(
                entry.time, {"time": entry.time, "operations": 0, "scheduled": 0, "unschedulable": 0, "preempted": 0}
            )
            if (
                entry.operation in ("Create", "Patch", "Delete", "Done")
                and entry.pod is None
                and "reason" not in entry.body
            ):
                row["operations"] += 1
            elif entry.operation == "PodScheduled":
                row["scheduled"] += 1
            elif entry.operation == "PodUnscheduled":
                row["unschedulable"] += 1
            elif entry.operation == "PodPreempted":
                row["preempted"] += 1
        return [rows[t] for t in sorted(rows)]


def _fake(at: int | None, until: int | None) -> int | None:
    if at is None or (until is not None and at > until):
        return None
    return fake_time(at)


def schedule_result(attempt: Attempt, *, plugin_results: bool = True) -> dict[str, Any]:
    """KEP-140's ScenarioPodScheduleResult for one attempt (the nodes the filters ran on are its candidates)."""
    if not plugin_results:
        return {
            "time": fake_time(attempt.at),
            "allCandidateNodes": len(attempt.examined),
            "allFilteredNodes": len(attempt.feasible),
            "selectedNode": attempt.selected,
            "message": attempt.message or None,
        }
    return {
        "time": fake_time(attempt.at),
        "allCandidateNodes": [attempt.node_names[i] for i in attempt.examined],
        "allFilteredNodes": attempt.filtered_nodes,
        "pluginResults": {
            "filter": attempt.filter_results(),
            "score": {
                node: {
                    plugin: {"rawScore": s["raw"], "normalizedScore": s["normalized"], "finalScore": s["final"]}
                    for plugin, s in plugins.items()
                }
                for node, plugins in attempt.score_results().items()
            },
        },
        "selectedNode": attempt.selected,
        "message": attempt.message or None,
    }


SCENARIO_SHAPE = "a KEP-140 Scenario: {apiVersion, kind: Scenario, metadata: {name}, spec: {events: [...]}}"


def load_kep_scenario(path: str | Path) -> KepScenario:
    """Read and validate a KEP-140 Scenario file."""
    return parse_kep_scenario(read_text(path), str(path))


def parse_kep_scenario(text: str, source: str = "<scenario>") -> KepScenario:
    documents = yaml_documents(text, source)
    if len(documents) != 1:
        raise ScenarioError(f"a KEP-140 Scenario is one YAML document, found {len(documents)}", file=source)
    data, root = documents[0]
    return validate_node(data, root, KepScenario, source, SCENARIO_SHAPE)


def kep_scenario(text: str, source: str, *, documents: Documents | None = None) -> KepScenario | None:
    """The file's KEP-140 Scenario if that is what it holds (None: skenario's own format); `documents`:
    the text already read."""
    documents = yaml_documents(text, source) if documents is None else documents
    data, root = documents[0]
    if len(documents) != 1 or not is_kep_scenario(data):
        return None
    return validate_node(data, root, KepScenario, source, SCENARIO_SHAPE)
