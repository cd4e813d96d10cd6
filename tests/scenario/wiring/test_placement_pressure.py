"""A node under memory pressure on a cluster: its condition, its taint, and the kubelet's admission.

The chain, each link naming its upstream function (model/memory.py, model/nodestatus.py,
scheduling/nodelifecycle.py): the eviction manager's pass sets MemoryPressure; the kubelet posts
it at its next node status sync; the node lifecycle controller taints the node NoSchedule at once;
the scheduler's TaintToleration filter keeps new pods off; 5 min after the threshold was last met
the condition clears, and the taint goes at the next sync after that.
"""

from __future__ import annotations

from skenario.core.time import MINUTE, SECOND
from skenario.scenario.loader import parse_scenario
from skenario.scenario.simulation import Simulation
from skenario.scheduling.history import TimelineEvent

PERIOD = 10 * SECOND  # the eviction manager's passes and the kubelet's status syncs alike
T0 = 1  # the initial pods are bound at 1 ns (0 belongs to the run's start): the first passes from then


def _next(phase: int, at: int) -> int:
    """The first tick of a loop at `phase` + k periods, at or after `at`."""
    k = -(-(at - phase) // PERIOD)
    return phase + k * PERIOD


def _events(simulation: Simulation, *kinds: str) -> list[TimelineEvent]:
    placement = simulation.placement
    assert placement is not None
    return [e for e in placement.controller.timeline if e.kind in kinds]


MEMORY_ON_A_NODE = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: memory-on-a-node}
spec:
  duration: 2m
  seed: 5
  workload:
    replicas: 4
    resources: {requests: {cpu: 100m, memory: 128Mi}}
    memory: {baseline: 260Mi}
    request: {cpuTime: 10ms}
  traffic: {type: poisson, rate: 1/s}
  cluster: {nodes: [{name: small, cpu: 4, memory: 1Gi}]}
"""


def test_a_node_under_memory_pressure_takes_no_more_replacements_once_tainted() -> None:
    """Four pods of 128Mi requested fit the 1Gi node by their requests, but their 4 x 260Mi = 1040Mi
    of working sets pass its 1024Mi allocatable (not the kernel's 1124Mi). The kubelet's first pass
    (10 s) sets MemoryPressure and evicts one; its replacement lands on the same node, as the taint
    comes only with the kubelet's next status sync (within 10 s), and the pressure is back when its
    container starts. The second pass (20 s) evicts again, and by then the node is tainted: the
    replacement stays Pending. Two evictions in 2 minutes, where a node without the condition's
    taint took every replacement back and lost one pod a pass (11)."""
    simulation = Simulation(parse_scenario(MEMORY_ON_A_NODE))
    simulation.run()
    placement = simulation.placement
    assert placement is not None
    model = simulation.model
    (node,) = placement.node_memories.values()
    assert node.used == sum(pod.working_set for pod in node.pods) == 3 * 260 * 2**20
    assert model.oom_kills == 0
    assert model.evictions == node.evictions == 2
    assert model.desired == 4 and placement.controller.pending.count() == 1
    (tainted,) = [e for e in placement.controller.timeline if e.kind == "NodeTainted"]
    assert 10 * SECOND < tainted.at <= 20 * SECOND and tainted.node == "small"
    assert node.memory_pressure  # until 5 min after 20 s, beyond the run


PRESSURE = MEMORY_ON_A_NODE.replace("duration: 2m", "duration: 6m") + (
    "  events:\n    - {id: b, at: 15s, create: {target: node/b, object: {cpu: 4, memory: 8Gi}}}\n"
)


def test_a_node_under_pressure_is_tainted_at_the_kubelets_next_sync_and_untainted_after_the_transition() -> None:
    """Four Burstable pods of 260Mi on node small (1Gi allocatable): 1040Mi from the start. Node b joins
    at 15 s. By hand, with the kubelet's status loop at phase p on small:

    10 s   pass: MemoryPressure true, one pod evicted; its replacement goes to small (no taint yet),
           and its container starts at 11 s: 1040Mi again
    T1     the first sync at or after 10 s: the condition posted, small tainted
    20 s   pass: a second eviction; small is tainted, so the replacement goes to b
    5m20s  the pass 5 min after the last threshold met: the condition clears
    T2     the first sync at or after 5m20s: posted, the taint removed
    """
    simulation = Simulation(parse_scenario(PRESSURE))
    simulation.run()
    placement = simulation.placement
    assert placement is not None
    phase = placement.node_statuses["small"].phase  # drawn from the seed: an input here
    first_pass, second_pass = T0 + PERIOD, T0 + 2 * PERIOD
    t1 = _next(phase, first_pass)
    assert first_pass <= t1 < second_pass  # the taint comes between the passes
    clear = second_pass + 5 * MINUTE
    t2 = _next(phase, clear)

    scheduled = [(e.at, e.pod, e.node) for e in _events(simulation, "PodScheduled")]
    assert scheduled[4:] == [(first_pass, "memory-on-a-node-4", "small"), (second_pass, "memory-on-a-node-5", "b")]
    evicted = [(e.at, e.pod) for e in _events(simulation, "PodFinished")]
    assert [at for at, _ in evicted] == [first_pass, second_pass]
    assert simulation.model.evictions == 2

    assert [(e.at, e.kind) for e in _events(simulation, "NodeHasInsufficientMemory", "NodeHasSufficientMemory")] == [
        (t1, "NodeHasInsufficientMemory"),
        (t2, "NodeHasSufficientMemory"),
    ]
    taints = [(e.at, e.kind, e.node, e.detail) for e in _events(simulation, "NodeTainted", "NodeUntainted")]
    taint = "node.kubernetes.io/memory-pressure:NoSchedule"
    assert taints == [(t1, "NodeTainted", "small", taint), (t2, "NodeUntainted", "small", taint)]
    node = placement.snapshot.nodes[placement.snapshot.index["small"]]
    assert node.taints == ()  # gone again at the end
    memory = placement.node_memories["small"]
    assert memory.pressure_observed_at == second_pass and not memory.memory_pressure


BEST_EFFORT = MEMORY_ON_A_NODE.replace("duration: 2m", "duration: 6m").replace(
    "resources: {requests: {cpu: 100m, memory: 128Mi}}", "resources: {}"
)


def test_the_kubelet_refuses_best_effort_pods_until_the_taint_keeps_them_pending() -> None:
    """Four BestEffort pods (`resources: {}`) of 260Mi on node small. By hand:

    10 s        pass: MemoryPressure, one evicted. Its replacement is bound to small (no taint yet) and
                the kubelet's Admit refuses it: a BestEffort pod under MemoryPressure. Another comes
                1 s later (the refusal's turnaround), and is refused, ... until the taint at T1.
    T1 on       the replacement stays Pending: the only node is tainted.
    5m10s       the condition clears (5 min after 10 s); at T2 the taint goes and the pending pod
                is bound to small and admitted; its container starts 1 s later: 1040Mi again, and the
                next pass evicts again: the same story, refusals until the next sync taints small.
    """
    simulation = Simulation(parse_scenario(BEST_EFFORT))
    simulation.run()
    placement = simulation.placement
    assert placement is not None
    phase = placement.node_statuses["small"].phase
    first_pass = T0 + PERIOD
    t1 = _next(phase, first_pass)
    t2 = _next(phase, first_pass + 5 * MINUTE)
    again = _next(T0, t2 + SECOND)  # the first pass after the admitted pod's container starts
    t3 = _next(phase, again)
    first = [first_pass + k * SECOND for k in range(10) if first_pass + k * SECOND < t1]
    second = [again + k * SECOND for k in range(10) if again + k * SECOND < t3]
    rejected = _events(simulation, "PodRejected")
    assert [e.at for e in rejected] == first + second and all(e.node == "small" for e in rejected)
    assert all(e.detail == "Evicted: The node had condition: [MemoryPressure]. " for e in rejected)
    pods = placement.controller.pods.values()
    assert sum(1 for pod in pods if pod.end is not None and pod.end.value == "rejected") == len(rejected)

    scheduled = [(e.at, e.node) for e in _events(simulation, "PodScheduled")]
    # Each refused pod was bound first; the one that waited out the taint is bound at T2.
    assert scheduled[4:] == [(at, "small") for at in first] + [(t2, "small")] + [(at, "small") for at in second]
    evictions = [e.at for e in _events(simulation, "PodFinished") if e.detail == "completed"]
    assert evictions == [first_pass, again]
    assert placement.controller.pending.count() == 1  # the last replacement, kept off the tainted node


def test_a_patch_of_the_nodes_taints_keeps_the_condition_taint() -> None:
    """The node lifecycle controller runs its pass on every node update: a user's patch that writes
    the taints without the memory-pressure one gets it back at once, beside the user's."""
    patch = "{target: node/small, patch: {taints: [{key: example.com/x, effect: PreferNoSchedule}]}}"
    text = (
        MEMORY_ON_A_NODE.replace("duration: 2m", "duration: 1m")
        + f"  events:\n    - {{id: p, at: 30s, patch: {patch}}}\n"
    )
    simulation = Simulation(parse_scenario(text))
    simulation.run()
    placement = simulation.placement
    assert placement is not None
    node = placement.snapshot.nodes[placement.snapshot.index["small"]]
    assert [(t.key, str(t.effect)) for t in node.taints] == [
        ("example.com/x", "PreferNoSchedule"),
        ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ]
