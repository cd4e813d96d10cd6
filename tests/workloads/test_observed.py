"""Observed series read as Prometheus exports them, and their gaps filled only as asked.

The shared espa-hpa runs' figures (rows, NaN, the pod counts' range) were counted with a separate
stdlib script, not with this reader."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from skenario.core.time import SECOND
from skenario.workloads.observed import Series, fill, observed_arrivals, read_observed
from skenario.workloads.tracefiles import TraceError

RUNS = Path(__file__).resolve().parents[2] / "examples" / "calibration" / "espa-hpa" / "query-1" / "cosine"


def response(*series: tuple[dict[str, str], list[list[Any]]]) -> dict[str, Any]:
    result = [{"metric": metric, "values": values} for metric, values in series]
    return {"status": "success", "data": {"resultType": "matrix", "result": result}}


def write(tmp_path: Path, document: Any) -> Path:
    path = tmp_path / "observed.json"
    path.write_text(json.dumps(document))
    return path


def test_the_shared_runs_csvs_read_whole_with_their_nan_kept() -> None:
    load = read_observed(RUNS / "hpa-50" / "input_rate.csv")["input_rate"]
    assert len(load.values) == 624 and load.interval_ns == 15 * SECOND
    assert load.times_ns[0] == 1648143909 * SECOND
    busy = read_observed(RUNS / "hpa-50" / "busy_time.csv")["busy_time"]
    assert int(np.isnan(busy.values).sum()) == 85
    pods = read_observed(RUNS / "hpa-50" / "taskmanager.csv")["taskmanager"]
    assert (pods.values.min(), pods.values.max()) == (1, 15)


def test_a_query_range_response_gives_its_series_by_name_and_by_labels_where_names_clash(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        response(
            ({"__name__": "up", "job": "a"}, [[10, "1"], [25, "0"]]),
            ({"__name__": "up", "job": "b"}, [[10, "1"], [25.5, "NaN"]]),
        ),
    )
    found = read_observed(path)
    assert sorted(found) == ['up{job="a"}', 'up{job="b"}']
    b = found['up{job="b"}']
    assert b.times_ns.tolist() == [10 * SECOND, 25_500_000_000] and b.values[0] == 1 and np.isnan(b.values[1])


def test_an_object_of_responses_names_each_by_its_key(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "load": response(({}, [[0, "100"], [15, "250.5"]])),  # a rate(): no __name__
            "replicas": response(({"__name__": "kube_deployment_status_replicas"}, [[0, "2"], [15, "3"]])),
        },
    )
    found = read_observed(path)
    assert found["load"].values.tolist() == [100, 250.5] and found["replicas"].values.tolist() == [2, 3]


@pytest.mark.parametrize(
    ("document", "field", "says"),
    [
        ({"status": "error", "errorType": "bad_data", "error": "parse error"}, "status", "parse error"),
        ({"status": "success", "data": {"resultType": "vector", "result": []}}, "data.resultType", "query_range"),
        (response(({}, [[0, "1"]])), "data.result.0.metric", "no __name__"),
        (response(({"__name__": "x"}, [[0, "1"], ["later", "2"]])), "data.result.0.values.1", "unix seconds"),
        (response(({"__name__": "x"}, [[5, "1"], [5, "2"]])), "data.result.0.values.1", "increase"),
    ],
)
def test_a_malformed_response_is_one_line_naming_the_file_and_field(
    tmp_path: Path, document: Any, field: str, says: str
) -> None:
    path = write(tmp_path, document)
    with pytest.raises(TraceError) as raised:
        read_observed(path)
    message = str(raised.value)
    assert str(path) in message and field in message and says in message and "\n" not in message


def series(values: list[float], times_s: list[int]) -> Series:
    return Series("s", np.array(times_s, dtype=np.int64) * SECOND, np.array(values), "s.csv")


# Samples every 15 s; the one at 15 s is NaN and the one at 45 s never came.
GAPPY = series([1.0, float("nan"), 3.0, 5.0], [0, 15, 30, 60])


@pytest.mark.parametrize(
    ("policy", "expected"),
    [("hold", [1, 1, 3, 3, 5]), ("interpolate", [1, 2, 3, 4, 5]), ("zero", [1, 0, 3, 0, 5])],
)
def test_gaps_are_filled_on_the_series_grid_as_asked(policy: Any, expected: list[float]) -> None:
    filled = fill(GAPPY, policy)
    assert filled.times_ns.tolist() == [t * SECOND for t in (0, 15, 30, 45, 60)]
    assert filled.values.tolist() == expected


def test_gaps_are_refused_unless_the_user_says_how_to_fill_them() -> None:
    with pytest.raises(TraceError, match="2 missing or NaN samples, the first at 15") as raised:
        fill(GAPPY, "refuse")
    assert "s.csv" in str(raised.value)
    whole = series([1.0, 2.0, 3.0], [0, 15, 31])  # a scrape a second late is on its slot, not a gap
    assert fill(whole, "refuse").values.tolist() == [1, 2, 3]


def test_hold_at_the_start_takes_the_first_value_seen() -> None:
    assert fill(series([float("nan"), 4.0, 6.0], [0, 15, 30]), "hold").values.tolist() == [4, 4, 6]


def test_the_shared_runs_one_late_cpu_sample_is_a_gap_of_one() -> None:
    cpu = read_observed(RUNS / "hpa-90" / "CPU_load.csv")["CPU_load"]
    filled = fill(cpu, "interpolate")
    assert len(filled.values) == len(cpu.values) + 1  # the one 30-s step
    assert np.isfinite(filled.values).all()


def counts_per_interval(arrivals: list[int], edges_s: list[int]) -> list[int]:
    return np.histogram(np.array(arrivals) / SECOND, bins=edges_s)[0].tolist()


def test_exact_counts_give_each_interval_its_records_over_the_scale_rounded_one_way_or_the_other() -> None:
    rates = [100.0, 250.0, 0.0, 41.0]  # records/s, 15 s each: 1500, 3750, 0, 615 records
    load = series(rates, [0, 15, 30, 45])
    arrivals = list(observed_arrivals(load, scale=10, counts="exact", rng=np.random.default_rng(1)))
    got = counts_per_interval(arrivals, [0, 15, 30, 45, 60])
    assert got[:3] == [150, 375, 0] and got[3] in (61, 62)  # 61.5 rounded at random
    assert arrivals == sorted(arrivals)


def test_poisson_counts_follow_the_series_on_average() -> None:
    """An inhomogeneous Poisson process whose rate steps with the series: the total over 200 intervals of
    30 expected arrivals each is Poisson(6,000), sd 77; four sd either way is a failure by chance once in
    15,000 seeds, and the seed is fixed."""
    load = series([20.0] * 200, list(range(0, 3000, 15)))  # 20/s, scale 10: 30 per 15-s interval
    arrivals = list(observed_arrivals(load, scale=10, rng=np.random.default_rng(7)))
    assert abs(len(arrivals) - 6000) <= 4 * 77
    per = counts_per_interval(arrivals, list(range(0, 3015, 15)))
    assert 0.6 < np.var(per) / np.mean(per) < 1.4  # Poisson: variance equals the mean (exact counts give 0)


def test_a_counter_gives_its_increases_with_a_reset_counted_from_zero() -> None:
    total = series([0.0, 150.0, 300.0, 50.0, 200.0], [0, 15, 30, 45, 60])
    arrivals = list(observed_arrivals(total, kind="counter", counts="exact", rng=np.random.default_rng(3)))
    assert counts_per_interval(arrivals, [0, 15, 30, 45, 60]) == [150, 150, 50, 150]


def test_arrivals_are_shifted_to_start_and_cut_at_stop() -> None:
    load = series([2.0, 2.0, 2.0], [0, 15, 30])
    arrivals = list(
        observed_arrivals(load, counts="exact", start=100 * SECOND, stop=130 * SECOND, rng=np.random.default_rng(0))
    )
    assert len(arrivals) == 60 and min(arrivals) >= 100 * SECOND and max(arrivals) < 130 * SECOND


def test_a_series_with_gaps_is_refused_until_filled() -> None:
    with pytest.raises(TraceError, match="fill them first"):
        list(observed_arrivals(GAPPY, rng=np.random.default_rng(0)))
    assert len(list(observed_arrivals(fill(GAPPY, "zero"), counts="exact", rng=np.random.default_rng(0)))) == 135
