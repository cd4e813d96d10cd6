"""The kubelet's node status loop: a condition reaches the API server at the node's next sync."""

from __future__ import annotations

import pytest

from skenario.core.environment import Environment
from skenario.core.time import MINUTE, SECOND
from skenario.model.nodestatus import NODE_STATUS_UPDATE_FREQUENCY, NodeStatus, next_sync


@pytest.mark.parametrize(
    ("now", "phase", "expected"),
    [
        (30 * SECOND, 4 * SECOND, 34 * SECOND),  # syncs at 4, 14, 24, 34 ... s
        (34 * SECOND, 4 * SECOND, 34 * SECOND),  # one falls due now: it is the next
        (35 * SECOND, 4 * SECOND, 44 * SECOND),
        (1 * SECOND, 4 * SECOND, 4 * SECOND),  # before the first
        (30 * SECOND, 0, 30 * SECOND),
        (31 * SECOND, 27 * SECOND, 37 * SECOND),  # a phase of its own: 27, 37 ... s
    ],
)
def test_the_next_sync_is_the_first_at_or_after_now(now: int, phase: int, expected: int) -> None:
    assert next_sync(now, phase) == expected


def test_the_kubelet_syncs_node_status_every_ten_seconds() -> None:
    assert NODE_STATUS_UPDATE_FREQUENCY == 10 * SECOND  # nodeStatusUpdateFrequency's default


def test_a_change_is_posted_at_the_next_sync_and_a_change_undone_before_it_is_not() -> None:
    # Syncs at 4, 14, 24 ... s. Pressure seen at 30 s is posted at 34 s; cleared at 5m30s, posted
    # at 5m34s. A blip set at 40 s and cleared at 42 s, both between syncs, posts nothing.
    env = Environment(halt_at=10 * MINUTE)
    status = NodeStatus(env, phase=4 * SECOND)
    posted: list[tuple[int, bool]] = []
    status.on_posted.append(lambda pressure: posted.append((env.now(), pressure)))
    env.call_at(30 * SECOND, lambda: status.observe(True))
    env.call_at(5 * MINUTE + 30 * SECOND, lambda: status.observe(False))
    env.run()
    assert posted == [(34 * SECOND, True), (5 * MINUTE + 34 * SECOND, False)]

    env = Environment(halt_at=MINUTE)
    blip = NodeStatus(env, phase=4 * SECOND)
    blip.on_posted.append(lambda pressure: posted.append((env.now(), pressure)))
    env.call_at(40 * SECOND, lambda: blip.observe(True))
    env.call_at(42 * SECOND, lambda: blip.observe(False))
    env.run()
    assert len(posted) == 2 and not blip.memory_pressure
