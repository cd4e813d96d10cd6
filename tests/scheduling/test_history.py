"""The scheduler's history: a timeline that counts what it does not keep, an allocation log kept as columns,
and the tracker that folds the allocation into the summary's figures without it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.core.time import SECOND
from skenario.scheduling.analysis import allocation_steps, time_weighted_mean
from skenario.scheduling.history import AllocationLog, AllocationTracker, Timeline, TimelineEvent

changes = st.lists(
    st.tuples(
        st.integers(0, 10**12),
        st.integers(0, 5000),
        st.integers(1, 4).flatmap(lambda w: st.tuples(*[st.integers(-(10**12), 10**12)] * w)),
    ),
    max_size=3000,
)


@settings(max_examples=40, deadline=None)
@given(changes, st.integers(4, 6))
def test_the_allocation_log_gives_back_what_it_was_told(
    log: list[tuple[int, int, tuple[int, ...]]], width: int
) -> None:
    """Across its growth (more rows than its first buffer, deltas widening as resources are named)."""
    kept = AllocationLog()
    for change in log:
        kept.append(change)
    assert len(kept) == len(log)
    assert list(kept) == log
    times, nodes, deltas = kept.columns(width)
    expected = np.zeros((len(log), width), dtype=np.int64)
    for k, (_, _, delta) in enumerate(log):
        expected[k, : len(delta)] = delta
    assert times.tolist() == [t for t, _, _ in log] and nodes.tolist() == [i for _, i, _ in log]
    assert (deltas == expected).all()
    # The views the summary reads without copying: the same times, the deltas as wide as the widest.
    seen_times, seen_deltas = kept.logged()
    widest = max((len(delta) for _, _, delta in log), default=0)
    assert seen_times.tolist() == times.tolist()
    assert (seen_deltas[:, :widest] == expected[:, :widest]).all() and not seen_deltas[:, widest:].any()
    assert not seen_times.flags.writeable and not seen_deltas.flags.writeable


def test_a_timeline_that_keeps_nothing_still_counts_and_hands_on_every_event() -> None:
    events = [TimelineEvent(k, kind, f"p{k}") for k, kind in enumerate(["PodCreated", "PodUnscheduled"] * 3)]
    heard: list[TimelineEvent] = []
    kept, counted = Timeline(), Timeline(keep=False)
    counted.sink = heard.append
    for event in events:
        kept.append(event)
        counted.append(event)
    assert list(kept) == events and list(counted) == [] and heard == events
    assert kept.counts == counted.counts == {"PodCreated": 3, "PodUnscheduled": 3}
    assert TimelineEvent(5, "NodeAdded", "", "n1").as_dict() == {
        "at": 5, "kind": "NodeAdded", "pod": None, "node": "n1", "detail": "",
    }  # fmt: skip


# Changes in time order: (at, capacity or allocation, delta); a node's allocatable first, then pods.
moments = st.lists(
    st.tuples(
        st.integers(0, 40).map(lambda s: s * SECOND // 2),
        st.booleans(),
        st.integers(1, 3).flatmap(lambda w: st.tuples(*[st.integers(-3000, 3000)] * w)),
    ),
    min_size=1,
    max_size=60,
).map(lambda items: sorted(items, key=lambda item: item[0]))


@settings(max_examples=200, deadline=None)
@given(moments, st.integers(0, 10), st.integers(0, 30))
def test_the_allocation_tracker_gives_what_the_whole_logs_give(
    changes: list[tuple[int, bool, tuple[int, ...]]], start_s: int, after_s: int
) -> None:
    """The tracker's mean and peak, folded as changes come, equal `allocation_steps` and
    `time_weighted_mean` over the kept logs (the summary's way before the tracker), whatever the
    widths, the instants shared by several changes, and the start of the mean."""
    start, end = start_s * SECOND, changes[-1][0] + after_s * SECOND
    log, capacity = AllocationLog(), []
    tracker = AllocationTracker(start=start)
    for at, is_capacity, delta in changes:
        if is_capacity:
            capacity.append((at, delta))
            tracker.capacity(at, delta)
        else:
            log.append((at, 0, delta))
            tracker.allocated(at, delta)
    resources = ["cpu", "memory", "nvidia.com/gpu"]
    steps = allocation_steps(log, capacity, resources)
    expected_mean = {r: time_weighted_mean(steps, r, start / SECOND, end / SECOND) for r in resources if r in steps}
    expected_peak = {r: float(steps[r].max()) for r in resources if r in steps}
    means, peaks = tracker.summary(resources, end)
    assert means == pytest.approx(expected_mean, rel=1e-9, abs=1e-12)
    assert peaks == expected_peak


def test_an_allocation_log_that_is_not_kept_refuses_to_be_read() -> None:
    log = AllocationLog(keep=False)
    log.append((1, 0, (5, 5)))
    assert len(log) == 0
    with pytest.raises(ValueError, match="not kept"):
        log.logged()
