"""The scheduler on the clock: `SchedulingController` driven through `BatchReplay` or on an `Environment`.

What is checked, and where each property comes from:

- Conservation: every pod is in exactly one stock (pending, bound, done: `pods.py`), no node is ever
  asked for more than its allocatable (the NodeResourcesFit filter, §2.3 of the reference note), a
  pod is bound no earlier than it was created, and a pod that completed ran exactly its duration.
- KEP-140's same-time rule: a pass runs once everything of the instant has happened and takes pods
  by (priority, creation, name), so neither the order pods are handed in nor the order of same-time
  events changes who goes where (§1.2, the step loop "apply the operations, then schedule").
- Preemption (§2.7): victims have lower priority, the preemptor is nominated and bound in a later
  cycle of the same instant, the greedy reprieve leaves no victim that could have stayed,
  `preemptionPolicy: Never`, equal priorities and a profile without DefaultPreemption preempt nothing.
- Waiting: a pod that does not fit is bound when room is freed, at once or at the node's next
  heartbeat plus the delay (YARN SLS's NodeManager heartbeats, §3), and a pod that can never fit
  is not retried when nothing frees room for it (the queueing hints in `controller.py`'s docstring).
- `analysis.allocation_over_time` and `time_weighted_mean` against hand computations.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.core.environment import Environment
from skenario.core.random import RandomStreams
from skenario.core.rt import RealtimeClock
from skenario.core.time import MILLISECOND, SECOND
from skenario.scheduling.analysis import allocation_over_time, pod_records, time_weighted_mean
from skenario.scheduling.attempts import name_matcher
from skenario.scheduling.controller import SchedulerSettings, SchedulingController
from skenario.scheduling.framework import Framework, Profile, default_profile
from skenario.scheduling.objects import NEVER, PREEMPT_LOWER_PRIORITY, NodeSpec, PodSpec
from skenario.scheduling.pods import PodEnd
from skenario.scheduling.preemption import PreemptionBudget
from skenario.scheduling.replay import BatchReplay, summarize
from skenario.scheduling.snapshot import ClusterSnapshot
from skenario.scheduling.traces import TracePod

GIB = 1024**3


def _profile(tie_break: str = "random") -> Profile:
    profile = default_profile()
    profile.tie_break = tie_break
    return profile


def _replay(
    nodes: Sequence[NodeSpec],
    pods: Sequence[TracePod],
    tie_break: str = "random",
    seed: int = 0,
    scheduler: SchedulerSettings | None = None,
) -> BatchReplay:
    r = BatchReplay(nodes, pods, profile=_profile(tie_break), settings=scheduler or SchedulerSettings(), seed=seed)
    r.run()
    return r


@dataclass
class Direct:
    """A controller on a bare Environment, for tests that decide when each pod is created."""

    env: Environment
    controller: SchedulingController

    @classmethod
    def build(cls, nodes: Sequence[NodeSpec], halt: int, tie_break: str = "random", seed: int = 0) -> Direct:
        env = Environment(halt_at=halt)
        snap = ClusterSnapshot(nodes)
        streams = RandomStreams(seed)
        framework = Framework(_profile(tie_break), snap, streams.generator("tie-break"))
        controller = SchedulingController(env, snap, framework, SchedulerSettings(), streams.generator("heartbeats"))
        return cls(env, controller)

    def create_later(self, when: int, spec: PodSpec, at: int, duration: int | None) -> None:
        """Call `create` at `when` (so its movement is scheduled after everything scheduled before)."""
        self.env.call_at(when, lambda: self.controller.create(spec, at, duration))


def _bindings(controller: SchedulingController) -> dict[str, str | None]:
    return {name: (pod.node if pod.bound_at is not None else None) for name, pod in controller.pods.items()}


def _timeline_without_creations(controller: SchedulingController) -> list[tuple[int, str, str, str | None, str]]:
    return [(e.at, e.kind, e.pod, e.node, e.detail) for e in controller.timeline if e.kind != "PodCreated"]


def _creations(controller: SchedulingController) -> list[tuple[int, str]]:
    return sorted((e.at, e.pod) for e in controller.timeline if e.kind == "PodCreated")


# -- conservation ----------------------------------------------------------------------------------


@st.composite
def traces(draw: st.DrawFn) -> tuple[list[NodeSpec], list[TracePod]]:
    nodes = [
        NodeSpec(
            f"n{i}",
            cpu=draw(st.integers(500, 4000)),
            memory=draw(st.integers(GIB // 2, 4 * GIB)),
            pods=draw(st.integers(2, 6)),
        )
        for i in range(draw(st.integers(1, 3)))
    ]
    pods = []
    for k in range(draw(st.integers(1, 14))):
        spec = PodSpec(
            f"p{k:02d}",
            cpu=draw(st.one_of(st.none(), st.integers(0, 3000))),
            memory=draw(st.one_of(st.none(), st.integers(0, 3 * GIB))),
            priority=draw(st.integers(0, 2)),
        )
        created = draw(st.integers(1, 12)) * SECOND + draw(st.sampled_from((0, 0, 1, 500 * MILLISECOND)))
        pods.append(TracePod(spec, created, draw(st.integers(1, 8)) * SECOND))
    return nodes, pods


@settings(max_examples=150, deadline=None)
@given(traces(), st.sampled_from(("random", "first")))
def test_every_pod_is_in_one_stock_and_no_node_is_overcommitted(
    trace: tuple[list[NodeSpec], list[TracePod]], tie_break: str
) -> None:
    nodes, trace_pods = trace
    r = _replay(nodes, trace_pods, tie_break)
    ctl = r.controller
    pods = list(ctl.pods.values())
    assert sorted(p.name for p in pods) == sorted(p.spec.name for p in trace_pods)

    pending, bound = set(ctl.pending), set(ctl.bound)
    done = {p for p in pods if p.finished_at is not None}
    for pod in pods:
        assert (pod in pending) + (pod in bound) + (pod in done) == 1, pod.name
    assert len(pods) == len(pending) + len(bound) + len(done)
    assert ctl.done.count() == len(done)

    trace_by_name = {p.spec.name: p for p in trace_pods}
    for pod in pods:
        if pod.bound_at is not None:
            assert pod.bound_at >= pod.created_at
            assert pod.node is not None
        if pod in pending:
            assert pod.bound_at is None
        if pod.end is PodEnd.COMPLETED:
            assert pod.finished_at is not None and pod.bound_at is not None
            assert pod.finished_at - pod.bound_at == trace_by_name[pod.name].duration
        if pod.end is PodEnd.PREEMPTED:
            assert pod.preempted_by is not None
            assert ctl.pods[pod.preempted_by].spec.priority > pod.spec.priority
            assert pod.finished_at == pod.preempted_at
        if pod in bound:  # still running at the end: its run would have ended at or after the halt
            assert pod.bound_at is not None and pod.duration is not None
            assert pod.bound_at + pod.duration >= r.end

    # Each pod is bound at most once, and the timeline says so.
    scheduled = [e.pod for e in ctl.timeline if e.kind == "PodScheduled"]
    assert sorted(scheduled) == sorted(p.name for p in pods if p.bound_at is not None)
    preempted = [e.pod for e in ctl.timeline if e.kind == "PodPreempted"]
    assert sorted(preempted) == sorted(p.name for p in pods if p.end is PodEnd.PREEMPTED)

    # The nodes' books at the end: what is still bound there, within allocatable and max pods.
    snap = r.snapshot
    for i, node in enumerate(nodes):
        on_node = sorted(p.name for p in bound if p.node == node.name)
        assert sorted(snap.pods_on[i]) == on_node
        assert len(on_node) <= node.pods
        assert (snap.requested[i] <= snap.allocatable[i]).all()
        assert snap.requested[i, 0] == sum(p.spec.cpu or 0 for p in bound if p.node == node.name)

    # Replaying the allocation log: no prefix ever puts a node over its allocatable.
    width = len(snap.resources)
    used = np.zeros((len(nodes), width), dtype=np.int64)
    for _, i, delta in ctl.allocation_log:
        used[i, : len(delta)] += np.array(delta, dtype=np.int64)
        assert (used[i] >= 0).all()
        assert (used[i] <= snap.allocatable[i]).all()
    assert (used == snap.requested).all()


# -- KEP-140: same-time events -----------------------------------------------------------------------


same_time_pods = st.lists(st.tuples(st.integers(100, 2500), st.integers(0, 2)), min_size=2, max_size=8).map(
    lambda items: [PodSpec(f"s{k}", cpu=cpu, memory=64 * 1024**2, priority=prio) for k, (cpu, prio) in enumerate(items)]
)

NODES = [
    NodeSpec("na", cpu=3000, memory=4 * GIB),
    NodeSpec("nb", cpu=3000, memory=4 * GIB),
    NodeSpec("nc", cpu=2000, memory=4 * GIB),
]
T = 5 * SECOND


@settings(max_examples=60, deadline=None)
@given(same_time_pods.flatmap(lambda specs: st.tuples(st.just(specs), st.permutations(specs))), st.data())
@pytest.mark.parametrize("tie_break", ["first", "random"])
def test_pods_created_at_one_instant_bind_the_same_whatever_their_order(
    tie_break: str, specs_and_perm: tuple[list[PodSpec], list[PodSpec]], data: st.DataObject
) -> None:
    specs, permuted = specs_and_perm
    durations = {s.name: data.draw(st.integers(1, 5)) * SECOND for s in specs}
    # Through BatchReplay (which runs until nothing is left to happen).
    replays = [
        _replay(NODES, [TracePod(s, T, durations[s.name]) for s in order], tie_break, seed=11).controller
        for order in (specs, permuted)
    ]
    # Straight on the controller, creating the pods in the given order (and halting later).
    directs = []
    for order in (specs, permuted):
        d = Direct.build(NODES, halt=40 * SECOND, tie_break=tie_break, seed=11)
        for s in order:
            d.controller.create(s, T, durations[s.name])
        d.env.run()
        directs.append(d.controller)
    for first, other in (replays, directs):
        assert _bindings(other) == _bindings(first)
        assert _timeline_without_creations(other) == _timeline_without_creations(first)
        assert _creations(other) == _creations(first)
    # Before the direct runs' halt at 40 s, the two ways agree too.
    halt = 40 * SECOND
    direct = [(e.at, e.kind, e.pod, e.node) for e in directs[0].timeline if e.at < halt and e.kind != "PodCreated"]
    replayed = [(at, kind, pod, node) for at, kind, pod, node, _ in _timeline_without_creations(replays[0])]
    assert direct == [event for event in replayed if event[0] < halt]


@settings(max_examples=60, deadline=None)
@given(same_time_pods.flatmap(lambda specs: st.tuples(st.just(specs), st.permutations(specs))))
@pytest.mark.parametrize("tie_break", ["first", "random"])
def test_a_node_freed_at_the_instant_pods_arrive_counts_whichever_event_comes_first(
    tie_break: str, specs_and_perm: tuple[list[PodSpec], list[PodSpec]]
) -> None:
    """A blocker fills a 3000m node from 1 s and ends exactly at T, when the new pods arrive.

    The arrivals are scheduled before the blocker's end (created up front) or after it (created by a
    call at 2 s, once the end is on the schedule), and in two orders: all four runs bind alike, and
    the freed node is available to the pods of that instant in each.
    """
    specs, permuted = specs_and_perm
    blocker = PodSpec("blocker", cpu=3000, memory=4 * GIB)
    runs = []
    for order in (specs, permuted):
        for arrivals_first in (True, False):
            d = Direct.build(NODES, halt=30 * SECOND, tie_break=tie_break, seed=5)
            d.controller.create(blocker, 1 * SECOND, T - 1 * SECOND)
            for s in order:
                if arrivals_first:
                    d.controller.create(s, T, 4 * SECOND)
                else:
                    d.create_later(2 * SECOND, s, T, 4 * SECOND)
            d.env.run()
            runs.append(d.controller)
    first = runs[0]
    assert first.pods["blocker"].finished_at == T
    for other in runs[1:]:
        assert _bindings(other) == _bindings(first)
        assert _timeline_without_creations(other) == _timeline_without_creations(first)
        assert _creations(other) == _creations(first)
    # The freed node was seen by the pass at T: it is empty then and any of these pods fits an empty
    # 3000m node, so if some pod had to wait at T, the freed node took a pod at T.
    freed = first.pods["blocker"].node
    others = [p for p in first.pods.values() if p.name != "blocker"]
    if any(p.bound_at is None or p.bound_at > T for p in others):
        assert any(p.node == freed and p.bound_at == T for p in others)


# -- preemption ----------------------------------------------------------------------------------------


def _preemption_case(low: Sequence[tuple[int, int]], preemptor: PodSpec, cpu: int = 1000) -> tuple[BatchReplay, int]:
    """Low pods (cpu, priority) created one a second from 1 s on a one-node cluster; then the preemptor."""
    trace = [
        TracePod(PodSpec(f"low{k}", cpu=c, memory=1, priority=p), (k + 1) * SECOND, None)
        for k, (c, p) in enumerate(low)
    ]
    at = (len(low) + 1) * SECOND
    trace.append(TracePod(preemptor, at, None))
    return _replay([NodeSpec("node", cpu=cpu, memory=GIB)], trace), at


def test_a_high_priority_pod_preempts_the_least_important_low_priority_pod() -> None:
    """1000m node with three 300m pods at priority 0 started at 1, 2 and 3 s; a 400m pod at priority 100.

    Removing every lower-priority pod makes room; the reprieve puts back the most important first
    (the earliest started): low0 (300 + 400 = 700 fits), low1 (1000 fits), low2 (1300 does not).
    So low2 alone is the victim, and the preemptor is bound at 4 s, in the cycle after the one that
    nominated the node.
    """
    high = PodSpec("high", cpu=400, memory=1, priority=100)
    r, at = _preemption_case([(300, 0), (300, 0), (300, 0)], high)
    pods = r.controller.pods
    victim = pods["low2"]
    assert victim.end is PodEnd.PREEMPTED
    assert victim.preempted_by == "high"
    assert victim.preempted_at == at == victim.finished_at
    assert victim.spec.priority < high.priority
    for name in ("low0", "low1"):
        assert pods[name].end is None and pods[name] in r.controller.bound
    h = pods["high"]
    assert (h.node, h.bound_at) == ("node", at)
    assert [(a.selected, a.nominated) for a in h.attempts] == [(None, "node"), ("node", None)]
    assert all(a.at == at for a in h.attempts)
    preempted = [e for e in r.controller.timeline if e.kind == "PodPreempted"]
    assert [(e.at, e.pod, e.node) for e in preempted] == [(at, "low2", "node")]
    assert "high" in preempted[0].detail


def test_a_disruption_budget_steers_the_victim_to_a_pod_it_does_not_cover() -> None:
    """The case above, with low2 under a budget that allows no disruption: the reprieve puts back
    the violating low2 first (700 fits), then low0 (1000 fits), and low1 (1300) is the victim."""
    trace = [
        TracePod(PodSpec(f"low{k}", cpu=300, memory=1, priority=0, labels=labels), (k + 1) * SECOND, None)
        for k, labels in enumerate(({}, {}, {"app": "foo"}))
    ]
    trace.append(TracePod(PodSpec("high", cpu=400, memory=1, priority=100), 4 * SECOND, None))
    r = BatchReplay([NodeSpec("node", cpu=1000, memory=GIB)], trace, profile=_profile("random"))
    r.controller.preemption_budgets = lambda: [PreemptionBudget(lambda p: p.labels.get("app") == "foo", 0)]
    r.run()
    pods = r.controller.pods
    assert pods["low1"].end is PodEnd.PREEMPTED
    assert pods["low0"].end is None and pods["low2"].end is None
    assert pods["high"].node == "node"


def test_a_preemptor_with_policy_never_preempts_nothing() -> None:
    high = PodSpec("high", cpu=400, memory=1, priority=100, preemption_policy=NEVER)
    r, _ = _preemption_case([(300, 0), (300, 0), (300, 0)], high)
    assert all(p.end is None for p in r.controller.pods.values())
    assert r.controller.pods["high"].bound_at is None
    assert not [e for e in r.controller.timeline if e.kind == "PodPreempted"]


def test_a_profile_without_default_preemption_preempts_nothing() -> None:
    """The first preemption case with no PostFilter plugin: upstream's schedulingCycle returns the pod
    Unschedulable without running PostFilter, so high waits, nominated nowhere, and the low pods run on."""
    trace = [TracePod(PodSpec(f"low{k}", cpu=300, memory=1, priority=0), (k + 1) * SECOND, None) for k in range(3)]
    trace.append(TracePod(PodSpec("high", cpu=400, memory=1, priority=100), 4 * SECOND, None))
    profile = default_profile()
    profile.preemption = False
    r = BatchReplay([NodeSpec("node", cpu=1000, memory=GIB)], trace, profile=profile)
    r.run()
    pods = r.controller.pods
    assert all(pods[f"low{k}"].end is None and pods[f"low{k}"].node == "node" for k in range(3))
    high = pods["high"]
    assert (high.node, high.nominated, high.bound_at) == (None, None, None)
    assert [(a.selected, a.nominated) for a in high.attempts] == [(None, None)]
    assert [e.kind for e in r.controller.timeline if e.pod == "high"] == ["PodCreated", "PodUnscheduled"]


def test_equal_priority_preempts_nothing() -> None:
    peer = PodSpec("peer", cpu=400, memory=1, priority=5)
    r, _ = _preemption_case([(300, 5), (300, 5), (300, 5)], peer)
    assert all(p.end is None for p in r.controller.pods.values())
    assert r.controller.pods["peer"].bound_at is None
    assert not [e for e in r.controller.timeline if e.kind == "PodPreempted"]


def test_a_pod_already_evicted_is_not_preempted_again_by_a_second_preemptor() -> None:
    """Two 500m pods at priority 10 arrive together on a 1000m node full of two 500m pods at priority 0.

    high-1 goes first (same priority and creation, name order) and evicts low-b, the less important
    victim (started later). low-b is then terminating: its room is high-1's, so high-2 must make room
    of its own by evicting low-a; evicting low-b a second time frees nothing for it (upstream counts
    high-1, nominated to the node, in high-2's dry run). So each victim is preempted once, by the
    pod it made room for, and the timeline has one PodPreempted per victim.
    """
    trace = [
        TracePod(PodSpec("low-a", cpu=500, memory=1), 1 * SECOND, None),
        TracePod(PodSpec("low-b", cpu=500, memory=1), 2 * SECOND, None),
        TracePod(PodSpec("high-1", cpu=500, memory=1, priority=10), 3 * SECOND, None),
        TracePod(PodSpec("high-2", cpu=500, memory=1, priority=10), 3 * SECOND, None),
    ]
    r = _replay([NodeSpec("node", cpu=1000, memory=GIB)], trace)
    pods = r.controller.pods
    assert [(pods[n].node, pods[n].bound_at) for n in ("high-1", "high-2")] == [("node", 3 * SECOND)] * 2
    assert pods["low-a"].end is PodEnd.PREEMPTED and pods["low-b"].end is PodEnd.PREEMPTED
    preempted = [(e.pod, e.detail) for e in r.controller.timeline if e.kind == "PodPreempted"]
    assert sorted(pod for pod, _ in preempted) == ["low-a", "low-b"]
    assert pods["low-b"].preempted_by == "high-1"
    assert pods["low-a"].preempted_by == "high-2"


@st.composite
def preemption_cases(draw: st.DrawFn) -> tuple[int, list[tuple[int, int]], PodSpec]:
    cpu = draw(st.integers(1000, 4000))
    low: list[tuple[int, int]] = []
    for size, prio in draw(st.lists(st.tuples(st.integers(1, cpu // 2), st.integers(0, 5)), min_size=1, max_size=6)):
        if sum(c for c, _ in low) + size <= cpu:  # every low pod fits when it comes
            low.append((size, prio))
    policy = draw(st.sampled_from((PREEMPT_LOWER_PRIORITY, PREEMPT_LOWER_PRIORITY, NEVER)))
    pre = PodSpec(
        "pre", cpu=draw(st.integers(1, cpu)), memory=1, priority=draw(st.integers(0, 8)), preemption_policy=policy
    )
    return cpu, low, pre


@settings(max_examples=200, deadline=None)
@given(preemption_cases())
def test_preemption_frees_just_enough_and_only_from_lower_priorities(
    case: tuple[int, list[tuple[int, int]], PodSpec],
) -> None:
    cpu, low, pre = case
    r, at = _preemption_case(low, pre, cpu)
    pods = r.controller.pods
    lows = [pods[f"low{k}"] for k in range(len(low))]
    assert all(p.bound_at is not None for p in lows)
    free = cpu - sum(c for c, _ in low)
    lower = sum(c for c, p in low if p < pre.priority)
    victims = [p for p in lows if p.end is PodEnd.PREEMPTED]
    survivors = [p for p in lows if p.end is None]
    assert len(victims) + len(survivors) == len(lows)
    p = pods["pre"]
    if pre.cpu <= free:  # fits as it is
        assert victims == []
        assert p.bound_at == at
    elif pre.preemption_policy == NEVER or lower < pre.cpu - free:  # may not, or cannot, make room
        assert victims == []
        assert p.bound_at is None
    else:
        assert victims
        for v in victims:
            assert v.spec.priority < pre.priority
            assert v.preempted_by == "pre"
            assert v.preempted_at == at == v.finished_at
        assert (p.node, p.bound_at) == ("node", at)
        kept = sum(s.spec.cpu or 0 for s in survivors)
        assert kept + pre.cpu <= cpu
        for v in victims:  # no victim could have stayed
            assert kept + (v.spec.cpu or 0) + pre.cpu > cpu
        preempted = sorted(e.pod for e in r.controller.timeline if e.kind == "PodPreempted")
        assert preempted == sorted(v.name for v in victims)


# -- waiting for room ------------------------------------------------------------------------------


def _waiting_case(scheduler: SchedulerSettings | None = None, seed: int = 0) -> BatchReplay:
    """A: 800m on a 1000m node from 1 s for 10 s. B: 500m from 2 s for 7.3 s. C: 600m from 3 s for 1 s."""
    trace = [
        TracePod(PodSpec("A", cpu=800, memory=1), 1 * SECOND, 10 * SECOND),
        TracePod(PodSpec("B", cpu=500, memory=1), 2 * SECOND, 7300 * MILLISECOND),
        TracePod(PodSpec("C", cpu=600, memory=1), 3 * SECOND, 1 * SECOND),
    ]
    r = BatchReplay(
        [NodeSpec("node", cpu=1000, memory=GIB)],
        trace,
        profile=_profile(),
        settings=scheduler or SchedulerSettings(),
        seed=seed,
        until=60 * SECOND,
    )
    r.run()
    return r


def test_a_pod_that_does_not_fit_is_bound_the_instant_room_is_freed() -> None:
    pods = _waiting_case().controller.pods
    a, b, c = pods["A"], pods["B"], pods["C"]
    assert a.bound_at == 1 * SECOND and a.finished_at == 11 * SECOND
    assert b.bound_at == a.finished_at  # 800 + 500 > 1000 until A ends
    assert b.wait == 11 * SECOND - 2 * SECOND
    assert c.bound_at == b.finished_at == b.bound_at + 7300 * MILLISECOND  # 500 + 600 > 1000 until B ends
    assert c.wait == c.bound_at - 3 * SECOND


@pytest.mark.parametrize("seed", range(6))
def test_with_heartbeats_freed_room_is_seen_at_the_nodes_next_heartbeat_plus_the_delay(seed: int) -> None:
    interval, delay = 3 * SECOND, 500 * MILLISECOND
    r = _waiting_case(SchedulerSettings(heartbeat_interval=interval, heartbeat_delay=delay), seed)
    pods = r.controller.pods
    a, b, c = pods["A"], pods["B"], pods["C"]
    assert a.finished_at == 11 * SECOND
    assert b.bound_at is not None and c.bound_at is not None and b.finished_at is not None
    for bound, finish in ((b.bound_at, a.finished_at), (c.bound_at, b.finished_at)):
        assert finish < bound <= finish + interval + delay
        assert bound >= finish + delay  # the news takes the delay to arrive
    # Both were seen at heartbeats of the same node: one phase, so the beats are whole intervals apart.
    assert ((c.bound_at - delay) - (b.bound_at - delay)) % interval == 0


def test_a_pod_larger_than_every_node_waits_forever_and_is_tried_once() -> None:
    """Nothing can ever free room for 2000m on a 1000m node, so pods ending there do not requeue it.

    controller.py: a pod that fits nowhere waits "until something that could help happens (a node
    added or changed, resources freed on a node where it would fit)". Two small pods end meanwhile.
    """
    trace = [
        TracePod(PodSpec("big", cpu=2000, memory=1), 1 * SECOND, 5 * SECOND),
        TracePod(PodSpec("a", cpu=100, memory=1), 1 * SECOND, 2 * SECOND),
        TracePod(PodSpec("b", cpu=100, memory=1), 2 * SECOND, 2 * SECOND),
    ]
    r = _replay([NodeSpec("n1", cpu=1000, memory=GIB)], trace)
    big = r.controller.pods["big"]
    assert big in r.controller.pending and big.bound_at is None and big.end is None
    assert r.controller.pods["a"].end is PodEnd.COMPLETED and r.controller.pods["b"].end is PodEnd.COMPLETED
    unscheduled = [e for e in r.controller.timeline if e.kind == "PodUnscheduled" and e.pod == "big"]
    assert len(unscheduled) == 1
    assert unscheduled[0].detail == "0/1 nodes are available: 1 Insufficient cpu."


def test_a_pod_larger_than_every_node_is_bound_when_a_big_enough_node_joins() -> None:
    d = Direct.build([NodeSpec("small", cpu=1000, memory=GIB)], halt=20 * SECOND)
    big = d.controller.create(PodSpec("big", cpu=2000, memory=1), 1 * SECOND, None)
    d.env.call_at(7 * SECOND, lambda: d.controller.add_node(NodeSpec("large", cpu=4000, memory=GIB)))
    d.env.run()
    assert (big.node, big.bound_at) == ("large", 7 * SECOND)
    assert big.wait == 6 * SECOND


# -- analysis -----------------------------------------------------------------------------------------


def test_allocation_over_time_matches_a_hand_computation() -> None:
    """2 nodes of 1000m / 1000 bytes (2000 / 2000 in all); every pod is bound the instant it comes.

    p1 500m/100 at 1 s for 4 s, p2 1000m/200 at 2 s for 2 s, p3 300m/300 at 3 s for 5 s.
    cpu:    0, 1 s 500 -> .25, 2 s 1500 -> .75, 3 s 1800 -> .90, 4 s (p2 ends) 800 -> .40,
            5 s (p1 ends) 300 -> .15, 8 s (p3 ends) 0.
    memory: 0, .05, .15, .30, .20, .15, 0.
    The replay ends just after its last event (8 s); its mean runs from the first arrival (1 s).
    """
    trace = [
        TracePod(PodSpec("p1", cpu=500, memory=100), 1 * SECOND, 4 * SECOND),
        TracePod(PodSpec("p2", cpu=1000, memory=200), 2 * SECOND, 2 * SECOND),
        TracePod(PodSpec("p3", cpu=300, memory=300), 3 * SECOND, 5 * SECOND),
    ]
    nodes = [NodeSpec("n0", cpu=1000, memory=1000), NodeSpec("n1", cpu=1000, memory=1000)]
    r = BatchReplay(nodes, trace, profile=_profile("first"))
    summary = r.run()
    ctl = r.controller
    assert all(p.bound_at == p.created_at for p in ctl.pods.values())
    frame = allocation_over_time(ctl.allocation_log, ctl.capacity_log, r.snapshot.resources)
    assert frame["time_s"].tolist() == [0, 1, 2, 3, 4, 5, 8]
    assert frame["cpu"].tolist() == pytest.approx([0, 0.25, 0.75, 0.9, 0.4, 0.15, 0])
    assert frame["memory"].tolist() == pytest.approx([0, 0.05, 0.15, 0.3, 0.2, 0.15, 0])
    assert frame["nodes_allocatable_cpu"].tolist() == [2000] * 7
    # Over [1 s, 8 s]: cpu .25 + .75 + .90 + .40 + 3 x .15 = 2.75 over 7 s; memory 1.15 over 7 s.
    assert summary.allocation_mean["cpu"] == pytest.approx(2.75 / 7, rel=1e-6)
    assert summary.allocation_mean["memory"] == pytest.approx(1.15 / 7, rel=1e-6)
    assert summary.allocation_peak == pytest.approx({"cpu": 0.9, "memory": 0.3})
    assert (summary.pods, summary.bound, summary.pending, summary.preempted) == (3, 3, 0, 0)


def test_time_weighted_mean_of_a_step_function() -> None:
    """0 on [0, 2), 0.5 on [2, 5), 1 from 5: over [0, 10] (0*2 + 0.5*3 + 1*5) / 10 = 0.65."""
    frame = pd.DataFrame({"time_s": [0.0, 2.0, 5.0], "x": [0.0, 0.5, 1.0]})
    assert time_weighted_mean(frame, "x", 0, 10) == pytest.approx(0.65)
    # From 3: 0.5 on [3, 5), 1 on [5, 10]: (1 + 5) / 7.
    assert time_weighted_mean(frame, "x", 3, 10) == pytest.approx(6 / 7)
    # Up to 4 only: 0 on [0, 2), 0.5 on [2, 4): 1 / 4.
    assert time_weighted_mean(frame, "x", 0, 4) == pytest.approx(0.25)
    assert time_weighted_mean(frame, "x", 5, 5) == 0.0
    assert time_weighted_mean(frame, "missing", 0, 10) == 0.0


def test_pods_never_bound_count_in_the_waits_until_deleted_or_the_end() -> None:
    # One 1-core node. a (1 core) binds at 0; b (1 core) waits until it is deleted at 40 s; c (1 core)
    # waits to the end at 100 s. Waits: a 0, b 40, c 100 -> mean 140 / 3, longest 100, two never bound.
    direct = Direct.build([NodeSpec("n", cpu=1000, memory=GIB)], halt=200 * SECOND)
    controller = direct.controller
    direct.create_later(0, PodSpec("a", cpu=1000), 0, None)
    direct.create_later(0, PodSpec("b", cpu=1000), 0, None)
    direct.create_later(0, PodSpec("c", cpu=1000), 0, None)
    direct.env.call_at(40 * SECOND, lambda: controller.delete(controller.pods["b"]))
    direct.env.run(until=100 * SECOND)
    summary = summarize(controller, 100 * SECOND)
    assert (summary.bound, summary.never_bound, summary.pending) == (1, 2, 1)
    assert summary.mean_wait_s == pytest.approx(140 / 3)
    assert summary.max_wait_s == pytest.approx(100)


# -- on another clock --------------------------------------------------------------------------------


def test_on_the_realtime_clock_pods_of_one_instant_bind_in_queue_order() -> None:
    """The controller needs only a MovingClock: on the RealtimeClock (a fake wall, so nothing sleeps)
    four pods of 500m created at 5 s in scrambled order meet one node of 1000m. The queue takes them
    by priority, then creation, then name: high-a and high-b bind at 5 s; mid and low wait, and bind
    when the two highs end at 15 s, mid first. The Environment gives the same timeline."""
    specs = [
        PodSpec("low", cpu=500),
        PodSpec("high-b", cpu=500, priority=10),
        PodSpec("mid", cpu=500, priority=5),
        PodSpec("high-a", cpu=500, priority=10),
    ]
    wall = [0]  # the fake wall clock's nanoseconds: it moves only when the RealtimeClock sleeps

    def sleep(seconds: float) -> None:
        wall[0] += round(seconds * 1e9)

    timelines = []
    for clock in (RealtimeClock(wall_ns=lambda: wall[0], sleep=sleep), Environment(halt_at=60 * SECOND)):
        snap = ClusterSnapshot([NodeSpec("n", cpu=1000, memory=4 * GIB)])
        streams = RandomStreams(3)
        framework = Framework(_profile(), snap, streams.generator("tie-break"))
        controller = SchedulingController(clock, snap, framework, SchedulerSettings(), streams.generator("heartbeats"))
        for spec in specs:
            controller.create(spec, T, 10 * SECOND)
        clock.run(until=60 * SECOND)
        timelines.append(_timeline_without_creations(controller))
    realtime, simulated = timelines
    scheduled = [(at, pod) for at, kind, pod, _, _ in realtime if kind == "PodScheduled"]
    assert scheduled == [(T, "high-a"), (T, "high-b"), (T + 10 * SECOND, "mid"), (T + 10 * SECOND, "low")]
    assert realtime == simulated


# -- what is recorded never changes what is decided -------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(traces(), st.sampled_from(("random", "first")))
def test_keeping_plugin_results_or_not_decides_the_same(
    trace: tuple[list[NodeSpec], list[TracePod]], tie_break: str
) -> None:
    """The bindings, preemptions and summary are those of a run keeping every attempt's plugin results,
    whether it keeps all, only the unschedulable ones, or none; and every attempt is counted."""
    nodes, trace_pods = trace
    runs = {
        keep: _replay(nodes, trace_pods, tie_break, scheduler=SchedulerSettings(plugin_results=keep))
        for keep in ("all", "unschedulable", "none")
    }
    records = {keep: pod_records(r.controller.pods.values()) for keep, r in runs.items()}
    assert records["unschedulable"] == records["all"] and records["none"] == records["all"]
    summaries = {keep: r.summary() for keep, r in runs.items()}
    assert summaries["unschedulable"] == summaries["all"] and summaries["none"] == summaries["all"]
    for pod in runs["all"].controller.pods.values():
        assert len(pod.attempts) == pod.tries
    for pod in runs["unschedulable"].controller.pods.values():
        assert all(a.selected is None and a.filters for a in pod.attempts)
        assert len(pod.attempts) == sum(1 for a in runs["all"].controller.pods[pod.name].attempts if a.selected is None)
    assert all(not pod.attempts for pod in runs["none"].controller.pods.values())


def test_results_for_keeps_every_attempt_of_the_pods_it_names() -> None:
    nodes = [NodeSpec("n", cpu=1000, memory=GIB)]
    pods = [TracePod(PodSpec(f"job-{k}", cpu=600, memory=1), k * SECOND, 5 * SECOND) for k in range(1, 4)]
    settings_ = SchedulerSettings(plugin_results="none", results_for=name_matcher(["job-2", "job-3*"]))
    ctl = _replay(nodes, pods, scheduler=settings_).controller
    # Room for one pod at a time. job-1 (1 s) is bound at once; job-2 (2 s) and job-3 (3 s) find no
    # room; when job-1 ends (6 s) both are tried again, job-2 first: it is bound, job-3 fails a second
    # time and is bound when job-2 ends (11 s).
    assert [len(ctl.pods[f"job-{k}"].attempts) for k in (1, 2, 3)] == [0, 2, 3]
    assert [ctl.pods[f"job-{k}"].tries for k in (1, 2, 3)] == [1, 2, 3]
    assert all(a.filters for k in (2, 3) for a in ctl.pods[f"job-{k}"].attempts)
