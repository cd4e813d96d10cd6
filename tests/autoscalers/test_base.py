"""The context's small protocols: the union is what a plugin gets, and each built-in controller
reaches only the protocols its type names."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import pytest

from skenario.autoscalers.base import (
    AutoscalerContext,
    MetricsSource,
    PodLister,
    RequestCounters,
    Resizer,
    Scaler,
    ServingMode,
    Timing,
)
from skenario.autoscalers.cluster import ClusterContext
from skenario.autoscalers.hpa.controller import HorizontalPodAutoscaler, HPAContext, HPASpec
from skenario.autoscalers.hpa.types import ResourceMetricSource, UtilizationTarget
from skenario.autoscalers.kpa.config import KPAConfig
from skenario.autoscalers.kpa.controller import KnativePodAutoscaler, KPAContext
from skenario.autoscalers.vpa.controller import VerticalPodAutoscaler, VPAContext, VPASpec
from skenario.autoscalers.vpa.updater import UpdateMode
from skenario.core.environment import Environment
from skenario.core.random import Constant, RandomStreams
from skenario.core.time import HOUR, MILLISECOND, MINUTE
from skenario.model.cluster import ClusterModel
from skenario.model.config import ActivatorSpec, ClusterSpec, ReplicaSpec, RequestSpec, RoutingSpec
from skenario.workloads.patterns import constant_arrivals
from tests.autoscalers.hpa.test_controller import two_pods_at_sixty_percent

SMALL = (Timing, PodLister, MetricsSource, RequestCounters, Scaler, Resizer, ServingMode)


def members(protocol: type) -> set[str]:
    """The public names a protocol declares, its bases' included."""
    return {
        name
        for cls in protocol.__mro__
        if cls not in (Protocol, object) and getattr(cls, "_is_protocol", False)
        for name in vars(cls)
        if not name.startswith("_")
    }


class Narrowed:
    """A context that shows only one protocol's members: reaching for anything else fails the test."""

    def __init__(self, context: ClusterContext, protocol: type) -> None:
        self._context = context
        self._allowed = members(protocol)

    def __getattr__(self, name: str) -> Any:
        if name not in self._allowed:
            raise AttributeError(f"{name} is not in the controller's context protocol")
        return getattr(self._context, name)


def test_the_plugin_context_is_the_union_of_the_small_protocols_each_member_in_one() -> None:
    union = [name for protocol in SMALL for name in members(protocol)]
    assert len(union) == len(set(union))  # no member in two protocols
    assert members(AutoscalerContext) == set(union)
    assert all(hasattr(ClusterContext, name) for name in union)  # the simulated cluster serves them all


def hpa_run() -> tuple[ClusterModel, Any]:
    """2 pods of 500m at 60% with a 30% target: the HPA scales to 4 (tests/autoscalers/hpa)."""
    _, model = two_pods_at_sixty_percent()
    target = ResourceMetricSource("cpu", UtilizationTarget(30))
    return model, HorizontalPodAutoscaler(HPASpec(max_replicas=10, metrics=(target,)))


def vpa_run() -> tuple[ClusterModel, Any]:
    """4 pods asking for 100m while each uses 250m: the VPA in Recreate mode evicts them."""
    env = Environment(halt_at=HOUR)
    spec = ClusterSpec(
        requests=RequestSpec(Constant(50 * MILLISECOND), timeout=None),
        replica=ReplicaSpec(100, cpu_limit=400),
        initial_replicas=4,
    )
    model = ClusterModel(env, spec, constant_arrivals(20, 0, HOUR), RandomStreams(4))
    return model, VerticalPodAutoscaler(VPASpec(update_mode=UpdateMode.RECREATE))


def kpa_run() -> tuple[ClusterModel, Any]:
    """One pod behind an activator, 50/s of 200 ms: the KPA scales up and leaves Proxy mode."""
    env = Environment(halt_at=3 * MINUTE)
    spec = ClusterSpec(
        requests=RequestSpec(Constant(200 * MILLISECOND), timeout=None),
        replica=ReplicaSpec(1000, cpu_limit=1000),
        initial_replicas=1,
        routing=RoutingSpec(buffer_capacity=1000),
        activator=ActivatorSpec(),
    )
    model = ClusterModel(env, spec, constant_arrivals(50, 0, 3 * MINUTE), RandomStreams(3))
    return model, KnativePodAutoscaler(KPAConfig())


@pytest.mark.parametrize(
    ("run", "protocol"),
    [(hpa_run, HPAContext), (vpa_run, VPAContext), (kpa_run, KPAContext)],
    ids=["hpa", "vpa", "kpa"],
)
def test_each_controller_reaches_only_the_protocols_it_names(
    run: Callable[[], tuple[ClusterModel, Any]], protocol: type
) -> None:
    """Run on a context narrowed to the controller's own protocol, it pulls the same levers at the same
    times as on the whole context (and would fail on reaching for anything else)."""
    levers: dict[bool, list[tuple[int, str, dict[str, object]]]] = {}
    for narrowed in (False, True):
        model, autoscaler = run()
        pulled: list[tuple[int, str, dict[str, object]]] = []
        context = ClusterContext(model, on_action=lambda what, **how: pulled.append((model.env.now(), what, how)))  # noqa: B023
        autoscaler.start(Narrowed(context, protocol) if narrowed else context)
        model.env.run()
        levers[narrowed] = pulled
    assert levers[True] == levers[False]
    assert levers[True]  # it did act
