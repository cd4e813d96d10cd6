"""A scenario with spec.cluster: replicas as pods, the cluster autoscaler, and the schema's rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from skenario.core.time import SECOND
from skenario.errors import ScenarioError
from skenario.model.replicas import ReplicaState
from skenario.results import analysis
from skenario.results.rundata import RunData
from skenario.scenario.loader import load_scenario, parse_scenario
from skenario.scenario.simulation import Simulation

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
EXAMPLE = EXAMPLES / "hpa-cluster-autoscaler.yaml"
STARTUP = 90 * SECOND  # the example's burst group


@pytest.fixture(scope="module")
def simulation() -> Simulation:
    sim = Simulation(load_scenario(EXAMPLE), base_dir=EXAMPLES)
    sim.run()
    return sim


def test_new_nodes_come_one_startup_after_a_scale_up(simulation: Simulation) -> None:
    placement = simulation.placement
    assert placement is not None
    timeline = placement.controller.timeline
    scale_ups = [e.at for e in timeline if e.kind == "ScaleUp"]
    added = [e for e in timeline if e.kind == "NodeAdded"]
    assert scale_ups and added
    for event in added:
        assert event.at - STARTUP in scale_ups


def test_replicas_on_new_nodes_wait_for_them(simulation: Simulation) -> None:
    placement = simulation.placement
    assert placement is not None
    added = {e.node: e.at for e in placement.controller.timeline if e.kind == "NodeAdded"}
    waited = 0
    for pod in placement.controller.pods.values():
        if pod.node in added and pod.bound_at is not None:
            # Bound no sooner than its node joined: a pod made before the node waits for its start-up.
            assert pod.bound_at >= added[pod.node]
            replica = pod.owner
            if replica.activated_at is not None:
                assert replica.activated_at >= pod.bound_at
            waited += added[pod.node] > pod.created_at
    assert waited > 0


def test_every_live_replica_has_one_pod_on_a_present_node(simulation: Simulation) -> None:
    placement = simulation.placement
    assert placement is not None
    model = simulation.model
    controller = placement.controller
    owners = [p.owner for p in controller.pods.values() if p.end is None]
    live = [r for r in model.replicas.values() if r.state != ReplicaState.TERMINATED]
    assert sorted(r.id for r in owners) == sorted(r.id for r in live)
    snapshot = placement.snapshot
    for pod in controller.bound:
        assert pod.node in snapshot.index
        assert pod.name in snapshot.pods_on[snapshot.index[pod.node]]
    # No node is ever over-committed.
    assert (snapshot.requested[snapshot.present] <= snapshot.allocatable[snapshot.present]).all()


def test_same_seed_same_bindings() -> None:
    runs = []
    for _ in range(2):
        sim = Simulation(load_scenario(EXAMPLE), base_dir=EXAMPLES)
        sim.run(until="12m")
        assert sim.placement is not None
        runs.append([(p.name, p.node, p.bound_at) for p in sim.placement.controller.pods.values()])
    assert runs[0] == runs[1]


BASE = """
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: c}
spec:
  duration: 1m
  workload: {replicas: 1, request: {cpuTime: 10ms}}
  traffic: {type: poisson, rate: 1}
"""


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ("  cluster: {nodeGroups: [{name: g, minSize: 3, maxSize: 2, node: {cpu: 1, memory: 1Gi}}]}\n", "minSize"),
        ("  cluster: {}\n", "nodes or nodeGroups"),
        ("  scheduler: {}\n", "spec.cluster"),
        ("  cluster: {nodes: [{name: a, cpu: 1, memory: 1Gi}, {name: a, cpu: 1, memory: 1Gi}]}\n", "unique"),
        (
            "  cluster: {nodes: [{name: a, cpu: 1, memory: 1Gi}]}\n"
            "  scheduler: {profiles: [{plugins: {score: {enabled: [{name: Nope}]}}}]}\n",
            "Nope",
        ),
        ("  cluster: {nodes: [{name: a, cpu: 1, memory: lots}]}\n", "lots"),
    ],
)
def test_bad_cluster_sections_are_refused(extra: str, words: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(BASE + extra, "c.yaml")
    assert words in str(caught.value) and "c.yaml" in str(caught.value)


def test_a_replica_with_no_room_left_stays_pending() -> None:
    # Two replicas of the default 1000m request, one 1-core node: the second fits no node that has room.
    # (One that fits no node at all is refused at load: tests/scenario/test_dryrun.py.)
    text = BASE.replace("replicas: 1", "replicas: 2") + "  cluster: {nodes: [{name: small, cpu: 1, memory: 1Gi}]}\n"
    sim = Simulation(parse_scenario(text, "c.yaml"))
    sim.run()
    assert sim.placement is not None
    assert sim.model.replicas_active.count() == 1
    assert sim.model.replicas_launching.count() == 1  # Pending
    pending = [pod for pod in sim.placement.controller.pods.values() if pod.node is None]
    assert len(pending) == 1 and pending[0].attempts and "Insufficient cpu" in pending[0].attempts[0].message


SPREAD_OUT = """
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: spread-out}
spec:
  duration: 20m
  workload: {replicas: 3, resources: {requests: {cpu: 100m}}, request: {cpuTime: 10ms}}
  traffic: {type: poisson, rate: 1}
  cluster:
    nodeGroups: [{name: g, minSize: 1, maxSize: 3, initialSize: 3, node: {cpu: 2, memory: 8Gi}}]
    autoscaler: {}
"""


def test_a_disruption_budget_keeps_the_cluster_autoscaler_from_draining_ready_pods() -> None:
    # Three replicas of 100m spread over three 2-core nodes: all underused, and two nodes' pods fit
    # elsewhere, so the autoscaler drains nodes after 10 min. With maxUnavailable 0 no ready pod may
    # be evicted: every drain is refused (NotEnoughPdb) and the nodes stay.
    def run(extra: str) -> Simulation:
        sim = Simulation(parse_scenario(SPREAD_OUT + extra, "s.yaml"))
        sim.run()
        return sim

    free, held = run(""), run("  disruptionBudget: {maxUnavailable: 0}\n")
    for sim in (free, held):
        assert sim.placement is not None and sim.placement.cluster_autoscaler is not None
    free_ca, held_ca = free.placement.cluster_autoscaler, held.placement.cluster_autoscaler  # type: ignore[union-attr]
    assert free_ca is not None and held_ca is not None
    assert free_ca.scale_downs > 0 and free_ca.blocked_by_pdb == 0
    assert held_ca.scale_downs == 0 and held_ca.blocked_by_pdb > 0
    assert held.model.replica_source.emitted == 3  # no pod was evicted and replaced


ZONE_SPREAD = """
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: zone-spread}
spec:
  duration: 20m
  seed: 3
  workload:
    replicas: 8
    resources: {requests: {cpu: 500m}}
    request: {cpuTime: 10ms}
    pod:
      topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone}]
  traffic: {type: poisson, rate: 1}
  cluster:
    nodes:
      - {name: a, cpu: 1, memory: 8Gi, labels: {topology.kubernetes.io/zone: a}}
      - {name: b, cpu: 1, memory: 8Gi, labels: {topology.kubernetes.io/zone: b}}
    nodeGroups:
      - {name: burst, minSize: 0, maxSize: 10, startup: 60s, node: {cpu: 2, memory: 8Gi}}
    autoscaler: {}
"""


def test_the_cluster_autoscaler_adds_no_node_the_pending_pods_cannot_use() -> None:
    # Two zones of one 1-core node hold 2 pods of 500m each; 4 pods wait. The group's template has no
    # zone label, so PodTopologySpread refuses it (missing required label): no scale-up, and each
    # waiting pod gets one NotTriggerScaleUp decision naming the reason, in the run's timeline.
    sim = Simulation(parse_scenario(ZONE_SPREAD, "z.yaml"))
    sim.run()
    ca = sim.placement.cluster_autoscaler if sim.placement is not None else None
    assert ca is not None
    assert ca.scale_ups == 0 and not ca.node_group
    decisions = [e for e in sim.timeline.entries() if e[1] == "cluster-autoscaler"]
    assert len(decisions) == 4
    assert {e[5]["pods"][0] for e in decisions} == {f"zone-spread-{i}" for i in range(4, 8)}
    reason = "node(s) didn't match pod topology spread constraints (missing required label)"
    assert all(e[4] == f"pod didn't trigger scale-up: 1 {reason}" for e in decisions)
    assert all(e[5]["groups"] == {"burst": reason} for e in decisions)


def test_a_one_zone_group_grows_by_what_the_skew_allows() -> None:
    # The same, with the group in zone a: one more pod there makes a 3, b 2 (skew 1); a second would
    # make skew 2. The autoscaler adds one node, once, and three pods stay pending.
    text = ZONE_SPREAD.replace(
        "node: {cpu: 2, memory: 8Gi}", "node: {cpu: 2, memory: 8Gi, labels: {topology.kubernetes.io/zone: a}}"
    )
    sim = Simulation(parse_scenario(text, "z.yaml"))
    sim.run()
    assert sim.placement is not None and sim.placement.cluster_autoscaler is not None
    assert sim.placement.cluster_autoscaler.scale_ups == 1
    pending = [p for p in sim.placement.controller.pods.values() if p.node is None and p.end is None]
    assert len(pending) == 3


def test_the_recorded_cluster_gauges_agree_with_the_pods_and_nodes_histories() -> None:
    # Each row's node count and pending pods, rebuilt from the scheduler's timeline and each pod's
    # created/bound/finished times. What happens at the row's own instant may come before or after
    # the row is taken, so the row must lie between the counts without and with those events.
    sim = Simulation(load_scenario(EXAMPLE), base_dir=EXAMPLES)
    sim.run()
    assert sim.placement is not None
    controller = sim.placement.controller
    frame = sim.recorder.frame()
    base = len(sim.spec.cluster.static_nodes())  # type: ignore[union-attr]
    assert frame["nodes"].max() > base  # the example scales up

    def nodes_at(t: int, at_t: bool) -> int:
        seen = [e for e in controller.timeline if e.at < t or (at_t and e.at == t)]
        return base + sum(e.kind == "NodeAdded" for e in seen) - sum(e.kind == "NodeRemoved" for e in seen)

    def waiting_at(t: int, at_t: bool) -> int:
        def after(x: int | None) -> bool:
            return x is None or x > t or (not at_t and x == t)

        return sum(
            1
            for p in controller.pods.values()
            if (p.created_at < t or (at_t and p.created_at == t)) and after(p.bound_at) and after(p.finished_at)
        )

    for t, nodes, pending in zip(frame["time_ns"], frame["nodes"], frame["pods_pending"], strict=True):
        assert min(nodes_at(t, False), nodes_at(t, True)) <= nodes <= max(nodes_at(t, False), nodes_at(t, True))
        assert (
            min(waiting_at(t, False), waiting_at(t, True)) <= pending <= max(waiting_at(t, False), waiting_at(t, True))
        )
    assert frame["node_cpu_allocation"].between(0, 1).all()


# -- the figures users tune by, on a full cluster (issue #28's case) ---------------------------------

FULL_CLUSTER = """
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: full-cluster}
spec:
  duration: 9m
  seed: 1
  workload:
    replicas: 3
    resources: {requests: {cpu: 250m}}   # no limit: a pod may use its node's idle cores
    request: {cpuTime: {distribution: exponential, mean: 50ms}, timeout: 10s}
  traffic: {type: step, rate: 20/s, stepTo: 200/s, stepAt: 1m}
  autoscalers:
    - type: hpa
      manifest:
        apiVersion: autoscaling/v2
        kind: HorizontalPodAutoscaler
        metadata: {name: web}
        spec:
          scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
          minReplicas: 3
          maxReplicas: 60
          metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}}]
  cluster:
    nodes: [{name: n, count: 3, cpu: 4, memory: 16Gi}]
"""


@pytest.fixture(scope="module")
def full() -> Simulation:
    sim = Simulation(parse_scenario(FULL_CLUSTER))
    sim.run()
    return sim


def test_on_a_full_cluster_the_nodes_busy_share_is_the_offered_load_over_their_cores(full: Simulation) -> None:
    # 200/s of 50 ms is 10 cores of demand on 3 x 4 = 12 allocatable: 83.3% once the step has settled.
    # 48 pods of 250m fill the nodes, so the HPA reads 10 cores over 48 x 250m = 12 cores requested: 83.3% too.
    series = full.recorder.frame()
    settled = series[series.index > 5 * 60]
    assert (settled["replicas_active"] == 48).all()
    node_share = settled["node_cpu_utilisation"].mean()
    assert node_share == pytest.approx(10 / 12, rel=0.03)
    assert settled["cpu_request_utilisation"].mean() == pytest.approx(10 / 12, rel=0.03)
    # The cluster's account is every pod's busy time over the nodes' allocatable core-time since 0.
    placement = full.placement
    assert placement is not None
    busy, allocatable = placement.node_cpu_core_ns()
    assert busy == pytest.approx(full.model.busy_core_ns())  # one workload: all the nodes' work is its
    assert allocatable == pytest.approx(3 * 4 * 9 * 60 * SECOND)
    per_node = placement.node_cpu_utilisation()
    assert set(per_node) == {"n-0", "n-1", "n-2"}
    assert sum(per_node.values()) / 3 == pytest.approx(busy / allocatable)


def test_pods_no_node_takes_are_pending_apart_never_started_and_never_billed(full: Simulation) -> None:
    summary = full.summary()
    placement = full.placement
    assert placement is not None
    # 60 desired, room for 48: 12 pods wait for a node to the end.
    assert summary.replicas_desired == 60 and summary.replicas_active == 48
    assert summary.replicas_pending == 12 == placement.controller.pending.count()
    assert summary.replicas_started == 48  # bound; before the mend every pod made counted
    series = full.recorder.frame()
    assert series["replicas_pending"].iloc[-1] == 12 and series["replicas_launching"].iloc[-1] == 0
    assert (series["replicas_pending"] == series["pods_pending"]).all()  # one workload: its pods are the cluster's
    assert (series["cluster_full"] == (series["pods_pending"] > 0)).all()  # no node group could ever grow
    # The 12 have no binding and cost nothing; each bound pod is billed from its binding to the end.
    lives = list(full.model.replicas.values())
    unbound = [r for r in lives if r.bound_at is None]
    assert len(unbound) == 12 and all(r.activated_at is None for r in unbound)
    run = RunData.from_simulation(full)
    spend = analysis.cost(run)
    billed_ns = sum(9 * 60 * SECOND - r.bound_at for r in lives if r.bound_at is not None)
    assert spend["replica_hours"] == pytest.approx(billed_ns / (3600 * SECOND))
    assert spend["pods_never_bound"] == 12 and spend["replicas"] == 48
    assert spend["node_hours"] == pytest.approx(3 * 9 / 60)
    limits = analysis.limits(run)
    # At maxReplicas, with pods Pending and the cluster full from the scale-up's last step to the end.
    at_max = (series["replicas_desired"] >= 60).mean()
    assert limits["at_max_replicas"] == pytest.approx(at_max, abs=1 / len(series))
    assert limits["pods_pending"] == pytest.approx(limits["cluster_full"])
    assert 0.5 < limits["pods_pending"] < 1
