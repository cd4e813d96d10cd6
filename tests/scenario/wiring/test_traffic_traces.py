"""The trace types of `spec.traffic`: replays relative to the scenario, and one TraceError per bad file.

A bad trace must fail when the arrivals are built, before the run starts, naming the file, the
line and the value; so the bad-file tests build and never iterate. The real traces are the copies
bundled in examples/traces/.
"""

from __future__ import annotations

import bz2
import csv
import io
import math
import tarfile
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from pydantic import TypeAdapter

from skenario.core.random import RandomStreams
from skenario.core.time import MINUTE, SECOND
from skenario.errors import ScenarioError, SkenarioError
from skenario.scenario.format.traffic import AzureLlmTraffic, TrafficSpec
from skenario.scenario.wiring.traffic import build_arrivals, build_rate
from skenario.workloads.rates import Intensity
from skenario.workloads.traces import TraceError

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
TRACES = Path(__file__).parents[3] / "examples" / "traces"  # bundled copies of ../shared/traces
NASA = TRACES / "nasa_http_1995_per_second_workload.tbz2"
AZURE_ROWS = 19_366  # rows of AzureLLMInferenceTrace_conv.csv, per its README
AZURE_SPAN = 3_501_721_937_000  # 19:14:08.4025270 - 18:15:46.6805900

SECTION: TypeAdapter[Any] = TypeAdapter(TrafficSpec)


def parse(text: str) -> Any:
    return SECTION.validate_python(yaml.safe_load(text))


def build(traffic: Any, duration: int, base_dir: Path) -> list[int]:
    return list(build_arrivals(traffic, duration=duration, streams=RandomStreams(1), base_dir=base_dir))


def write(tmp_path: Path, text: str, name: str = "trace.csv") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# --- replays ------------------------------------------------------------------------------------------


def test_trace_replays_relative_to_its_file_and_moves_time_zero(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    write(tmp_path / "data", "id,at\na,100.5\nb,101\nc,103\nd,200\n")
    traffic = parse("{type: trace, file: data/trace.csv, column: at}")
    # Relative to the first row: 0, 0.5 s, 2.5 s; 99.5 s is after the run. Time 0 is the kernel's.
    assert build(traffic, 10 * SECOND, base_dir=tmp_path) == [1, SECOND // 2, 5 * SECOND // 2]
    later = traffic.model_copy(update={"start": SECOND, "time_scale": 2.0})
    assert build(later, 10 * SECOND, base_dir=tmp_path) == [SECOND, 2 * SECOND, 6 * SECOND]


def test_trace_rate_scale_multiplies_the_count(tmp_path: Path) -> None:
    write(tmp_path, "t\n" + "".join(f"{i / 10}\n" for i in range(1000)))  # 1000 rows over 99.9 s
    tripled = build(parse("{type: trace, file: trace.csv, column: t, rateScale: 3}"), 2 * MINUTE, base_dir=tmp_path)
    assert len(tripled) == 3000 and tripled == sorted(tripled)
    # 0.4 keeps each row with probability 0.4: Binomial(1000, 0.4), sd sqrt(240).
    thinned = build(parse("{type: trace, file: trace.csv, column: t, rateScale: 0.4}"), 2 * MINUTE, base_dir=tmp_path)
    assert abs(len(thinned) - 400) <= 5 * math.sqrt(1000 * 0.4 * 0.6)


def test_counts_spread_within_their_intervals(tmp_path: Path) -> None:
    write(tmp_path, "minute,requests\n0,3\n1,0\n2,5\n3,2\n")
    traffic = parse("{type: counts, file: trace.csv, timeColumn: minute, countColumn: requests, unit: m}")
    times = build(traffic, 10 * MINUTE, base_dir=tmp_path)
    assert [sum(1 for t in times if m * MINUTE <= t < (m + 1) * MINUTE) for m in range(5)] == [3, 0, 5, 2, 0]
    doubled = build(traffic.model_copy(update={"rate_scale": 2.0}), 10 * MINUTE, base_dir=tmp_path)
    assert len(doubled) == 20


@pytest.mark.parametrize(
    ("traffic", "field", "column"),
    [
        ("{type: trace, file: trace.csv, column: at}", "spec.traffic.column", "at"),
        (
            "{type: counts, file: trace.csv, timeColumn: minutes, countColumn: requests}",
            "spec.traffic.timeColumn",
            "minutes",
        ),
        (
            "{type: counts, file: trace.csv, timeColumn: minute, countColumn: count}",
            "spec.traffic.countColumn",
            "count",
        ),
    ],
)
def test_a_column_the_file_lacks_is_the_scenarios_mistake(
    tmp_path: Path, traffic: str, field: str, column: str
) -> None:
    """Said at the field that names it, with the file and its header (it was said at the file alone)."""
    write(tmp_path, "minute,requests\n0,3\n")
    with pytest.raises(ScenarioError) as caught:
        build(parse(traffic), MINUTE, base_dir=tmp_path)
    assert caught.value.field == field and caught.value.value == column
    assert "trace.csv" in str(caught.value) and "minute, requests" in str(caught.value)


def test_azure_example_trace_is_bundled_and_replays_whole() -> None:
    example = yaml.safe_load((EXAMPLES / "trace-replay.yaml").read_text())
    spec = example["spec"]
    assert spec["duration"] == "1h"
    traffic = SECTION.validate_python(spec["traffic"])
    assert isinstance(traffic, AzureLlmTraffic) and traffic.rate_scale == 20
    times = build(traffic, 60 * MINUTE, base_dir=EXAMPLES)
    # rateScale 20 replays each of the trace's rows 20 times; the whole trace fits in the hour.
    assert len(times) == 20 * AZURE_ROWS
    assert times[0] == 1 and times[-1] == AZURE_SPAN
    assert all(a <= b for a, b in pairwise(times))
    assert (EXAMPLES / "traces" / "LICENSE-CC-BY-4.0.txt").exists()


def write_archive(tmp_path: Path, content: bytes, name: str = "workload.tbz2") -> Path:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        info = tarfile.TarInfo("workload.txt")
        info.size = len(content)
        archive.addfile(info, io.BytesIO(content))
    path = tmp_path / name
    path.write_bytes(bz2.compress(buffer.getvalue()))
    return path


def test_nasa_counts_per_second(tmp_path: Path) -> None:
    write_archive(tmp_path, b"2 0 3\n1 4 ")
    times = build(parse("{type: nasa, file: workload.tbz2, start: 1s}"), 5 * SECOND, base_dir=tmp_path)
    # Second k of the trace is [1 + k, 2 + k) s of the run; the run ends before the trace's fifth.
    assert [sum(1 for t in times if (1 + k) * SECOND <= t < (2 + k) * SECOND) for k in range(4)] == [2, 0, 3, 1]
    assert len(times) == 6


def test_nasa_trace_first_hour() -> None:
    with tarfile.open(NASA, "r:bz2") as archive:
        member = archive.extractfile("workload.txt")
        assert member is not None
        first_hour = [int(token) for token in member.read(1 << 16).split()[:3600]]
    traffic = parse(f"{{type: nasa, file: {NASA.name}, rateScale: 3}}")
    times = np.array(build(traffic, 60 * MINUTE, base_dir=TRACES))
    assert times.size == 3 * sum(first_hour)  # an integer scale multiplies every count exactly
    assert np.array_equal(np.bincount(times // SECOND, minlength=3600), [3 * n for n in first_hour])


# --- bad trace files: one TraceError before the run starts ---------------------------------------


def build_fails(text: str, base_dir: Path, duration: int = 10 * MINUTE) -> TraceError:
    traffic = parse(text)
    with pytest.raises(TraceError) as info:
        build_arrivals(traffic, duration=duration, streams=RandomStreams(0), base_dir=base_dir)  # not iterated
    assert isinstance(info.value, SkenarioError)
    return info.value


def test_missing_file_names_the_path_and_the_field(tmp_path: Path) -> None:
    error = build_fails("{type: trace, file: traces/gone.csv, column: t}", tmp_path)
    assert error.field == "spec.traffic.file" and error.value == "traces/gone.csv"
    assert "traces/gone.csv" in str(error) and str(tmp_path / "traces" / "gone.csv") in str(error)
    listed = build_fails("[{type: constant, rate: 1}, {type: nasa, file: gone.tbz2}]", tmp_path)
    assert listed.field == "spec.traffic.1.file" and "gone.tbz2" in str(listed)
    assert "a folder" in str(build_fails(f"{{type: azureLlm, file: {tmp_path}}}", tmp_path))


TIMESTAMP_CASES = [
    ("empty file", "", 1, None),
    ("header only", "t\n", 1, None),
    ("unparsable first row", "t\nsoon\n", 2, "soon"),
    ("unparsable later row", "t\n1\n2\n3x\n", 4, "3x"),
    ("unsorted", "t\n1\n3\n2\n", 4, "2"),
]


@pytest.mark.parametrize(("case", "text", "line", "value"), TIMESTAMP_CASES, ids=[c[0] for c in TIMESTAMP_CASES])
def test_bad_timestamp_traces(tmp_path: Path, case: str, text: str, line: int, value: str | None) -> None:
    path = write(tmp_path, text)
    error = build_fails("{type: trace, file: trace.csv, column: t}", tmp_path)
    assert error.file == str(path) and error.line == line and error.value == value
    assert f"{path}:{line}" in str(error) and (value is None or value in str(error))


COUNT_CASES = [
    ("negative count", "t,n\n0,1\n1,-2\n", 3, "-2"),
    ("unparsable count", "t,n\n0,1\n1,lots\n", 3, "lots"),
    ("unparsable time", "t,n\n0,1\nlater,2\n", 3, "later"),
    ("repeated time", "t,n\n0,1\n1,2\n1,3\n", 4, "1"),
]


@pytest.mark.parametrize(("case", "text", "line", "value"), COUNT_CASES, ids=[c[0] for c in COUNT_CASES])
def test_bad_count_traces(tmp_path: Path, case: str, text: str, line: int, value: str) -> None:
    path = write(tmp_path, text)
    error = build_fails("{type: counts, file: trace.csv, timeColumn: t, countColumn: n}", tmp_path)
    assert error.file == str(path) and error.line == line and error.value == value
    assert f"{path}:{line}" in str(error) and value in str(error)


@pytest.mark.parametrize(("content", "line", "value"), [(b"1 2 x 3", 1, "x"), (b"1 2\n3 -4 5\n", 2, "-4")])
def test_bad_nasa_archives(tmp_path: Path, content: bytes, line: int, value: str) -> None:
    path = write_archive(tmp_path, content)
    error = build_fails("{type: nasa, file: workload.tbz2}", tmp_path)
    assert f"{path}:{line}" in str(error) and error.value == value


def test_a_bad_row_deep_in_the_window_fails_up_front(tmp_path: Path) -> None:
    # Far past the first row and the first chunk of rows read at once, yet inside the run.
    rows = [f"{i},1" for i in range(9000)]
    rows[8500] = "8500,-1"
    write(tmp_path, "t,n\n" + "\n".join(rows) + "\n")
    error = build_fails("{type: counts, file: trace.csv, timeColumn: t, countColumn: n}", tmp_path, 4 * 3600 * SECOND)
    assert error.line == 8502 and error.value == "-1"  # the header is line 1, row i is line i + 2
    write(tmp_path, "t\n" + "".join(f"{i}\n" for i in range(9000)) + "1\n", name="times.csv")
    late = build_fails("{type: trace, file: times.csv, column: t}", tmp_path, 4 * 3600 * SECOND)
    assert late.line == 9002 and late.value == "1"


def test_rows_after_the_run_are_never_read(tmp_path: Path) -> None:
    # The check reads what the replay will read, no more: a bad row after the run's end is not an error.
    rows = "".join(f"{i}\n" for i in range(100)) + "oops\n"
    write(tmp_path, "t\n" + rows)
    assert len(build(parse("{type: trace, file: trace.csv, column: t}"), 50 * SECOND, base_dir=tmp_path)) == 50
    with pytest.raises(TraceError):
        build(parse("{type: trace, file: trace.csv, column: t}"), 200 * SECOND, base_dir=tmp_path)


# --- observed series (a real cluster's metrics) ---------------------------------------------------

ESPA = EXAMPLES / "calibration" / "espa-hpa" / "query-1" / "cosine" / "hpa-50"


def test_observed_exact_counts_follow_the_shared_runs_load() -> None:
    """The espa-hpa run's input_rate (records/s every 15 s) at 1,000 records a request: each 15-s sample
    gives rate x 15 / 1000 requests, rounded one way or the other (values read with the csv module here)."""
    with open(ESPA / "input_rate.csv", newline="") as file:
        rates = [float(row["value"]) for row in csv.DictReader(file)][:40]  # the run's first 10 minutes
    traffic = parse(f"{{type: observed, file: {ESPA / 'input_rate.csv'}, scale: 1000, counts: exact}}")
    times = np.array(build(traffic, 10 * MINUTE, base_dir=ESPA))
    got = np.bincount(times // (15 * SECOND), minlength=40)
    expected = np.array(rates) * 15 / 1000
    assert (np.abs(got - expected) < 1).all()


def test_observed_traffic_refuses_gaps_unless_told_and_names_a_missing_series() -> None:
    busy = parse(f"{{type: observed, file: {ESPA / 'busy_time.csv'}}}")  # NaN in its first rows
    with pytest.raises(ScenarioError, match="missing or NaN") as refused:
        build(busy, MINUTE, base_dir=ESPA)
    assert (refused.value.field, refused.value.value) == ("spec.traffic.gaps", "refuse")
    held = parse(f"{{type: observed, file: {ESPA / 'busy_time.csv'}, gaps: hold, scale: 0.01}}")
    assert build(held, MINUTE, base_dir=ESPA)  # busy fractions as a rate of 100 requests a unit
    named = parse(f"{{type: observed, file: {ESPA / 'lag.csv'}, series: load}}")
    with pytest.raises(ScenarioError, match="no such series") as raised:
        build(named, MINUTE, base_dir=ESPA)
    assert "lag.csv" in str(raised.value)
    assert (raised.value.field, raised.value.value) == ("spec.traffic.series", "load")


# --- the same traces as rates (a fluid run's traffic) ----------------------------------------------


def rate_of(traffic: Any, duration: int, base_dir: Path) -> Intensity:
    return build_rate(traffic, duration=duration, base_dir=base_dir)


def per(rate: Intensity, width: int, count: int, start: int = 0) -> list[float]:
    """Expected arrivals in each of `count` spans of `width` ns from `start`."""
    return [rate.mean(start + k * width, start + (k + 1) * width) * width / SECOND for k in range(count)]


def test_a_timestamp_trace_as_a_rate_counts_its_rows_in_seconds(tmp_path: Path) -> None:
    """The rows of the replay test (0, 0.5 and 2.5 s from the first; 99.5 s after the run) as a rate: two
    in the first second, one in the third; from 1 s at twice the time scale, one in each of [1, 2), [2, 3)
    and [6, 7) s; rateScale 3 triples them."""
    write(tmp_path, "id,at\na,100.5\nb,101\nc,103\nd,200\n")
    traffic = parse("{type: trace, file: trace.csv, column: at}")
    assert per(rate_of(traffic, 10 * SECOND, tmp_path), SECOND, 10) == [2, 0, 1, 0, 0, 0, 0, 0, 0, 0]
    later = traffic.model_copy(update={"start": SECOND, "time_scale": 2.0, "rate_scale": 3.0})
    assert per(rate_of(later, 10 * SECOND, tmp_path), SECOND, 8) == [0, 3, 3, 0, 0, 0, 3, 0]


def test_counts_as_a_rate_are_each_intervals_count_over_it(tmp_path: Path) -> None:
    write(tmp_path, "minute,requests\n0,3\n1,0\n2,5\n3,2\n")
    traffic = parse("{type: counts, file: trace.csv, timeColumn: minute, countColumn: requests, unit: m}")
    rate = rate_of(traffic.model_copy(update={"rate_scale": 2.0}), 10 * MINUTE, tmp_path)
    assert per(rate, MINUTE, 5) == pytest.approx([6, 0, 10, 4, 0])
    assert per(rate, 30 * SECOND, 2, start=2 * MINUTE) == pytest.approx([5, 5])  # flat within its minute


def test_nasa_as_a_rate_is_its_counts_per_second(tmp_path: Path) -> None:
    write_archive(tmp_path, b"2 0 3\n1 4 ")
    rate = rate_of(parse("{type: nasa, file: workload.tbz2, start: 1s}"), 5 * SECOND, tmp_path)
    assert per(rate, SECOND, 5) == pytest.approx([0, 2, 0, 3, 1])


def test_the_bundled_traces_as_rates_expect_what_their_replays_draw() -> None:
    """Azure's trace at rateScale 20: every row 20 times within the hour; NASA's first hour at 3 times."""
    azure = SECTION.validate_python(yaml.safe_load((EXAMPLES / "trace-replay.yaml").read_text())["spec"]["traffic"])
    assert rate_of(azure, 60 * MINUTE, EXAMPLES).mean(0, 60 * MINUTE) * 3600 == pytest.approx(20 * AZURE_ROWS)
    nasa = parse(f"{{type: nasa, file: {NASA.name}, rateScale: 3}}")
    times = np.array(build(nasa, 60 * MINUTE, base_dir=TRACES))
    assert per(rate_of(nasa, 60 * MINUTE, TRACES), SECOND, 3600) == pytest.approx(
        np.bincount(times // SECOND, minlength=3600)
    )


def test_observed_load_as_a_rate_is_the_series_over_its_scale() -> None:
    """The espa-hpa run's input_rate (records/s every 15 s) at 1,000 records a request: rate x 15 / 1000
    requests in each 15-s sample, exactly (values read with the csv module here)."""
    with open(ESPA / "input_rate.csv", newline="") as file:
        rates = [float(row["value"]) for row in csv.DictReader(file)][:40]
    traffic = parse(f"{{type: observed, file: {ESPA / 'input_rate.csv'}, scale: 1000}}")
    got = per(rate_of(traffic, 10 * MINUTE, ESPA), 15 * SECOND, 40)
    assert got == pytest.approx([r * 15 / 1000 for r in rates])


def test_a_trace_read_as_a_rate_names_its_bad_row(tmp_path: Path) -> None:
    write(tmp_path, "t\n1\n2\nnope\n")
    with pytest.raises(TraceError) as info:
        rate_of(parse("{type: trace, file: trace.csv, column: t}"), MINUTE, tmp_path)
    assert (info.value.line, info.value.value) == (4, "nope")


def test_an_offset_run_replays_the_traces_later_counts(tmp_path: Path) -> None:
    """Minutes 2 and 3 of the counts trace (5 then 2 requests), from an offset of 2 minutes: the run's first
    two minutes hold them, and its rate is theirs."""
    write(tmp_path, "minute,requests\n0,3\n1,0\n2,5\n3,2\n")
    traffic = parse("{type: counts, file: trace.csv, timeColumn: minute, countColumn: requests, unit: m}")
    times = list(
        build_arrivals(traffic, duration=2 * MINUTE, streams=RandomStreams(1), base_dir=tmp_path, offset=2 * MINUTE)
    )
    assert [sum(1 for t in times if m * MINUTE <= t < (m + 1) * MINUTE) for m in range(2)] == [5, 2]
    rate = build_rate(traffic, duration=2 * MINUTE, base_dir=tmp_path, offset=2 * MINUTE)
    assert per(rate, MINUTE, 2) == pytest.approx([5, 2])


def test_an_offset_run_replays_the_timestamps_after_it(tmp_path: Path) -> None:
    """Rows at 0, 0.5, 2.5 and 99.5 s from the first; from 0.25 s for 3 s: 0.25 and 2.25 s of the run."""
    write(tmp_path, "id,at\na,100.5\nb,101\nc,103\nd,200\n")
    traffic = parse("{type: trace, file: trace.csv, column: at}")
    times = build_arrivals(
        traffic, duration=3 * SECOND, streams=RandomStreams(1), base_dir=tmp_path, offset=SECOND // 4
    )
    assert list(times) == [SECOND // 4, 9 * SECOND // 4]
