"""Analysis of a run: hand-computed answers on the hand-made run of conftest, and invariants any run keeps."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from skenario.core.time import SECOND
from skenario.results import analysis
from skenario.results.rundata import RunData

S = SECOND
GI = 2**30
TIMES_S = [10, 20, 30, 40, 50, 55]  # the hand-made run's interval ends (conftest)
INITIAL_LIVE = 2  # replicas it starts with


def test_every_frame_is_indexed_by_the_interval_ends_in_seconds(run: RunData) -> None:
    for frame in (
        analysis.stocks(run),
        analysis.replicas(run),
        analysis.request_outcomes(run),
        analysis.latency(run),
        analysis.cpu(run),
        analysis.cpu_per_replica(run),
        analysis.slo(run, latency_ms=100, error_rate=0.05),
    ):
        assert frame.index.name == "time_s"
        assert list(frame.index) == TIMES_S


def test_stocks_and_replicas_read_the_counts(run: RunData) -> None:
    stocks = analysis.stocks(run)
    assert list(stocks["replicas_pending"]) == [0, 0, 1, 1, 0, 0]
    assert list(stocks["replicas_launching"]) == [0, 1, 0, 0, 0, 0]
    assert list(stocks["replicas_terminating"]) == [0, 0, 1, 0, 0, 0]
    assert list(stocks["replicas_terminated"]) == [0, 0, 0, 1, 2, 2]
    assert list(stocks["requests_buffered"]) == [0, 1, 0, 2, 0, 0]
    # Completed and failed requests are stocks that only grow: at the end they hold the run's totals.
    assert list(stocks["requests_completed"]) == [100, 290, 290, 570, 780, 780]
    assert stocks["requests_completed"].iloc[-1] == run.summary["requests_completed"]
    assert stocks["requests_failed"].iloc[-1] == run.summary["requests_failed"]
    replicas = analysis.replicas(run)
    assert list(replicas.columns) == ["desired", "pending", "launching", "active", "restarting", "terminating", "max"]
    assert list(replicas["desired"]) == [2, 3, 4, 3, 2, 2]
    assert list(replicas["max"]) == [4] * 6


def test_request_rates_are_counts_over_each_intervals_length(run: RunData) -> None:
    outcomes = analysis.request_outcomes(run)
    # Five intervals of 10 s, then 50 s -> 55 s; the first starts at 0.
    assert list(outcomes["interval_s"]) == [10, 10, 10, 10, 10, 5]
    assert list(outcomes["arrived_per_s"]) == [10, 20, 2, 30, 20, 0]
    assert list(outcomes["failed_timeout_per_s"]) == [0, 0.5, 2, 1, 0, 0]
    for name in ("arrived", "completed", "failed", "failed_timeout", "failed_overload"):
        assert np.allclose(outcomes[f"{name}_per_s"] * outcomes["interval_s"], outcomes[name])
    assert (outcomes["failed_timeout"] + outcomes["failed_overload"] == outcomes["failed"]).all()
    assert outcomes["arrived"].sum() == run.summary["requests_arrived"]
    assert outcomes["failed_timeout"].sum() == run.summary["failures"]["timeout"]


def test_latency_and_cpu_are_numbers_with_nan_where_nothing_was_measured(run: RunData) -> None:
    latency = analysis.latency(run)
    assert list(latency.columns) == ["p50_ms", "p95_ms", "p99_ms", "mean_ms"]
    assert latency.dtypes.eq(float).all()
    assert latency["p99_ms"].iloc[3] == 400
    assert latency["p50_ms"].isna().tolist() == [False, False, True, False, False, True]
    cpu = analysis.cpu(run)
    assert list(cpu["request_millicores"]) == [500, 1000, 1000, 1000, 1000, 1000]
    assert list(cpu.columns) == ["of_request", "of_nodes", "request_millicores"]
    assert cpu["of_request"].iloc[-1] == pytest.approx(0.15)
    assert cpu["of_nodes"].iloc[-1] == pytest.approx(0.0375)


def test_cpu_per_replica_has_a_column_per_replica_and_nan_where_it_did_not_serve(run: RunData) -> None:
    wide = analysis.cpu_per_replica(run)
    assert list(wide.columns) == [0, 1, 2, 3]
    assert wide.loc[10, 0] == 0.6
    assert wide.loc[40, 1] == 0.0  # its last, terminated row
    assert math.isnan(wide.loc[50, 1])  # gone
    assert math.isnan(wide.loc[30, 2])  # active, but not for any time yet
    assert wide[3].isna().all()  # never served


def test_a_replica_terminating_mid_interval_lands_in_the_interval_containing_it(run: RunData) -> None:
    extra = pd.DataFrame(
        [{"time_ns": 47 * S, "replica": 9, "state": "terminated", "cpu_utilisation": 0.7, "requests_held": 0}]
    )
    extra["time_s"] = 47.0
    run = dataclasses.replace(run, replica_series=pd.concat([run.replica_series, extra], ignore_index=True))
    wide = analysis.cpu_per_replica(run)
    assert list(wide.index) == TIMES_S
    assert wide[9].dropna().to_dict() == {50: 0.7}


def test_decisions_flatten_each_autoscalers_detail(run: RunData) -> None:
    frame = analysis.decisions(run)
    assert list(frame.index) == [15, 20, 30, 45]
    assert list(frame["autoscaler"]) == ["web", "vpa", "web", "web"]
    assert list(frame.columns[:2]) == ["autoscaler", "desired"]
    assert frame["desired"].iloc[[0, 2, 3]].tolist() == [3, 4, 3]
    assert math.isnan(frame["desired"].iloc[1])  # a VPA asks for CPU, not replicas
    assert frame["metrics.cpu.utilization"].iloc[2] == 150
    assert frame["target"].iloc[1] == 1000
    hpa = analysis.decisions(run, "web")
    assert list(hpa["autoscaler"].unique()) == ["web"]
    assert len(hpa) == 3
    assert analysis.decisions(run, "absent").empty


def test_events_are_the_timeline_without_decisions(run: RunData) -> None:
    frame = analysis.events(run)
    assert list(frame.columns) == ["id", "operation", "target", "message"]
    assert list(frame.index) == [20, 30]
    assert list(frame["id"]) == ["vpa-bump", "crash"]
    assert list(frame["operation"]) == ["Patch", "Delete"]


def test_slo_marks_each_interval_by_the_strict_rule(run: RunData) -> None:
    frame = analysis.slo(run, latency_ms=100, percentile=99, error_rate=0.05)
    # 1: fine. 2: 10 of 200 failed is exactly 5%, not over. 3: nothing completed, so no latency
    # violation, but 20 of 20 failed. 4: p99 400 ms, and 20 of 300 failed. 5: fine. 6: nothing happened.
    assert frame["latency_violation"].tolist() == [False, False, False, True, False, False]
    assert frame["error_violation"].tolist() == [False, False, True, True, False, False]
    assert frame["compliant"].tolist() == [True, True, False, False, True, True]
    assert frame["error_rate"].iloc[1] == pytest.approx(10 / 200)
    assert math.isnan(frame["error_rate"].iloc[5])
    p50 = analysis.slo(run, latency_ms=30, percentile=50, error_rate=1.0)
    assert p50["latency_violation"].tolist() == [False, False, False, True, False, False]  # 30 is not over 30
    assert not p50["error_violation"].any()


def test_slo_summary_counts_intervals_and_judges_the_run_by_its_totals(run: RunData) -> None:
    result = analysis.slo_summary(run, latency_ms=100, error_rate=0.05)
    assert result["intervals"] == 6
    assert result["latency_violations"] == 1
    assert result["error_violations"] == 2
    assert result["compliant_fraction"] == pytest.approx(4 / 6)
    assert result["error_rate"] == pytest.approx(50 / (780 + 50))
    assert result["latency_ms"] == pytest.approx(350)
    assert result["latency_met"] is False  # 350 ms over the whole run
    assert result["error_rate_met"] is False  # 6.0% > 5%
    assert result["met"] is False
    relaxed = analysis.slo_summary(run, latency_ms=350, percentile=99, error_rate=0.07)
    assert (relaxed["latency_met"], relaxed["error_rate_met"], relaxed["met"]) == (True, True, True)
    assert relaxed["unknown"] is None and result["unknown"] is None
    assert relaxed["latency_violations"] == 1  # interval 4 still went over


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"latency_ms": 100, "percentile": 90, "error_rate": 0.1}, "percentile"),
        ({"latency_ms": 0, "error_rate": 0.1}, "latency"),
        ({"latency_ms": 100, "error_rate": 1.5}, "error-rate"),
    ],
)
def test_slo_rejects_targets_it_cannot_judge(run: RunData, kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        analysis.slo(run, **kwargs)  # type: ignore[arg-type]


def test_cost_from_the_lifecycles(run: RunData) -> None:
    result = analysis.cost(run)
    # r3 never left Pending: it ran nowhere and costs nothing.
    assert result["replicas"] == 3 and result["pods_never_bound"] == 1
    assert result["replica_hours"] == pytest.approx((55 + 40 + 35) / 3600)
    assert result["cpu_core_request_hours"] == pytest.approx((0.5 * 55 + 0.5 * 40 + 1.0 * 35) / 3600)
    assert result["cpu_core_usage_hours"] == pytest.approx((33 + 8 + 10) / 3600)
    # OpenCost's cpuCoreHours: each pod the larger of its request and its mean use (r0 used 0.6 of 0.5).
    assert result["cpu_core_hours"] == pytest.approx((0.6 * 55 + 0.5 * 40 + 1.0 * 35) / 3600)
    assert result["cpu_core_request_average"] == pytest.approx(82.5 / 55)
    assert result["cpu_core_usage_average"] == pytest.approx(51 / 55)
    assert result["cpu_efficiency"] == pytest.approx(51 / 82.5)
    # 0.5 GiB for 55 s and 40 s, 2 GiB for 35 s; the replica without a request costs no memory.
    assert result["ram_byte_hours"] == pytest.approx((0.5 * 55 + 0.5 * 40 + 2 * 35) * GI / 3600)
    assert result["container_restarts"] == 2
    assert result["node_hours"] is None  # no spec.cluster: no nodes table
    for key in ("replica_cost", "cpu_cost", "ram_cost", "node_cost", "total_cost"):
        assert result[key] is None
    priced = analysis.cost(run, price_per_replica_hour=3.6, price_per_cpu_hour=36.0)
    assert priced["replica_cost"] == pytest.approx(130 * 3.6 / 3600)
    assert priced["cpu_cost"] == pytest.approx(88 * 36 / 3600)
    assert priced["total_cost"] == pytest.approx(priced["replica_cost"] + priced["cpu_cost"])
    memory_priced = analysis.cost(run, price_per_cpu_hour=1.0, price_per_gib_hour=2.0)
    assert memory_priced["ram_cost"] == pytest.approx(117.5 * 2 / 3600)
    assert memory_priced["total_cost"] == pytest.approx((88 + 235) / 3600)


def test_node_cost_from_the_nodes_table(run: RunData) -> None:
    # Two 4-core nodes from the start, one of 2 cores from 20 s to 50 s: 55 + 55 + 30 node-seconds.
    nodes = [
        {"node": "a", "added_s": 0.0, "removed_s": None, "cpu_millicores": 4000},
        {"node": "b", "added_s": 0.0, "removed_s": None, "cpu_millicores": 4000},
        {"node": "c", "added_s": 20.0, "removed_s": 50.0, "cpu_millicores": 2000},
    ]
    with_nodes = dataclasses.replace(run, documents={"nodes": nodes})
    result = analysis.cost(with_nodes, price_per_node_hour=0.36)
    assert result["node_hours"] == pytest.approx(140 / 3600)
    assert result["node_cpu_core_hours"] == pytest.approx((4 * 55 * 2 + 2 * 30) / 3600)
    assert result["node_cost"] == result["total_cost"] == pytest.approx(140 * 0.36 / 3600)


def test_limits_are_shares_of_the_run_time(run: RunData) -> None:
    # At its bound of 4 only at the 30 s sample: one 10 s interval of 55 s. No cluster: the rest cannot apply.
    assert analysis.limits(run) == {
        "at_max_replicas": pytest.approx(10 / 55),
        "pods_pending": None,
        "cluster_full": None,
    }
    series = run.series.assign(nodes=2, pods_pending=[0, 0, 1, 1, 0, 0], cluster_full=[0, 0, 0, 1, 0, 0])
    series["replicas_pending"] = series["pods_pending"]
    on_nodes = dataclasses.replace(run, series=series)
    assert analysis.limits(on_nodes) == {
        "at_max_replicas": pytest.approx(10 / 55),
        "pods_pending": pytest.approx(20 / 55),
        "cluster_full": pytest.approx(10 / 55),
    }
    unbounded = dataclasses.replace(run, series=run.series.assign(replicas_max=None))
    assert analysis.limits(unbounded)["at_max_replicas"] is None


def test_replica_hours_equal_the_integral_of_live_replicas(run: RunData) -> None:
    # Replicas change only at interval ends here, so the live count sampled at one end holds
    # throughout the next interval: the integral is a left Riemann sum of the series.
    stocks = analysis.stocks(run)
    # Pending replicas are not billed: only bound ones (launching, active, terminating) count.
    live = (stocks["replicas_launching"] + stocks["replicas_active"] + stocks["replicas_terminating"]).tolist()
    widths = analysis.interval_seconds(run).tolist()
    integral_s = sum(n * w for n, w in zip([INITIAL_LIVE, *live[:-1]], widths, strict=True))
    assert analysis.cost(run)["replica_hours"] * 3600 == pytest.approx(integral_s)


def test_a_run_that_did_not_complete_is_never_called_met_but_can_have_missed(run: RunData) -> None:
    """What a stopped run did so far cannot promise the rest: a met so far is unknown, a miss is a miss."""
    stopped = dataclasses.replace(run, phase="Failed", message="stopped by signal SIGTERM")
    relaxed = analysis.slo_summary(stopped, latency_ms=350, error_rate=0.07)
    assert (relaxed["latency_met"], relaxed["error_rate_met"]) == (True, True)
    assert relaxed["met"] is None and relaxed["unknown"] == "the run is Failed: stopped by signal SIGTERM"
    strict = analysis.slo_summary(stopped, latency_ms=100, error_rate=0.05)
    assert strict["met"] is False and strict["unknown"] is None


def test_a_completed_run_where_nothing_finished_has_no_verdict_and_one_where_all_failed_missed(run: RunData) -> None:
    quiet = dataclasses.replace(run, summary=run.summary | {"requests_completed": 0, "requests_failed": 0})
    judged = analysis.slo_summary(quiet, latency_ms=100, error_rate=0.05)
    assert (judged["met"], judged["unknown"]) == (None, "no request finished")
    failing = dataclasses.replace(run, summary=run.summary | {"requests_completed": 0, "requests_failed": 20})
    judged = analysis.slo_summary(failing, latency_ms=100, error_rate=0.05)
    assert (judged["latency_met"], judged["error_rate_met"], judged["met"]) == (None, False, False)


def test_a_run_with_nothing_recorded_gives_empty_frames(empty_run: RunData) -> None:
    run = empty_run
    for function in (analysis.stocks, analysis.request_outcomes, analysis.latency, analysis.cpu_per_replica):
        assert function(run).empty
    assert analysis.decisions(run).empty and analysis.events(run).empty
    assert analysis.cost(run)["replica_hours"] == 0 and analysis.cost(run)["cpu_efficiency"] is None
    judged = analysis.slo_summary(run, latency_ms=1, error_rate=0)
    assert judged["compliant_fraction"] is None and judged["latency_ms"] is None
    # Nothing ran, so nothing was met: the verdict is unknown, with why.
    assert (judged["latency_met"], judged["error_rate_met"], judged["met"]) == (None, None, None)
    assert judged["unknown"] == "the run is Pending: not started"


# -- a real run ----------------------------------------------------------------------------------


def test_a_real_runs_series_adds_up_to_its_summary(real_run: RunData) -> None:
    summary = real_run.summary
    outcomes = analysis.request_outcomes(real_run)
    assert outcomes["arrived"].sum() == summary["requests_arrived"]
    assert outcomes["completed"].sum() == summary["requests_completed"]
    assert outcomes["failed"].sum() == summary["requests_failed"]
    assert {reason: outcomes[f"failed_{reason}"].sum() for reason in summary["failures"]} == summary["failures"]
    assert outcomes["interval_s"].sum() == pytest.approx(real_run.simulated_ns / S)
    for name in ("arrived", "completed", "failed"):
        assert np.allclose(outcomes[f"{name}_per_s"] * outcomes["interval_s"], outcomes[name])
    stocks = analysis.stocks(real_run).iloc[-1]
    assert stocks["replicas_terminated"] == summary["replicas_terminated"]
    assert stocks["requests_completed"] == summary["requests_completed"]


def test_a_real_runs_cpu_use_agrees_with_its_summary(real_run: RunData) -> None:
    # The summary's CPU of request is busy core-time over the core-time serving replicas requested (from
    # activation to termination); its CPU of the nodes the same busy time over the 4-core node each pod
    # has to itself from its binding. The lifecycles give the second and third, cost the first.
    lives = real_run.replicas
    ended = lives["terminated_ns"].astype(float).fillna(real_run.simulated_ns)
    request = lives["cpu_request"].astype(float) / 1000
    requested_core_ns = (request * (ended - lives["activated_ns"].astype(float))).sum()  # NaN (never active) skipped
    node_core_ns = (4 * (ended - lives["bound_ns"].astype(float))).sum()
    busy_core_ns = analysis.cost(real_run)["cpu_core_usage_hours"] * 3600 * S
    summary = real_run.summary
    assert busy_core_ns / requested_core_ns == pytest.approx(summary["cpu_request_utilisation"], rel=1e-9)
    assert busy_core_ns / node_core_ns == pytest.approx(summary["node_cpu_utilisation"], rel=1e-9)


def test_a_real_runs_desired_replicas_follow_its_hpa_decisions(real_run: RunData) -> None:
    decisions = analysis.decisions(real_run, "hpa")
    assert len(decisions) > 30 and decisions["desired"].notna().all()
    desired = analysis.replicas(real_run)["desired"]
    for time_s, value in desired.items():
        before = decisions[decisions.index <= time_s]["desired"]
        assert value == (before.iloc[-1] if len(before) else 2), time_s  # 2: the workload's replicas


def test_a_real_runs_events_are_listed_in_order(real_run: RunData) -> None:
    events = analysis.events(real_run)
    assert list(events["id"]) == ["crash", "metrics-down", "metrics-up", "end"]
    assert list(events.index) == [120, 180, 240, 540]
    assert list(events["operation"]) == ["Delete", "Delete", "Create", "Done"]
    assert real_run.simulated_ns == 540 * S  # the done event ended it
