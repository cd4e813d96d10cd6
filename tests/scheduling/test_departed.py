"""A replay that lets go of its pods decides, counts and tables exactly what one that keeps them does.

The property is independent of the code under test: the same trace replayed twice, once keeping
every pod (`release=False`, the way every replay worked before) and once letting go of them.
"""

from __future__ import annotations

import csv
import gc
import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.cli.scheduling import write_pod_csv
from skenario.core.time import MILLISECOND, SECOND
from skenario.scheduling.analysis import POD_COLUMNS, pod_records
from skenario.scheduling.controller import SchedulerSettings
from skenario.scheduling.departed import DepartedPods, record_of
from skenario.scheduling.framework import default_profile
from skenario.scheduling.objects import NodeSpec, PodSpec
from skenario.scheduling.pods import Pod, PodEnd
from skenario.scheduling.replay import BatchReplay
from skenario.scheduling.traces import TracePod
from skenario.scheduling.traces.base import ListedPods, sorted_pods

GIB = 1024**3


@st.composite
def traces(draw: st.DrawFn) -> tuple[list[NodeSpec], list[TracePod]]:
    """A few small nodes and pods of three priorities (so some are preempted), some never ending."""
    nodes = [
        NodeSpec(f"n{i}", cpu=draw(st.integers(500, 3000)), memory=4 * GIB, pods=draw(st.integers(2, 5)))
        for i in range(draw(st.integers(1, 3)))
    ]
    pods = []
    for k in range(draw(st.integers(1, 16))):
        spec = PodSpec(f"p{k:02d}", cpu=draw(st.integers(100, 2500)), memory=GIB // 4, priority=draw(st.integers(0, 2)))
        created = draw(st.integers(1, 10)) * SECOND + draw(st.sampled_from((0, 1, 500 * MILLISECOND)))
        duration = draw(st.one_of(st.none(), st.integers(1, 8).map(lambda s: s * SECOND)))
        pods.append(TracePod(spec, created, duration))
    return nodes, pods


def _replay(
    nodes: list[NodeSpec], pods: list[TracePod], release: bool, heartbeat: int, until: int | None
) -> BatchReplay:
    settings_ = SchedulerSettings(heartbeat_interval=heartbeat, heartbeat_delay=heartbeat // 4, plugin_results="none")
    replay = BatchReplay(nodes, list(pods), default_profile(), settings_, seed=3, until=until, release=release)
    replay.run()
    return replay


@settings(max_examples=120, deadline=None)
@given(traces(), st.sampled_from((0, 2 * SECOND)), st.sampled_from((None, 9 * SECOND)))
def test_letting_go_of_pods_changes_no_decision_count_or_table(
    trace: tuple[list[NodeSpec], list[TracePod]], heartbeat: int, until: int | None
) -> None:
    nodes, pods = trace
    kept = _replay(nodes, pods, release=False, heartbeat=heartbeat, until=until)
    let_go = _replay(nodes, pods, release=True, heartbeat=heartbeat, until=until)
    assert let_go.end == kept.end
    assert let_go.summary() == kept.summary()
    every = list(let_go.controller.all_pods())
    assert pod_records(every) == pod_records(kept.controller.pods.values())
    assert [p.result() for p in every] == [p.result() for p in kept.controller.pods.values()]
    assert let_go.controller.timeline.counts == kept.controller.timeline.counts
    # What is still held: exactly the pods not yet gone, each in one stock; the rest are counted.
    ctl = let_go.controller
    held = set(ctl.pods.values())
    gone_unseen = {p for p in held if p.finished_at is not None}  # off the node's books at its next heartbeat
    not_yet = {p for p in held if p.finished_at is None and p not in ctl.pending and p not in ctl.bound}
    assert held == set(ctl.pending) | set(ctl.bound) | gone_unseen | not_yet
    assert not gone_unseen or heartbeat
    assert all(p.created_at >= let_go.env.now() for p in not_yet)  # made, its arrival not yet come
    assert ctl.departed is not None and ctl.departed.count + len(held) == ctl.pod_count() == len(kept.controller.pods)
    assert let_go.pods == () and let_go.pod_count == len(pods)


def test_a_long_replay_holds_only_the_pods_still_there() -> None:
    """300 pods, one a second, each running 5 s on a roomy node: at most 6 are ever there at once.

    Once the replay ends, no pod object is left anywhere but those still held (none: all ended), the
    trace's pods were let go of as they were created, and the waits and counts cover all 300.
    """
    pods = [TracePod(PodSpec(f"p{k:03d}", cpu=100, memory=1), (k + 1) * SECOND, 5 * SECOND) for k in range(300)]
    none = SchedulerSettings(plugin_results="none")  # a pod keeping its attempts' plugin results stays whole
    replay = BatchReplay([NodeSpec("n", cpu=1000, memory=GIB)], pods, default_profile(), none, release=True)
    del pods
    peak = 0

    def watch() -> None:
        nonlocal peak
        peak = max(peak, len(replay.controller.pods))
        if replay.env.now() < 400 * SECOND:
            replay.env.call_at(replay.env.now() + SECOND // 2, watch)

    replay.env.call_at(SECOND // 2, watch)
    summary = replay.run()
    gc.collect()
    assert peak <= 6
    assert sum(1 for o in gc.get_objects() if isinstance(o, Pod)) == len(replay.controller.pods) == 0
    assert (summary.pods, summary.bound, summary.mean_wait_s) == (300, 300, 0.0)
    assert summary.allocation_peak["cpu"] == pytest.approx(0.5)  # 5 pods of 100m at once on 1000m


def test_a_record_reads_as_its_pod() -> None:
    pod = Pod(7, PodSpec("web", cpu=100, memory=1, priority=3), 2 * SECOND, 5 * SECOND)
    pod.bound_at, pod.node, pod.tries = 3 * SECOND, "n1", 2
    pod.finished_at, pod.end = 8 * SECOND, PodEnd.COMPLETED
    record = record_of(pod)
    assert record.result() == pod.result()
    assert pod_records([record]) == pod_records([pod])
    departed = DepartedPods()
    departed.add(pod)
    assert list(departed.records()) == [record]
    waits, gone = departed.waits(9)
    assert gone.tolist() == [False] * 7 + [True, False] and waits[7] == SECOND
    assert (departed.count, departed.bound, departed.preempted, departed.last) == (1, 1, 0, 8 * SECOND)
    departed.close()


def test_the_pod_table_of_a_replay_that_lets_go_is_the_one_it_would_have_written() -> None:
    nodes = [NodeSpec("n", cpu=1000, memory=GIB)]
    pods = [
        TracePod(PodSpec(f"p{k}", cpu=400, memory=1, priority=k % 2), (1 + k % 3) * SECOND, (3 + k) * SECOND)
        for k in range(8)
    ]
    tables = []
    for release in (False, True):
        replay = BatchReplay(
            nodes, list(pods), default_profile(), SchedulerSettings(plugin_results="none"), release=release
        )
        replay.run()
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=POD_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(pod_records(replay.controller.all_pods()))
        tables.append(out.getvalue())
    assert tables[0] == tables[1]
    assert tables[0].count("\n") == 9 and ",preempted," in tables[0]


def test_a_pod_that_kept_its_attempts_is_held_whole() -> None:
    """Plugin results kept with their pod (no results file takes them) would be lost with it."""
    pods = [TracePod(PodSpec(f"p{k}", cpu=100, memory=1), (k + 1) * SECOND, SECOND) for k in range(3)]
    replay = BatchReplay([NodeSpec("n", cpu=1000, memory=GIB)], pods, default_profile(), release=True)
    replay.run()
    assert sorted(replay.controller.pods) == ["p0", "p1", "p2"]
    assert all(len(p.attempts) == 1 for p in replay.controller.pods.values())


def test_write_pod_csv_takes_records_and_pods_alike(tmp_path: Path) -> None:
    pod = Pod(0, PodSpec("a", cpu=1, memory=1), SECOND)
    path = tmp_path / "pods.csv"
    write_pod_csv([pod], path)
    first = path.read_text(encoding="utf-8")
    write_pod_csv([record_of(pod)], path)
    assert path.read_text(encoding="utf-8") == first


@settings(max_examples=60, deadline=None)
@given(traces(), st.sampled_from((0, 2 * SECOND)))
def test_a_replay_taking_its_pods_as_a_stream_decides_what_one_taking_the_list_does(
    trace: tuple[list[NodeSpec], list[TracePod]], heartbeat: int
) -> None:
    """A `PodStream` (a lazy trace's pods, here those of a list) is taken in its own order, never sorted or held:
    the replay counts and decides as one given the pods at once."""
    nodes, pods = trace
    listed = _replay(nodes, pods, release=True, heartbeat=heartbeat, until=None)
    stream = ListedPods(sorted_pods(pods))
    settings_ = SchedulerSettings(heartbeat_interval=heartbeat, heartbeat_delay=heartbeat // 4, plugin_results="none")
    streamed = BatchReplay(nodes, stream, default_profile(), settings_, seed=3, release=True)
    streamed.run()
    assert streamed.summary() == listed.summary() and streamed.end == listed.end
    assert pod_records(streamed.controller.all_pods()) == pod_records(listed.controller.all_pods())
    assert streamed.pod_count == len(pods) and streamed.pods == ()
