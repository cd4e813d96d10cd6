"""A fluid replica behind RequestsProcessing's face: the whole requests it says it holds."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skenario.core.time import SECOND
from skenario.model.fluid.pool import FluidPool
from skenario.model.fluid.processing import FluidProcessing
from skenario.model.fluid.replica import FluidReplica


class Clock:
    """Just enough of an Environment for a reading: now()."""

    def __init__(self) -> None:
        self.at = 0

    def now(self) -> int:
        return self.at


@given(st.floats(0, 20), st.text(min_size=1, max_size=12))
def test_the_count_dithers_to_the_real_number_on_average(held: float, name: str) -> None:
    """Over a thousand readings a second apart, the whole numbers average the real one (within 1%, or 0.02),
    each is its floor or ceiling, and reading twice at an instant says the same."""
    clock = Clock()
    processing = FluidProcessing(name, clock, FluidReplica(FluidPool(20.0), 1000, 0), lambda reason, n: None)  # type: ignore[arg-type]
    processing.replica.hold(0, held)
    counts = []
    for k in range(1000):
        clock.at = k * SECOND
        counts.append(processing.count())
        assert processing.count() == counts[-1]
    assert set(counts) <= {int(held), int(held) + 1}
    assert sum(counts) / len(counts) == pytest.approx(held, rel=0.01, abs=0.02)


def test_a_drain_ends_when_nothing_is_held() -> None:
    clock = Clock()
    processing = FluidProcessing("web-1", clock, FluidReplica(FluidPool(20.0), 1000, 0), lambda reason, n: None)  # type: ignore[arg-type]
    drained: list[int] = []
    processing.replica.hold(0, 3.0)
    processing.drain(lambda: drained.append(clock.at))
    processing.drained()
    assert drained == []
    clock.at = SECOND
    processing.replica.hold(SECOND, 0.0)
    processing.drained()
    assert drained == [SECOND]
