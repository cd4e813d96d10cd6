"""The user limit and headroom, restated from YARN's TestLeafQueue.testComputeUserLimitAndSetHeadroom."""

from skenario.scheduling.queues.resources import DominantResourceCalculator, Resource, ResourceCalculator
from skenario.scheduling.queues.user_limit import UserLimitInputs, compute_user_limit, headroom

GB = 1024
CLUSTER = Resource(16 * GB, 32)  # two nodes of 8 GB
MINIMUM = Resource(GB, 1)


def queue_b(users_used: list[int]) -> UserLimitInputs:
    """Queue b: capacity 80% of 16 GB (13107 MB), maximum 100%, MULP 100, ULF 1; each user has apps asking."""
    used = sum(users_used)
    return UserLimitInputs(
        cluster=CLUSTER,
        guarantee=Resource(13107, 25),
        max_capacity=CLUSTER,
        minimum_allocation=MINIMUM,
        consumed_ratio=used / CLUSTER.memory,
        active_used=Resource(used, len(users_used)),
        active_weights=float(len(users_used)),
        user_limit_percent=100,
        user_limit_factor=1,
    )


def test_one_user_using_4gb_has_a_13gb_limit_and_9gb_headroom() -> None:
    rc = ResourceCalculator()
    limit = compute_user_limit(rc, queue_b([4 * GB]))
    assert limit.memory == 13 * GB  # roundUp(12.8 GB, 1 GB)
    room = headroom(rc, CLUSTER, limit, Resource(4 * GB, 1), CLUSTER, Resource(4 * GB, 1))
    assert room.memory == 9 * GB


def test_two_users_using_4gb_each_have_8gb_headroom_from_the_queue() -> None:
    rc = ResourceCalculator()
    limit = compute_user_limit(rc, queue_b([4 * GB, 4 * GB]))
    assert limit.memory == 13 * GB
    room = headroom(rc, CLUSTER, limit, Resource(4 * GB, 1), CLUSTER, Resource(8 * GB, 2))
    assert room.memory == 8 * GB  # the queue's 16 GB less its 8 GB used


def test_the_limit_is_never_below_one_minimum_allocation_in_a_tiny_queue() -> None:
    inputs = UserLimitInputs(CLUSTER, Resource(100, 1), CLUSTER, MINIMUM, 0.0, Resource(0, 0), 1.0, 100, 1)
    assert compute_user_limit(ResourceCalculator(), inputs).memory == GB


def test_user_limit_factor_caps_the_limit_and_minus_one_lifts_the_cap_to_the_queue_maximum() -> None:
    # One user over capacity: consumed 8 GB of a 4 GB guarantee, so the current capacity is 9 GB.
    base = UserLimitInputs(CLUSTER, Resource(4 * GB, 8), CLUSTER, MINIMUM, 0.5, Resource(8 * GB, 8), 1.0, 100, 1)
    rc = ResourceCalculator()
    assert compute_user_limit(rc, base).memory == 4 * GB  # capacity x ULF 1
    lifted = UserLimitInputs(**{**base.__dict__, "user_limit_factor": -1})
    assert compute_user_limit(rc, lifted).memory == 9 * GB  # used + required


def test_dominant_resource_calculator_compares_dominant_shares() -> None:
    rc = DominantResourceCalculator()
    cluster = Resource(100, 10)
    assert rc.less_than(cluster, Resource(50, 1), Resource(10, 6))  # 50% < 60%
    assert not rc.fits_in(Resource(1, 11), cluster)
    assert ResourceCalculator().fits_in(Resource(1, 11), cluster)  # memory only
    assert rc.round_up(Resource(1500, 3), Resource(1024, 2)) == Resource(2048, 4)
