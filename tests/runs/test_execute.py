"""`execute`: each kind of run kept as its `keeping` says, through the one writer, and stopped the same way."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from skenario.results.store import RunStore
from skenario.runs import KepRun, Stopped, TraceOptions, execute, open_run
from skenario.scenario.simulation import Simulation
from tests.runs.inputs import EXAMPLES, SLS, SLS_NODES

QUICKSTART = EXAMPLES / "quickstart.yaml"
KEP = EXAMPLES / "kep140" / "taint-and-delete.yaml"


def test_a_scenario_is_kept_with_its_series_and_summary(tmp_path: Path) -> None:
    run = open_run(QUICKSTART)
    assert isinstance(run, Simulation)
    store = RunStore(tmp_path / "store")
    done = execute(run, store, scenario_file=str(QUICKSTART), name="first", tags=["a"])
    (row,) = store.runs()
    assert (row["run"], row["phase"], row["digest"]) == (done.run_id, "Completed", run.summary().digest)
    kept = store.load(done.run_id or 0)
    assert len(kept.series) == len(run.recorder.rows())
    assert done.store == store.path


def test_a_run_that_lets_go_of_its_stored_history_stores_the_same_history(tmp_path: Path) -> None:
    """With `release`, each batch the store commits leaves the run's memory: what the store holds is what a run
    keeping everything stores, the series stays whole in memory, and fewer rows, entries and decisions stay."""
    stored = {}
    for release in (False, True):
        run = open_run(EXAMPLES / "hpa-step.yaml")
        assert isinstance(run, Simulation)
        store = RunStore(tmp_path / str(release))
        done = execute(run, store, scenario_file="hpa-step.yaml", release=release)
        data = store.load(done.run_id or 0)
        stored[release] = (data.replica_series, data.timeline, run)
    (replicas, timeline, whole), (replicas_released, timeline_released, released) = stored[False], stored[True]
    assert replicas_released.equals(replicas) and timeline_released.equals(timeline)
    assert len(released.recorder.rows()) == len(whole.recorder.rows())
    forgotten = released.recorder.replica_rows_forgotten
    assert forgotten > 0 and len(released.replica_rows(forgotten)) + forgotten == len(whole.replica_rows())
    assert len(released.timeline.entries()) < len(whole.timeline.entries()) == len(released.timeline)
    [hpa], [hpa_released] = whole.main.autoscalers.values(), released.main.autoscalers.values()
    assert len(hpa_released.decisions) < len(hpa.decisions)  # those stored let go; the timeline has them all


def test_a_run_kept_nowhere_may_let_go_of_its_history_as_it_goes() -> None:
    """Without a store, `release` lets each stretch's rows and entries go: the run's figures are the same (its
    digest), its series whole, and fewer of its per-replica rows and timeline entries stay."""
    runs = {}
    for release in (False, True):
        run = open_run(EXAMPLES / "hpa-step.yaml")
        assert isinstance(run, Simulation)
        execute(run, None, release=release)
        runs[release] = run
    whole, released = runs[False], runs[True]
    assert released.summary().digest == whole.summary().digest
    assert released.series().equals(whole.series())
    forgotten = released.recorder.replica_rows_forgotten
    assert forgotten > 0 and len(released.replica_rows(forgotten)) + forgotten == len(whole.replica_rows())
    assert len(released.timeline) == len(whole.timeline) > len(released.timeline.entries())


def test_a_kep140_run_is_kept_whole_once_over(tmp_path: Path) -> None:
    run = open_run(KEP)
    assert isinstance(run, KepRun)
    store = RunStore(tmp_path / "store")
    done = execute(run, store, scenario_file=str(KEP))
    (row,) = store.runs()
    assert (row["run"], row["phase"], row["digest"]) == (done.run_id, "Completed", run.digest())
    assert store.load(done.run_id or 0).documents["kep140"]["time"] == 4  # Done at FakeTime 4


def test_a_trace_replay_is_not_kept(tmp_path: Path) -> None:
    run = open_run(SLS, trace=TraceOptions(kind="sls", nodes=SLS_NODES))
    done = execute(run, RunStore(tmp_path / "store"))
    assert (done.run_id, done.store, run.phase) == (None, None, "Completed")
    assert not (tmp_path / "store").exists()


def _terminate_at_first_step(now: int) -> None:
    signal.raise_signal(signal.SIGTERM)


def test_a_stopped_scenario_is_kept_failed_with_what_it_recorded(tmp_path: Path) -> None:
    run = open_run(QUICKSTART)
    store = RunStore(tmp_path / "store")
    with pytest.raises(Stopped) as stopped:
        execute(run, store, progress=_terminate_at_first_step)
    assert stopped.value.exit_code == 128 + signal.SIGTERM
    (row,) = store.runs()
    assert (row["run"], row["phase"]) == (stopped.value.run_id, "Failed")
    assert "stopped by signal SIGTERM" in store.load(row["run"]).message
    assert run.simulated() < (run.end or 0)


def test_a_stopped_kep140_run_is_not_kept(tmp_path: Path) -> None:
    run = open_run(KEP)
    with pytest.raises(Stopped) as stopped:
        execute(run, RunStore(tmp_path / "store"), progress=_terminate_at_first_step)
    assert (stopped.value.run_id, str(run.phase)) == (None, "Failed")
    assert not (tmp_path / "store").exists()


def test_signals_are_given_back_once_a_run_is_over(tmp_path: Path) -> None:
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    execute(open_run(KEP), None)
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before
