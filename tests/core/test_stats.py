"""The latency histogram: what recording many at once must equal, and what its percentiles promise."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.core.stats import LatencyHistogram

latencies = st.integers(min_value=0, max_value=10**12)


def state(histogram: LatencyHistogram) -> tuple[object, ...]:
    return (
        histogram.count,
        histogram.total,
        histogram.min,
        histogram.max,
        [histogram.percentile(q) for q in (1, 50, 99, 100)],
    )


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(latencies, st.integers(min_value=0, max_value=50)), max_size=20))
def test_recording_many_at_once_is_recording_each(records: list[tuple[int, int]]) -> None:
    one_by_one, at_once = LatencyHistogram(), LatencyHistogram()
    for value, times in records:
        for _ in range(times):
            one_by_one.record(value)
        at_once.record_many(value, times)
    if one_by_one.count:
        assert state(at_once) == state(one_by_one)
    else:
        assert at_once.count == 0 and at_once.percentile(50) is None


@settings(max_examples=100, deadline=None)
@given(st.lists(latencies, min_size=1, max_size=200), st.integers(min_value=1, max_value=100))
def test_a_percentile_lies_in_the_bucket_of_the_nearest_rank(values: list[int], q: int) -> None:
    """Nearest rank: the ceil(q/100 n)-th smallest value; the histogram answers within its bucket, clamped
    to the exact min and max."""
    histogram = LatencyHistogram()
    for value in values:
        histogram.record(value)
    ranked = sorted(values)[max(1, -(-q * len(values) // 100)) - 1]
    answer = histogram.percentile(q)
    assert answer is not None and min(values) <= answer <= max(values)
    assert abs(answer - ranked) <= max(ranked // 64 + 1, 1) * 2  # within about a bucket's width (1/128 relative)


@given(st.lists(st.integers(0, 10**10), max_size=200), st.lists(st.integers(0, 10**10), min_size=1, max_size=200))
def test_since_is_what_was_recorded_after_the_copy(before: list[int], after: list[int]) -> None:
    """A window of a cumulative histogram (`since`) holds exactly the later values: their count, total, and
    every percentile within the bucket the later values alone put it in."""
    whole = LatencyHistogram()
    for value in before:
        whole.record(value)
    earlier = LatencyHistogram()
    earlier.merge(whole)
    alone = LatencyHistogram()
    for value in after:
        whole.record(value)
        alone.record(value)
    window = whole.since(earlier)
    assert (window.count, window.total) == (alone.count, alone.total)
    assert list(window.buckets()) == list(alone.buckets())
    for q in (50, 95, 99):
        got, want = window.percentile(q), alone.percentile(q)
        assert got is not None and want is not None
        low, high = LatencyHistogram.bucket_bounds(
            next(i for i, _ in alone.buckets() if alone.bucket_bounds(i)[1] > want)
        )
        assert low <= got < high
    assert whole.since(None).count == whole.count
