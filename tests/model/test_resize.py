"""In-place pod resize (KEP-1287): the kubelet's admission against the node, and what a resize changes."""

from __future__ import annotations

import pytest

from skenario.autoscalers.vpa.updater import (
    DEFERRED_RESIZE_UPDATE_TIMEOUT,
    IN_PROGRESS_RESIZE_UPDATE_TIMEOUT,
    fall_back_to_eviction,
)
from skenario.core.time import HOUR, MINUTE, SECOND
from skenario.model.replicas import ResizeOutcome
from skenario.scenario.loader import parse_scenario
from skenario.scenario.simulation import Simulation

MI = 2**20

ON_A_NODE = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: resize}
spec:
  duration: 1m
  workload:
    replicas: 2
    resources: {requests: {cpu: 300m, memory: 256Mi}, limits: {cpu: 300m, memory: 512Mi}}
    memory: {baseline: 200Mi}
    request: {cpuTime: 10ms}
  traffic: {type: poisson, rate: 1/s}
  cluster: {nodes: [{name: a, cpu: 1000m, memory: 4Gi}]}
"""


def two_pods_on_one_node() -> Simulation:
    simulation = Simulation(parse_scenario(ON_A_NODE))
    simulation.run()
    return simulation


def test_the_kubelet_applies_a_resize_that_fits_defers_one_that_does_not_and_refuses_one_that_never_can() -> None:
    # 1000m node, two pods of 300m: 700m free.
    simulation = two_pods_on_one_node()
    model = simulation.model
    first, second = sorted(model.replicas.values(), key=lambda r: r.id)
    assert model.resize(first, 600, 600, 256 * MI, 512 * MI) is ResizeOutcome.APPLIED  # 600 + 300 <= 1000
    assert (first.cpu_request, first.cpu_limit) == (600, 600)
    assert first.processing.cpu.millicores == 600  # its cap on the node, at once: no restart
    assert model.resize(second, 600, 600, 256 * MI, 512 * MI) is ResizeOutcome.DEFERRED  # 600 + 600 > 1000
    assert second.cpu_request == 300
    assert model.resize(second, 1500, 1500, 256 * MI, 512 * MI) is ResizeOutcome.INFEASIBLE  # above the node
    # The scheduler counts the applied resize: 900m requested on the node.
    snapshot = simulation.placement.snapshot  # type: ignore[union-attr]
    assert int(snapshot.requested[snapshot.index["a"], 0]) == 900


def test_a_memory_limit_below_the_working_set_is_accepted_but_not_actuated() -> None:
    model = two_pods_on_one_node().model
    pod = next(iter(model.replicas.values()))
    assert pod.memory is not None and pod.memory.working_set == 200 * MI
    assert model.resize(pod, 300, 300, 128 * MI, 150 * MI) is ResizeOutcome.IN_PROGRESS
    assert pod.memory_limit == 512 * MI
    assert model.resize(pod, 300, 300, 256 * MI, 1024 * MI) is ResizeOutcome.APPLIED
    assert pod.memory.limit == pod.memory_limit == 1024 * MI


@pytest.mark.parametrize(
    ("condition", "stuck_for", "evict"),
    [
        ("Infeasible", 0, True),
        ("Deferred", DEFERRED_RESIZE_UPDATE_TIMEOUT, False),  # 5 min: not yet ("more than")
        ("Deferred", DEFERRED_RESIZE_UPDATE_TIMEOUT + SECOND, True),
        ("InProgress", 59 * MINUTE, False),
        ("InProgress", IN_PROGRESS_RESIZE_UPDATE_TIMEOUT + SECOND, True),
        ("Applied", 10 * HOUR, False),
    ],
)
def test_a_stuck_resize_falls_back_to_eviction_after_upstreams_timeouts(
    condition: str, stuck_for: int, evict: bool
) -> None:
    # CanEvictInPlacingPod: Infeasible at once, Deferred after 5 min, InProgress after 1 h.
    assert DEFERRED_RESIZE_UPDATE_TIMEOUT == 5 * MINUTE and IN_PROGRESS_RESIZE_UPDATE_TIMEOUT == HOUR
    assert fall_back_to_eviction(condition, 1000, 1000 + stuck_for) is evict


IN_PLACE = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: in-place}
spec:
  duration: 2h
  seed: 11
  workload:
    replicas: 4
    resources: {requests: {cpu: 100m}, limits: {cpu: 400m}}
    request: {cpuTime: {distribution: exponential, mean: 50ms}, ioTime: 10ms}
  traffic: {type: poisson, rate: 20/s}
  autoscalers:
    - type: vpa
      spec: {updatePolicy: {updateMode: MODE}}
"""


def test_in_place_or_recreate_resizes_the_running_pods_where_recreate_replaces_them() -> None:
    """Pods of 100m using about 250m each (20/s x 50 ms over 4 pods): the VPA raises them.

    Recreate evicts and replaces them; InPlaceOrRecreate changes the same four pods, whose limit
    keeps its 4x ratio to the request, with no pod made and no request lost."""
    in_place = Simulation(parse_scenario(IN_PLACE.replace("MODE", "InPlaceOrRecreate")))
    in_place.run()
    recreate = Simulation(parse_scenario(IN_PLACE.replace("MODE", "Recreate")))
    recreate.run()
    assert recreate.model.replica_source.emitted > 4
    model = in_place.model
    assert model.replica_source.emitted == 4 and model.requests_failed.count() == 0
    for pod in model.replicas.values():
        assert pod.cpu_request > 200 and pod.cpu_limit == 4 * pod.cpu_request
        assert pod.processing.cpu.millicores == pod.cpu_limit  # alone on its 4-core node, capped by its limit
