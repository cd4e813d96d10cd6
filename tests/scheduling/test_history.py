"""The scheduler's history: a timeline that counts what it does not keep, an allocation log kept as columns."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.scheduling.history import AllocationLog, Timeline, TimelineEvent

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
