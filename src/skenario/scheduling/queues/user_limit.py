"""The Capacity Scheduler's user limit, headroom and ApplicationMaster limits: pure calculators.

A leaf queue shares its capacity among its *active* users (those with requests outstanding): each
may take at least its share `used / users` and at least `minimum-user-limit-percent` of the queue's
current capacity, but never more than `user-limit-factor` times the queue's guarantee. A user whose
usage is above its limit gets nothing more; at or below it, one more container (which is how a
user overshoots its limit by up to one container).
"""

from __future__ import annotations

from dataclasses import dataclass

from skenario.scheduling.queues.resources import NONE, Resource, ResourceCalculator


@dataclass(frozen=True)
class UserLimitInputs:
    """What `computeUserLimit` reads of a leaf queue and its users (one partition)."""

    cluster: Resource  # the partition's resource
    guarantee: Resource  # the queue's effective capacity
    max_capacity: Resource  # the queue's effective maximum capacity
    minimum_allocation: Resource
    consumed_ratio: float  # the sum over the queue's users of used / cluster (the calculator's ratio)
    active_used: Resource  # what the active users use together
    active_weights: float  # the sum of the active users' weights
    user_limit_percent: float  # minimum-user-limit-percent
    user_limit_factor: float  # -1: no cap but the queue's maximum


def compute_user_limit(rc: ResourceCalculator, q: UserLimitInputs) -> Resource:
    """A user's limit before its weight: `UsersManager.computeUserLimit` (active users, exclusive partition)."""
    required = q.minimum_allocation
    capacity = rc.max(q.cluster, q.guarantee, required)  # queues of less than one container still progress
    consumed = rc.multiply_normalize_up(q.cluster, q.consumed_ratio, required)
    current = capacity if rc.less_than(q.cluster, consumed, capacity) else consumed + required
    used = q.active_used + required
    limit = rc.max(
        q.cluster,
        rc.divide_and_ceil(used, q.active_weights),
        rc.divide_and_ceil(current.multiply_round_down(q.user_limit_percent), 100),
    )
    if q.user_limit_factor == -1 or q.guarantee == NONE:
        cap = rc.round_down(q.max_capacity, required)
    else:
        cap = capacity.multiply_round_down(q.user_limit_factor)
    return rc.round_up(rc.min(q.cluster, limit, cap), required)


def user_specific_limit(rc: ResourceCalculator, limit: Resource, weight: float, minimum: Resource) -> Resource:
    """A user's own limit: `getComputedResourceLimitForActiveUsers`' `multiplyAndNormalizeDown` by its weight."""
    return rc.multiply_normalize_down(limit, weight, minimum)


def can_assign_to_user(rc: ResourceCalculator, cluster: Resource, user_used: Resource, limit: Resource) -> bool:
    """`AbstractLeafQueue.canAssignToUser`: refused only when already above the limit (a `>` check)."""
    return not rc.greater_than(cluster, user_used, limit)


def headroom(
    rc: ResourceCalculator,
    cluster: Resource,
    user_limit: Resource,
    user_used: Resource,
    queue_limit: Resource,
    queue_used: Resource,
) -> Resource:
    """What the AM is told it may still get: `LeafQueue.getHeadroom`, capped by the partition's size."""
    by_user = user_limit - user_used
    by_queue = queue_limit - queue_used
    room = by_user.componentwise_min(by_queue).componentwise_min(cluster)
    return Resource(max(room.memory, 0), max(room.vcores, 0))


def am_limit(rc: ResourceCalculator, usable: Resource, am_percent: float, minimum: Resource) -> Resource:
    """The queue's AM resource limit: `getAMResourceLimitPerPartition`'s `normalizeUp(usable * percent)`."""
    return rc.multiply_normalize_up(usable, am_percent, minimum)


def user_am_limit(
    rc: ResourceCalculator,
    guarantee: Resource,
    am_percent: float,
    user_limit_percent: float,
    active_users: int,
    weight: float,
    user_limit_factor: float,
    minimum: Resource,
    queue_am_limit: Resource,
    cluster: Resource,
) -> Resource:
    """One user's AM limit: `getUserAMResourceLimitPerPartition`, capped by the queue's."""
    if user_limit_factor == -1:
        share = guarantee.multiply_round_down(am_percent)
        return rc.min(cluster, rc.round_up(share, minimum), queue_am_limit)
    users = max(active_users, 1)
    effective = min(max(user_limit_percent / 100, 1 / users) * weight, 1.0)
    limit = rc.multiply_normalize_up(guarantee, am_percent * effective * user_limit_factor, minimum)
    return rc.min(cluster, limit, queue_am_limit)
