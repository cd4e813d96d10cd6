"""Fair shares computed by hand: water-filling by weight between minimum and maximum shares."""

from hypothesis import given
from hypothesis import strategies as st

from skenario.scheduling.queues.fair_shares import Schedulable, compute_shares


def test_weights_split_the_cluster() -> None:
    assert compute_shares([Schedulable(1), Schedulable(1), Schedulable(2)], 100) == [25, 25, 50]


def test_a_minimum_share_is_met_first_and_the_rest_shared_by_weight() -> None:
    # max(R, 40) + R + 2R = 100 with R < 40: R = 20.
    assert compute_shares([Schedulable(1, min_share=40), Schedulable(1), Schedulable(2)], 100) == [40, 20, 40]


def test_a_maximum_share_caps_and_the_others_take_the_rest() -> None:
    # R + R + min(2R, 10) = 100: R = 45.
    assert compute_shares([Schedulable(1), Schedulable(1), Schedulable(2, max_share=10)], 100) == [45, 45, 10]


def test_fixed_shares_inactive_zero_weight_and_zero_maximum() -> None:
    shares = compute_shares(
        [Schedulable(1, active=False), Schedulable(0, min_share=30), Schedulable(1, max_share=0), Schedulable(1)], 100
    )
    assert shares == [0, 30, 0, 70]
    # The steady share counts the inactive queue: it and the last share what the fixed ones leave.
    assert compute_shares([Schedulable(1, active=False), Schedulable(1)], 100, steady=True) == [50, 50]


@given(st.lists(st.tuples(st.integers(1, 5), st.integers(0, 50)), min_size=1, max_size=6), st.integers(0, 10_000))
def test_shares_meet_their_minimums_and_cover_the_total_to_within_a_unit_each(
    specs: list[tuple[int, int]], total: int
) -> None:
    queues = [Schedulable(w, min_share=m) for w, m in specs]
    shares = compute_shares(queues, total)
    assert all(share >= q.min_share for share, q in zip(shares, queues, strict=True))
    if sum(q.min_share for q in queues) <= total:
        # Truncating each share to a whole unit, at the bisection's upper end, misses by under a unit each.
        assert abs(sum(shares) - total) <= len(queues)
