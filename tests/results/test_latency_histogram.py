"""The run's histogram of every completed request's latency, kept as the `latency_histogram` document: its
shape, its way through the run store (streamed as `skenario run` writes it), the exact latency CDF read from
it against the simulation's own histogram, and the chart drawn from it; runs stored without it keep the band."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from skenario.core.stats import LatencyHistogram
from skenario.core.time import MILLISECOND
from skenario.recording.summary import LATENCY_HISTOGRAM
from skenario.results import analysis
from skenario.results.report import MAX_POINTS, _thin_steps, charts
from skenario.results.rundata import RunData
from skenario.results.store import RunStore
from skenario.runs.execute import execute
from skenario.scenario.loader import parse_scenario
from skenario.scenario.simulation import Simulation
from tests.results.conftest import EXAMPLES

QUICKSTART_DIGEST = "6c6309e6d4d628ac"  # docs/tutorials/quickstart.md shows it: the document is not in the digest


def _simulation(path: Path, **replace: str) -> Simulation:
    text = path.read_text()
    for old, new in replace.items():
        text = text.replace(old, new)
    return Simulation(parse_scenario(text, path.name), base_dir=path.parent, scenario_text=text)


@pytest.fixture(scope="module")
def hpa_step() -> Simulation:
    """examples/hpa-step.yaml, 10 minutes: its traffic step saturates the pods, so the latencies spread."""
    simulation = _simulation(EXAMPLES / "hpa-step.yaml", **{"duration: 40m": "duration: 10m"})
    simulation.run()
    return simulation


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Simulation, RunData]:
    """examples/quickstart.yaml run as `skenario run` runs it, written to a store as it goes, and read back."""
    store = RunStore(tmp_path_factory.mktemp("store"))
    simulation = _simulation(EXAMPLES / "quickstart.yaml")
    executed = execute(simulation, store, scenario_file="quickstart.yaml")
    assert executed.run_id is not None
    return simulation, store.load(executed.run_id)


# -- the document --------------------------------------------------------------------------------


def test_the_document_describes_the_histogram_exactly() -> None:
    histogram = LatencyHistogram()
    rng = np.random.default_rng(5)
    for value in [0, 1, 255, 256, 257, 511, 512, *rng.lognormal(18, 1.5, size=5000).astype(int).tolist()]:
        histogram.record(value)
    document = json.loads(json.dumps(histogram.as_document()))
    assert set(document) == {"lower_ns", "upper_ns", "counts", "count", "total_ns", "min_ns", "max_ns"}
    assert len(document["counts"]) == len(list(histogram.buckets())) and all(document["counts"])
    assert sum(document["counts"]) == document["count"] == histogram.count
    for low, high, index in zip(document["lower_ns"], document["upper_ns"], dict(histogram.buckets()), strict=True):
        assert (low, high) == LatencyHistogram.bucket_bounds(index)
    assert document["lower_ns"][:4] == [0, 1, 255, 256] and document["upper_ns"][:4] == [1, 2, 256, 258]

    back = LatencyHistogram.from_document(document)
    assert list(back.buckets()) == list(histogram.buckets())
    assert (back.count, back.total, back.min, back.max) == (histogram.count, histogram.total, 0, histogram.max)
    assert [back.percentile(q) for q in (1, 50, 95, 99, 100)] == [histogram.percentile(q) for q in (1, 50, 95, 99, 100)]

    empty = LatencyHistogram().as_document()
    assert empty["lower_ns"] == empty["upper_ns"] == empty["counts"] == []
    assert (empty["count"], empty["total_ns"], empty["min_ns"], empty["max_ns"]) == (0, 0, None, None)
    assert LatencyHistogram.from_document(empty).percentile(50) is None
    with pytest.raises(ValueError, match="not one of the histogram's buckets"):
        LatencyHistogram.from_document(document | {"upper_ns": [2, *document["upper_ns"][1:]]})


def test_a_run_keeps_its_histogram_outside_its_digest(stored: tuple[Simulation, RunData]) -> None:
    simulation, run = stored
    assert run.digest == simulation.summary().digest == QUICKSTART_DIGEST
    assert simulation.documents()[LATENCY_HISTOGRAM] == simulation.model.requests_complete.latency.as_document()


# -- through the store ---------------------------------------------------------------------------


def test_the_document_round_trips_through_a_streamed_run(stored: tuple[Simulation, RunData]) -> None:
    simulation, run = stored
    assert run.phase == "Completed"
    document = run.documents[LATENCY_HISTOGRAM]
    in_memory = simulation.model.requests_complete.latency
    assert document == RunData.from_simulation(simulation).documents[LATENCY_HISTOGRAM]
    assert list(zip(document["lower_ns"], document["counts"], strict=True)) == [
        (LatencyHistogram.bucket_bounds(index)[0], n) for index, n in in_memory.buckets()
    ]
    assert sum(document["counts"]) == document["count"] == run.summary["requests_completed"] > 1000
    back = LatencyHistogram.from_document(document)
    for q in (50, 95, 99):
        assert back.percentile(q) == run.summary[f"latency_p{q}_ns"]
    assert back.total == in_memory.total
    pd.testing.assert_frame_equal(analysis.latency_cdf(run), analysis.latency_cdf(RunData.from_simulation(simulation)))


def test_a_day_keeps_a_small_document() -> None:
    """A day's latencies spread over a few thousand buckets at most (0.4% wide): tens of kB, not a row per request."""
    histogram = LatencyHistogram()
    for value in np.random.default_rng(1).lognormal(18, 2, size=200_000).astype(int).tolist():
        histogram.record(value)
    assert len(json.dumps(histogram.as_document())) < 100_000


def test_a_fluid_run_keeps_its_histogram_too() -> None:
    simulation = _simulation(EXAMPLES / "fluid" / "step.yaml")
    simulation.run()
    run = RunData.from_simulation(simulation)
    document = run.documents[LATENCY_HISTOGRAM]
    assert run.summary["mode"] == "fluid"
    assert sum(document["counts"]) == run.summary["requests_completed"] > 0
    cdf = analysis.latency_cdf(run)
    assert list(cdf.columns) == ["share"] and cdf["share"].iloc[-1] == 1.0
    assert "a fluid run's" in dict(charts(run))["chart-latency-cdf"].layout.title.text


# -- the exact CDF -------------------------------------------------------------------------------


def test_the_exact_cdf_crosses_each_percentile_in_its_bucket(hpa_step: Simulation) -> None:
    run = RunData.from_simulation(hpa_step)
    histogram = hpa_step.model.requests_complete.latency  # the simulation's own, in memory
    cdf = analysis.latency_cdf(run)
    assert list(cdf.columns) == ["share"] and cdf.index.name == "latency_ms"
    assert len(cdf) == len(list(histogram.buckets())) + 1 > 50
    share = cdf["share"].to_numpy()
    assert share[0] == 0 and share[-1] == 1 and (np.diff(share) > 0).all()
    edges_ns = np.round(cdf.index.to_numpy() * MILLISECOND).astype(np.int64)
    assert edges_ns[0] == histogram.bucket_bounds(next(histogram.buckets())[0])[0]
    for q in (50, 95, 99):
        crossing = int(np.argmax(share >= q / 100))  # the first edge below which q% of the requests are
        value = histogram.percentile(q)
        assert value is not None and edges_ns[crossing - 1] <= value < edges_ns[crossing], q
        assert value == run.summary[f"latency_p{q}_ns"]
    # At each edge, the share of the requests recorded below it, counted from the histogram's buckets.
    below = [sum(n for i, n in histogram.buckets() if histogram.bucket_bounds(i)[1] <= edge) for edge in edges_ns]
    np.testing.assert_allclose(share, np.array(below) / histogram.count, rtol=1e-12)


def test_the_chart_draws_the_exact_cdf_as_one_line(hpa_step: Simulation) -> None:
    run = RunData.from_simulation(hpa_step)
    cdf = analysis.latency_cdf(run)
    figure = dict(charts(run, objectives={"latency_ms": 300, "percentile": 95, "error_rate": 0.01}))
    chart = figure["chart-latency-cdf"]
    assert chart.layout.title.text.startswith("Latency: the share")
    assert "exact at each bucket's edge" in chart.layout.title.text and "fluid" not in chart.layout.title.text
    traces = {trace.name: trace for trace in chart.data}
    assert set(traces) == {"share within x", "p95 objective: 95% within 300 ms"}
    line = traces["share within x"]
    drawn = cdf[cdf.index > 0]
    assert list(line.y) == [float(f"{v:.4g}") for v in drawn["share"]]
    assert list(line.x) == [float(f"{v:.4g}") for v in drawn.index]
    assert line.line.shape == "hv"


def test_a_long_exact_cdf_is_thinned_to_exact_points() -> None:
    edges = np.geomspace(1, 10_000, 4 * MAX_POINTS)
    cdf = pd.DataFrame({"share": np.linspace(0, 1, len(edges))}, index=pd.Index(edges, name="latency_ms"))
    shown = _thin_steps(cdf)
    assert len(shown) <= MAX_POINTS
    assert shown.index[0] == cdf.index[0] and shown.index[-1] == cdf.index[-1] and shown["share"].iloc[-1] == 1
    assert shown.index.isin(cdf.index).all() and (shown["share"] == cdf["share"].reindex(shown.index)).all()


# -- runs without it -----------------------------------------------------------------------------


def test_a_run_stored_before_keeps_the_band(hpa_step: Simulation) -> None:
    with_it = RunData.from_simulation(hpa_step)
    without = dataclasses.replace(with_it, documents={})
    band = analysis.latency_cdf(without)
    assert list(band.columns) == ["at_least", "at_most"]
    pd.testing.assert_frame_equal(band, analysis.bounds_from_percentiles(with_it))
    assert "keeps no histogram" in dict(charts(without))["chart-latency-cdf"].layout.title.text
    # The exact share lies in the band wherever both are known, to a bucket's width (the band's percentiles
    # are their buckets' midpoints): at each band row, between the exact shares a bucket either side.
    exact = analysis.latency_cdf(with_it)
    edges, share = exact.index.to_numpy(), exact["share"].to_numpy()
    for x, row in band.iterrows():
        low = share[max(np.searchsorted(edges, float(x) * (1 - 0.01), side="right") - 1, 0)]
        high = share[min(np.searchsorted(edges, float(x) * (1 + 0.01)), len(share) - 1)]
        assert row["at_least"] <= high + 1e-12 and row["at_most"] >= low - 1e-12, x


def test_a_document_not_of_the_shape_falls_back_to_the_band(hpa_step: Simulation) -> None:
    run = RunData.from_simulation(hpa_step)
    for damaged in ({"counts": [1, 2]}, {"lower_ns": [1], "upper_ns": [2, 3], "counts": [1]}, [1, 2], "x"):
        broken = dataclasses.replace(run, documents={LATENCY_HISTOGRAM: damaged})
        assert list(analysis.latency_cdf(broken).columns) == ["at_least", "at_most"], damaged


def test_a_run_with_nothing_completed_has_an_empty_exact_cdf(empty_run: RunData) -> None:
    run = dataclasses.replace(empty_run, documents={LATENCY_HISTOGRAM: LatencyHistogram().as_document()})
    cdf = analysis.latency_cdf(run)
    assert cdf.empty and list(cdf.columns) == ["share"]
    figure = dict(charts(run))["chart-latency-cdf"]
    assert "no request completed" in figure.layout.title.text
    assert all(len(trace.x) == 0 for trace in figure.data)
