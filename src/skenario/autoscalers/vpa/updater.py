"""The Vertical Pod Autoscaler's updater: which pods to evict for new requests, and in what order.

Restated from kubernetes/autoscaler `vertical-pod-autoscaler` (no upstream code is copied):
`pkg/updater/priority/priority_processor.go` and `update_priority_calculator.go` (which pods
need an update and in what order), `pkg/updater/restriction` (how many may go at once) and
`pkg/updater/logic/updater.go` (update modes). Each function's docstring names the upstream
function it mirrors; the recommendations it acts on come from `vpa.recommender`.

The calculators accept any resource, as upstream, with amounts in milli-units (millicores for
CPU). Times are integer nanoseconds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cmp_to_key
from typing import TypeVar

from skenario.autoscalers.vpa.config import DEFAULT_UPDATER_CONFIG, UpdaterConfig
from skenario.autoscalers.vpa.recommender import Recommendation, RecommendedResources
from skenario.core.time import HOUR, MINUTE
from skenario.model.disruption import EvictionBudget

T = TypeVar("T")


class UpdateMode(StrEnum):
    """`spec.updatePolicy.updateMode`. Off: recommend only. Initial: set requests at pod creation
    only. Recreate: also evict pods to apply new ones. Auto: deprecated, the same as Recreate.
    InPlaceOrRecreate (VPA 1.4+): resize running pods in place, evicting only when that fails."""

    OFF = "Off"
    INITIAL = "Initial"
    RECREATE = "Recreate"
    AUTO = "Auto"
    IN_PLACE_OR_RECREATE = "InPlaceOrRecreate"


# pods_inplace_restriction.go: how long a resize may stay Deferred or InProgress before eviction.
DEFERRED_RESIZE_UPDATE_TIMEOUT = 5 * MINUTE
IN_PROGRESS_RESIZE_UPDATE_TIMEOUT = HOUR


def fall_back_to_eviction(condition: str, since: int, now: int) -> bool:
    """Whether a pod whose resize is stuck should be evicted instead; mirrors `CanEvictInPlacingPod`.

    Infeasible (never fits its node) at once; Deferred (does not fit now) after 5 minutes;
    InProgress (accepted, not actuated) after an hour; an applied resize never."""
    if condition == "Infeasible":
        return True
    if condition == "Deferred":
        return now - since > DEFERRED_RESIZE_UPDATE_TIMEOUT
    if condition == "InProgress":
        return now - since > IN_PROGRESS_RESIZE_UPDATE_TIMEOUT
    return False


# vpa_api_util.GetUpdateMode: an unset mode is Recreate.
DEFAULT_UPDATE_MODE = UpdateMode.RECREATE


@dataclass(frozen=True, slots=True)
class PodState:
    """What the updater reads of a pod.

    `requests` maps container name to its requests (resource name to milli-units); a resource left
    out has no request. `oom_terminations` maps a container whose last termination was OOMKilled to
    that run's (started_at, finished_at). `pending` is phase Pending."""

    name: str
    requests: Mapping[str, Mapping[str, int]]
    start_time: int | None = None
    pending: bool = False
    oom_terminations: Mapping[str, tuple[int, int]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PodPriority:
    """Mirrors `PodPriority`: outside the bounds, wants to grow, and the summed relative change."""

    outside_recommended_range: bool = False
    scale_up: bool = False
    resource_diff: float = 0.0

    def less(self, other: PodPriority) -> bool:
        """Mirrors `PodPriority.Less`: scaling up beats not; then the larger resource diff wins."""
        if self.scale_up != other.scale_up:
            return other.scale_up
        return self.resource_diff < other.resource_diff


def get_update_priority(
    requests: Mapping[str, Mapping[str, int]], recommendation: Mapping[str, RecommendedResources]
) -> PodPriority:
    """Mirrors `defaultPriorityProcessor.GetUpdatePriority`.

    For every container with a recommendation and every resource in its target: a request below the
    lower bound or above the upper bound is outside the range, a target above the request is a
    scale-up, and a missing request is both. `resource_diff` sums over resources
    `|total request - total target| / max(total request, 1)`."""
    outside = scale_up = False
    total_request: dict[str, int] = {}
    total_target: dict[str, int] = {}
    for container, container_requests in requests.items():
        recommended = recommendation.get(container)
        if recommended is None:
            continue
        for resource, target in recommended.target.items():
            total_target[resource] = total_target.get(resource, 0) + target
            request = container_requests.get(resource)
            if request is None:
                scale_up = outside = True
                continue
            total_request[resource] = total_request.get(resource, 0) + request
            if target > request:
                scale_up = True
            lower = recommended.lower_bound.get(resource)
            upper = recommended.upper_bound.get(resource)
            if (lower is not None and request < lower) or (upper is not None and request > upper):
                outside = True
    diff = 0.0
    for resource in sorted(total_target):
        request_total = max(float(total_request.get(resource, 0)), 1.0)
        diff += abs(request_total - float(total_target[resource])) / request_total
    return PodPriority(outside, scale_up, diff)


def has_quick_oom(pod: PodState, evict_after_oom_threshold: int = 10 * MINUTE) -> bool:
    """Mirrors the quick-OOM test in `AddPod`: a container was OOMKilled after running less than
    the threshold."""
    return any(finished - started < evict_after_oom_threshold for started, finished in pod.oom_terminations.values())


def is_update_admitted(
    pod: PodState,
    priority: PodPriority,
    now: int,
    config: UpdaterConfig = DEFAULT_UPDATER_CONFIG,
) -> bool:
    """Mirrors the admission rule of `UpdatePriorityCalculator.AddPod`.

    A pod is queued if its request is outside the bounds, or a container had a quick OOM, or it has
    lived at least `pod_lifetime_update_threshold` and `resource_diff >= min_change_priority`. A
    quick-OOM pod whose resources would not change is not queued."""
    quick_oom = has_quick_oom(pod, config.evict_after_oom_threshold)
    if not priority.outside_recommended_range and not quick_oom:
        if pod.start_time is None:
            return False
        if now < pod.start_time + config.pod_lifetime_update_threshold:
            return False
        if priority.resource_diff < config.min_change_priority:
            return False
    return not (quick_oom and priority.resource_diff == 0.0)


def sort_by_update_priority(candidates: Sequence[tuple[T, PodPriority]]) -> list[T]:
    """Mirrors `GetSortedPods` (with the default admission): highest priority first. The sort is
    stable, so ties keep their input order (Go's sort leaves them unspecified)."""

    def compare(a: tuple[T, PodPriority], b: tuple[T, PodPriority]) -> int:
        if b[1].less(a[1]):
            return -1
        return 1 if a[1].less(b[1]) else 0

    return [item for item, _ in sorted(candidates, key=cmp_to_key(compare))]


class EvictionRestriction:
    """How many pods of one replica group may be evicted now; mirrors `GetCreatorMaps` and
    `PodsEvictionRestrictionImpl` (`CanEvict`, `Evict`, `singleGroupStats.isPodDisruptable`).

    A group with fewer live pods than `min_replicas` is left alone. Otherwise a pending pod may
    always go, and a running one while more than `configured - int(configured * tolerance)` would
    stay running, or (tolerance rounding to 0) when all configured replicas run and none was evicted.
    """

    __slots__ = ("_members", "_tracked", "configured", "evicted", "running", "tolerance")

    def __init__(
        self,
        pods: Sequence[PodState],
        configured_replicas: int | None = None,
        *,
        min_replicas: int = 2,
        eviction_tolerance: float = 0.5,
    ) -> None:
        self._members = {pod.name for pod in pods}
        self._tracked = len(pods) >= min_replicas
        self.configured = len(pods) if configured_replicas is None else configured_replicas
        self.tolerance = math.trunc(float(self.configured) * eviction_tolerance)
        self.running = len(pods) - sum(1 for pod in pods if pod.pending)
        self.evicted = 0

    def can_evict(self, pod: PodState) -> bool:
        if not self._tracked or pod.name not in self._members:
            return False
        if pod.pending:
            return True
        should_be_alive = self.configured - self.tolerance
        actually_alive = self.running - self.evicted
        return actually_alive > should_be_alive or (
            self.configured == self.running and self.tolerance == 0 and self.evicted == 0
        )

    def evict(self, pod: PodState) -> bool:
        """Record an eviction if allowed; False (upstream: an error) if not."""
        if not self.can_evict(pod):
            return False
        if not pod.pending:
            self.evicted += 1
        return True


def pods_to_evict(
    pods: Sequence[PodState],
    recommendation: Mapping[str, RecommendedResources],
    mode: UpdateMode | None,
    now: int,
    *,
    configured_replicas: int | None = None,
    config: UpdaterConfig = DEFAULT_UPDATER_CONFIG,
    budget: EvictionBudget | None = None,
) -> list[str]:
    """The names of the pods one updater pass evicts, in order; mirrors `updater.RunOnce` for one VPA
    whose pods form one replica group (pass the live pods, the capped recommendation by container).

    Off and Initial never evict. Recreate and Auto (and an unset mode) keep the pods the eviction
    restriction allows, rank those `is_update_admitted` accepts, and evict down that list while the
    restriction still allows. With a PodDisruptionBudget, the eviction API may refuse one (a 429): that
    pod stays, uncounted, until a later pass."""
    if (mode or DEFAULT_UPDATE_MODE) in (UpdateMode.OFF, UpdateMode.INITIAL):
        return []
    restriction = EvictionRestriction(
        pods, configured_replicas, min_replicas=config.min_replicas, eviction_tolerance=config.eviction_tolerance
    )
    evicted: list[str] = []
    for pod in _queue(pods, recommendation, now, config, restriction):
        if not restriction.can_evict(pod):  # re-checked, as RunOnce's CanEvict before Evict
            continue
        if budget is not None and not budget.evict(pending=pod.pending, ready=not pod.pending):
            continue  # the eviction API refused: Evict fails and counts nothing
        restriction.evict(pod)
        evicted.append(pod.name)
    return evicted


def pods_to_update(
    pods: Sequence[PodState],
    recommendation: Mapping[str, RecommendedResources],
    now: int,
    *,
    configured_replicas: int | None = None,
    config: UpdaterConfig = DEFAULT_UPDATER_CONFIG,
) -> list[str]:
    """The names of the pods one InPlaceOrRecreate pass resizes, in order: the same queue and the
    same disruption tolerance as evictions (`CanInPlaceUpdate`, with `in-place-skip-disruption-budget`
    false), but no PodDisruptionBudget, as a resize is no eviction."""
    restriction = EvictionRestriction(
        pods, configured_replicas, min_replicas=config.min_replicas, eviction_tolerance=config.eviction_tolerance
    )
    chosen: list[str] = []
    for pod in _queue(pods, recommendation, now, config, restriction):
        if restriction.evict(pod):
            chosen.append(pod.name)
    return chosen


def _queue(
    pods: Sequence[PodState],
    recommendation: Mapping[str, RecommendedResources],
    now: int,
    config: UpdaterConfig,
    restriction: EvictionRestriction,
) -> list[PodState]:
    """The pods the restriction lets go that `is_update_admitted` accepts, highest priority first."""
    queued: list[tuple[PodState, PodPriority]] = []
    for pod in pods:
        if not restriction.can_evict(pod):
            continue
        priority = get_update_priority(pod.requests, recommendation)
        if is_update_admitted(pod, priority, now, config):
            queued.append((pod, priority))
    return sort_by_update_priority(queued)


def request_at_creation(mode: UpdateMode | None, recommendation: Recommendation | None) -> int | None:
    """The CPU request the admission controller gives a new pod: the (capped) target unless the mode
    is Off or there is no recommendation yet, when the pod keeps its own request (None)."""
    if recommendation is None or mode == UpdateMode.OFF:
        return None
    return recommendation.target
