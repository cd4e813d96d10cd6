"""Per-request trace replay: offsets, the bundled Azure LLM trace, time and rate scaling, bad rows,
and the up-front check.

Tolerance for rate scaling: floor(s) copies of each of n arrivals plus one more with probability
frac(s) is a Binomial(n, frac) surplus, sd sqrt(n frac (1 - frac)). Bounds are 5 sd (fixed seeds).
"""

from __future__ import annotations

import math
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

from skenario.core.time import SECOND
from skenario.workloads.timestamps import azure_llm_arrivals, check_timestamp_trace, timestamp_arrivals
from skenario.workloads.tracefiles import TraceError
from tests.workloads import TRACES, error_of, exhaust, raises, write

AZURE = TRACES / "AzureLLMInferenceTrace_conv.csv"
AZURE_ROWS = 19_366
# 19:14:08.4025270 - 18:15:46.6805900 = 58 min 22 s - 0.2780630 s = 3501.7219370 s
AZURE_SPAN = 3_501_721_937_000


def test_timestamp_csv_numeric_and_offsets(tmp_path: Path) -> None:
    path = write(tmp_path, "id,t\na,1700000000.5\nb,1700000000.500000001\nc,1700000002\n")
    assert list(timestamp_arrivals(path, "t", start=7)) == [7, 8, 7 + 1_500_000_000]
    # in ms, 0.000000001 ms is 0.001 ns and rounds to 0; 1.5 ms is 1_500_000 ns
    assert list(timestamp_arrivals(path, "t", unit="ms")) == [0, 0, 1_500_000]
    assert list(timestamp_arrivals(path, "t", stop=8)) == [0, 1]


def test_azure_trace() -> None:
    times = list(azure_llm_arrivals(AZURE))
    assert len(times) == AZURE_ROWS
    assert times[:3] == [0, 4_314_579_000, 4_541_877_000]  # 51.2224670 - 46.6805900 = 4.5418770 s
    assert times[-1] == AZURE_SPAN
    assert all(a <= b for a, b in pairwise(times))


def test_azure_time_scale() -> None:
    times = list(azure_llm_arrivals(AZURE, time_scale=2.0, start=SECOND))
    assert len(times) == AZURE_ROWS
    assert times[0] == SECOND and times[-1] == SECOND + 2 * AZURE_SPAN
    half = list(azure_llm_arrivals(AZURE, time_scale=0.5))
    assert half[-1] == AZURE_SPAN // 2


@pytest.mark.parametrize("scale", [0.3, 1.5, 2.0, 3.25])
def test_azure_rate_scale(scale: float) -> None:
    times = list(azure_llm_arrivals(AZURE, rate_scale=scale, rng=np.random.default_rng(8)))
    assert all(a <= b for a, b in pairwise(times))
    assert all(0 <= t <= AZURE_SPAN for t in times)
    frac = scale - math.floor(scale)
    # floor(s) copies each, plus a Bernoulli(frac) one: mean s n, variance n frac (1 - frac)
    sd = math.sqrt(AZURE_ROWS * frac * (1 - frac))
    assert abs(len(times) - scale * AZURE_ROWS) <= 5 * sd
    if scale >= 1:  # every recorded arrival is kept
        assert set(azure_llm_arrivals(AZURE)) <= set(times)


def test_rate_scale_keeps_duplicates_between_neighbours(tmp_path: Path) -> None:
    path = write(tmp_path, "t\n0\n10\n20\n")
    times = list(timestamp_arrivals(path, "t", rate_scale=4.0, rng=np.random.default_rng(1)))
    assert len(times) == 12
    # copies of the arrival at 0 lie in [0, 10 s), of 10 s in [10 s, 20 s), of the last one at 20 s
    bins = ((0, 10 * SECOND), (10 * SECOND, 20 * SECOND), (20 * SECOND, 20 * SECOND + 1))
    assert [sum(1 for t in times if lo <= t < hi) for lo, hi in bins] == [4, 4, 4]
    assert times.count(20 * SECOND) == 4 and times.count(0) >= 1


def test_rate_scale_needs_rng(tmp_path: Path) -> None:
    path = write(tmp_path, "t\n0\n1\n")
    with pytest.raises(ValueError):
        timestamp_arrivals(path, "t", rate_scale=2.0)


@pytest.mark.parametrize(
    ("text", "line", "value"),
    [
        ("t\n1\n3\n2\n", 4, "2"),  # unsorted
        ("t\n2023-11-16 18:15:46.1\n2023-11-16 18:15:45.9\n", 3, "2023-11-16 18:15:45.9"),
        ("t\n1\n2\nabc\n", 4, "abc"),  # unparsable number
        ("t\n2023-11-16 18:15:46\n2023-11-16 25:00:00\n", 3, "2023-11-16 25:00:00"),
        ("t\nsoon\n", 2, "soon"),  # unparsable first row: raised at once
        ("t\n1\n2023-11-16 18:15:46\n", 3, "2023-11-16 18:15:46"),  # mixed kinds
    ],
)
def test_bad_timestamps(tmp_path: Path, text: str, line: int, value: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(TraceError) as excinfo:
        list(timestamp_arrivals(path, "t"))
    message = error_of(excinfo)
    assert f"{path}:{line}" in message and value in message
    assert excinfo.value.line == line and excinfo.value.value == value


def test_timestamp_check_raises_exactly_when_the_replay_does(tmp_path: Path) -> None:
    # Row i is at i seconds of trace. Every window end just before, at and just after each row,
    # against a bad row at and around it, with time scaled and rate scaled (which reads ahead).
    rows = 10
    for bad in range(rows + 1):
        values = ["x" if i == bad else str(i) for i in range(rows)]
        path = tmp_path / f"t{bad}.csv"
        path.write_text("t\n" + "\n".join(values) + "\n")
        for row in range(rows + 2):
            for offset in (-1, 0, 1):
                for time_scale in (0.5, 1.0, 3.0):
                    stop = max(round(row * SECOND * time_scale) + offset, 0)
                    window = {"start": 0, "stop": stop, "time_scale": time_scale}
                    checked = raises(check_timestamp_trace, path, "t", **window)
                    for rate_scale in (1.0, 2.5):
                        rng = np.random.default_rng(0)
                        replayed = raises(
                            exhaust, timestamp_arrivals, path, "t", rate_scale=rate_scale, rng=rng, **window
                        )
                        assert checked == replayed, (bad, row, offset, time_scale, rate_scale)
