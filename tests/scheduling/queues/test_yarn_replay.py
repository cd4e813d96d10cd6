"""SLS jobs through the Capacity Scheduler on the event clock: a hand-worked timeline and conservation."""

import json
import tempfile
from dataclasses import replace
from functools import partial
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.core.time import SECOND
from skenario.errors import SkenarioError
from skenario.scheduling.objects import NodeSpec
from skenario.scheduling.queues.capacity_config import CapacityConfig, QueueConfig
from skenario.scheduling.queues.fair_config import FairConfig, FairPreemption, Starvation, read_fair_config
from skenario.scheduling.queues.fair_preemption import starved_amount
from skenario.scheduling.queues.preemption import PreemptionSettings
from skenario.scheduling.queues.resources import ResourceCalculator
from skenario.scheduling.queues.yarn_replay import YarnReplay, YarnSummary, job_problem
from skenario.scheduling.traces.sls import SlsJob, SlsTask, SlsTrace

MIB = 1024 * 1024
GB_NODE = NodeSpec("n0", cpu=8000, memory=8 * 1024 * MIB)


def config(*queues: tuple[str, float]) -> CapacityConfig:
    children = tuple(QueueConfig(f"root.{name}", capacity=c, absolute_capacity=c / 100) for name, c in queues)
    return CapacityConfig(QueueConfig("root", children=children), ResourceCalculator())


def job(id: str, at_s: float, tasks: list[tuple[str, float]], queue: str = "a", user: str = "u") -> SlsJob:
    made = tuple(
        SlsTask(f"{id}/{k}", kind, 20 if kind == "map" else 10, 1024, 1, int(d * SECOND))
        for k, (kind, d) in enumerate(tasks)
    )
    return SlsJob(id, user, queue, int(at_s * SECOND), "mapreduce", made, 1)


def test_one_map_job_on_one_node_takes_its_duration_plus_four_heartbeats() -> None:
    """Worked by hand with the node's phase p in [0, 1 s): the AM container at p; the AM's first beat at
    p+1 asks for the map; the node, idle since, beats at p+2 and allocates it; the AM launches it at p+3;
    it ends at p+13, is reported at p+14 and heard by the AM at p+15, when the job finishes."""
    replay = YarnReplay([job("j", 0, [("map", 10)])], [GB_NODE], config(("a", 100)))
    summary = replay.run()
    (row,) = replay.jobs_table()
    assert 0 <= row["wait_s"] < 1
    assert row["runtime_s"] == pytest.approx(15.0)
    assert summary.finished == 1 and summary.containers == 2  # the AM and the map


def test_reduces_wait_for_every_map() -> None:
    replay = YarnReplay([job("j", 0, [("map", 10), ("map", 20), ("reduce", 5)])], [GB_NODE], config(("a", 100)))
    replay.run()
    (row,) = replay.jobs_table()
    # One container per node beat: the maps at p+2 and p+3, launched at the AM's beats p+3 and p+4; the
    # 20 s map ends at p+24, is reported at p+25 and heard at p+26, when the reduce is asked; it is
    # allocated at p+27, launched at p+28, ends at p+33, is reported at p+34 and heard at p+35.
    assert row["runtime_s"] == pytest.approx(35.0)


def test_a_small_queue_waits_behind_its_capacity_while_the_big_one_runs() -> None:
    """Queue b has 10% of one 8 GB node (819 MB), at most 25% (2 GB): one job's AM and map fill it, and its
    AM limit, normalizeUp(819 MB x 0.1) = 1 GB, lets one AM run at a time: the second job waits."""
    b = QueueConfig("root.b", capacity=10, maximum_capacity=25, absolute_capacity=0.1, absolute_maximum_capacity=0.25)
    a = QueueConfig("root.a", capacity=90, absolute_capacity=0.9)
    cfg = CapacityConfig(QueueConfig("root", children=(a, b)), ResourceCalculator())
    jobs = [job("b1", 0, [("map", 30)], queue="b"), job("b2", 0, [("map", 30)], queue="b", user="v")]
    replay = YarnReplay(jobs, [GB_NODE], cfg)
    replay.run()
    rows = {r["job"]: r for r in replay.jobs_table()}
    assert rows["b1"]["wait_s"] < 1 and rows["b2"]["started_s"] >= rows["b1"]["finished_s"]
    assert replay.scheduler.leaves["root.b"].config.maximum_capacity == 25


def test_an_unknown_queue_names_the_job_and_the_queues(tmp_path: Path) -> None:
    with pytest.raises(SkenarioError, match="job j: no leaf queue 'zz'") as caught:
        YarnReplay([job("j", 0, [("map", 1)], queue="zz")], [GB_NODE], config(("a", 100)), trace_file="t.json")
    assert caught.value.field == "job.queue.name" and caught.value.file == "t.json"


def test_a_container_above_the_maximum_allocation_is_refused() -> None:
    big = SlsJob("j", "u", "a", 0, "mapreduce", (SlsTask("j/0", "map", 20, 9000, 1, SECOND),), 3)
    with pytest.raises(SkenarioError, match="above the maximum allocation") as caught:
        YarnReplay([big], [GB_NODE], config(("a", 100)))
    assert caught.value.line == 3


jobs_strategy = st.lists(
    st.tuples(
        st.integers(0, 60),  # submitted, s
        st.sampled_from(["a", "b"]),
        st.sampled_from(["u", "v", "w"]),
        st.lists(st.tuples(st.sampled_from(["map", "reduce"]), st.integers(1, 40)), min_size=1, max_size=5),
    ),
    min_size=1,
    max_size=8,
)


FAIR = """<allocations><queue name="a"><maxRunningApps>2</maxRunningApps></queue>
<queue name="b"><weight>2</weight><maxResources>6144 mb, 8 vcores</maxResources></queue></allocations>"""


@settings(max_examples=30, deadline=None)
@given(
    jobs_strategy,
    st.integers(1, 400),
    st.integers(0, 3),
    st.sampled_from(["capacity", "preempting", "fair", "fair-preempting"]),
)
def test_every_job_is_in_one_state_and_every_container_on_a_node(
    tmp_path_factory: pytest.TempPathFactory, specs: list, stop_s: int, seed: int, kind: str
) -> None:
    jobs = [job(f"j{k}", at, tasks, queue=q, user=u) for k, (at, q, u, tasks) in enumerate(specs)]
    nodes = [NodeSpec(f"n{i}", cpu=4000, memory=4 * 1024 * MIB) for i in range(2)]
    cfg: CapacityConfig | FairConfig = config(("a", 30), ("b", 70))
    if kind == "preempting":
        cfg = CapacityConfig(cfg.root, cfg.calculator, preemption=PreemptionSettings(max_wait_before_kill_ms=3000))
    elif kind.startswith("fair"):
        path = tmp_path_factory.mktemp("fair") / "fair-scheduler.xml"
        path.write_text(
            FAIR.replace(
                "<weight>2</weight>", "<weight>2</weight><fairSharePreemptionTimeout>1</fairSharePreemptionTimeout>"
            ),
            encoding="utf-8",
        )
        cfg = read_fair_config(path)
        if kind == "fair-preempting":
            cfg = replace(cfg, preemption=FairPreemption(utilization_threshold=0.1, wait_before_kill_ms=2000))
    replay = YarnReplay(jobs, nodes, cfg, seed=seed, until=stop_s * SECOND)
    replay.run(stop_s * SECOND)
    states = [r["state"] for r in replay.jobs_table()]
    assert len(states) == len(jobs) and set(states) <= {"pending", "running", "finished", "rejected"}
    sched = replay.scheduler
    on_nodes = sum(n.allocated.memory for n in replay.nodes)
    reserved = sum(n.reservation.resource.memory for n in replay.nodes if n.reservation is not None)
    counted = on_nodes + (reserved if not kind.startswith("fair") else 0)  # the Fair Scheduler keeps them apart
    assert sched.root.used.memory == counted == sum(q.used.memory for q in sched.leaves.values())
    assert all(0 <= n.allocated.memory <= n.capability.memory for n in replay.nodes)
    # Run to the end: every job finishes (none is too big for a node), and nothing is left allocated.
    whole = YarnReplay(jobs, nodes, cfg, seed=seed)
    summary = whole.run()
    assert summary.finished == len(jobs) and whole.scheduler.root.used.memory == 0


def test_the_same_seed_gives_the_same_jobs_table() -> None:
    jobs = [job(f"j{k}", k * 3, [("map", 7 + k), ("reduce", 3)], queue="ab"[k % 2]) for k in range(6)]
    nodes = [NodeSpec(f"n{i}", cpu=4000, memory=4 * 1024 * MIB) for i in range(3)]
    runs = [YarnReplay(jobs, nodes, config(("a", 50), ("b", 50)), seed=7) for _ in range(2)]
    tables = [(r.run(), r.jobs_table())[1] for r in runs]
    assert tables[0] == tables[1]


def preempting(enabled: bool) -> CapacityConfig:
    a = QueueConfig("root.a", capacity=50, absolute_capacity=0.5, user_limit_factor=2)  # its user may fill the node
    b = QueueConfig("root.b", capacity=50, absolute_capacity=0.5)
    settings = PreemptionSettings(max_ignored_over_capacity=0, natural_termination_factor=1.0) if enabled else None
    return CapacityConfig(QueueConfig("root", children=(a, b)), ResourceCalculator(), preemption=settings)


def test_preemption_gives_a_queue_its_guarantee_back_within_the_kill_wait() -> None:
    """Queue a fills the one 8 GB node with long maps; b's job arrives at 100 s. Without preemption it
    waits for a's maps to end (1,000 s); with it, a's newest maps are killed once selected for 15 s
    (the monitor runs every 3 s), b runs, and a's job still finishes, its lost maps run again."""
    jobs = [job("long", 0, [("map", 1000)] * 20, queue="a"), job("short", 100, [("map", 10)] * 2, queue="b", user="v")]
    off = YarnReplay(jobs, [GB_NODE], preempting(False))
    off.run()
    on = YarnReplay(jobs, [GB_NODE], preempting(True))
    on.run()
    off_rows = {row["job"]: row for row in off.jobs_table()}
    on_rows = {row["job"]: row for row in on.jobs_table()}
    assert off_rows["short"]["started_s"] > 1000 and sum(off.preempted.values()) == 0
    assert 100 + 15 <= on_rows["short"]["started_s"] < 100 + 15 + 3 + 2  # the kill wait, a monitor round, a beat
    assert on.preempted["root.a"] > 0 and on.preempted["root.b"] == 0
    assert on_rows["long"]["state"] == "finished" and on_rows["short"]["state"] == "finished"
    assert on.scheduler.root.used.memory == 0


def test_why_names_the_am_limit_and_the_queue_series_follow_the_allocation() -> None:
    """The small-queue case stopped at 20 s: b2's AM waits behind b's AM limit of 1 GB (b1's AM holds it)."""
    b = QueueConfig("root.b", capacity=10, maximum_capacity=25, absolute_capacity=0.1, absolute_maximum_capacity=0.25)
    a = QueueConfig("root.a", capacity=90, absolute_capacity=0.9)
    cfg = CapacityConfig(QueueConfig("root", children=(a, b)), ResourceCalculator())
    jobs = [job("b1", 0, [("map", 30)], queue="b"), job("b2", 0, [("map", 30)], queue="b", user="v")]
    replay = YarnReplay(jobs, [GB_NODE], cfg, until=20 * SECOND)
    replay.run(20 * SECOND)
    assert replay.why("b2") == (
        "pending: queue root.b's AMs use 1024 MB of its AM limit of 1024 MB "
        "(maximum-am-resource-percent 0.1), and this AM needs 1024 MB"
    )
    assert replay.why("b1") == "running: every container it asked for was given"
    rows = [r for r in replay.queue_rows() if r["queue"] == "root.b"]
    # b1's AM (1 GB) then its map (1 GB more): b's allocation in GB, as SLS reports a queue's memory.
    steps = [r["allocated.memory"] for r in rows]
    changes = [m for k, m in enumerate(steps) if k == 0 or m != steps[k - 1]]
    assert changes[:3] == [0.0, 1.0, 2.0]
    assert rows[-1]["pending.applications"] == 1
    with pytest.raises(KeyError):
        replay.why("nope")


def test_why_names_the_queues_maximum_capacity() -> None:
    b = QueueConfig("root.b", capacity=10, maximum_capacity=15, absolute_capacity=0.1, absolute_maximum_capacity=0.15)
    a = QueueConfig("root.a", capacity=90, absolute_capacity=0.9)
    cfg = CapacityConfig(QueueConfig("root", children=(a, b)), ResourceCalculator())
    replay = YarnReplay([job("b1", 0, [("map", 30)], queue="b")], [GB_NODE], cfg, until=20 * SECOND)
    replay.run(20 * SECOND)
    # 15% of 8 GB is 1,228 MB: the AM's 1 GB leaves no room for a 1 GB map.
    assert replay.why("b1") == (
        "waiting for a container of 1024 MB: queue root.b uses 1024 MB of its maximum 1228 MB (maximum-capacity 15%)"
    )


def fair_preempting(tmp_path: Path, enabled: bool) -> FairConfig:
    path = tmp_path / "fair-scheduler.xml"
    path.write_text(
        "<allocations><queue name='a'/><queue name='b'><fairSharePreemptionTimeout>5</fairSharePreemptionTimeout>"
        "</queue></allocations>",
        encoding="utf-8",
    )
    config = read_fair_config(path)
    return replace(config, preemption=FairPreemption() if enabled else None)


def test_fair_share_preemption_feeds_a_starved_queue(tmp_path: Path) -> None:
    """a fills the 8 GB node; b's job arrives at 100 s. b's fair share is 4 GB and it has less than half
    of it from its arrival, seen at the 100 s check (checks every 10 s); at 110 s that has held for 5 s,
    so a container of a's is selected, and killed once selected for 15 s (the 130 s check); b's AM starts
    at the node's next heartbeat. Without preemption b waits for a's maps to end (1,000 s)."""
    jobs = [job("long", 0, [("map", 1000)] * 20, queue="a"), job("short", 100, [("map", 10)] * 2, queue="b", user="v")]
    off = YarnReplay(jobs, [GB_NODE], fair_preempting(tmp_path, False))
    off.run()
    on = YarnReplay(jobs, [GB_NODE], fair_preempting(tmp_path, True))
    on.run()
    off_rows = {row["job"]: row for row in off.jobs_table()}
    on_rows = {row["job"]: row for row in on.jobs_table()}
    assert off_rows["short"]["started_s"] > 1000 and sum(off.preempted.values()) == 0
    assert 130 <= on_rows["short"]["started_s"] < 131
    assert on.preempted["root.a"] > 0 and on.preempted["root.b"] == 0
    assert on_rows["long"]["state"] == "finished" and on_rows["short"]["state"] == "finished"


def test_starvation_amounts() -> None:
    starvation = Starvation(fair_share_timeout_s=5, fair_share_threshold=0.5, min_share_timeout_s=10)
    s = SECOND
    # Below half its 4 GB fair share for 6 s: owed 2 GB less its use, at most what it asks.
    assert starved_amount(512, 4096, 0, 10_000, starvation, 0, None, 6 * s) == 2048 - 512
    assert starved_amount(512, 4096, 0, 1024, starvation, 0, None, 6 * s) == 1024
    assert starved_amount(512, 4096, 0, 10_000, starvation, 2 * s, None, 6 * s) == 0  # only 4 s so far
    # The minimum share counts after its own timeout, and the larger shortfall wins.
    assert starved_amount(0, 4096, 3000, 10_000, starvation, 0, 0, 10 * s) == 3000
    assert starved_amount(0, 4096, 3000, 10_000, Starvation(), 0, 0, 10**6 * s) == 0  # no timeouts: never


def test_a_summary_reads_back_as_it_was_written() -> None:
    replay = YarnReplay(
        [job("j1", 0, [("map", 5)]), job("j2", 1, [("map", 5)], queue="b")], [GB_NODE], config(("a", 50), ("b", 50))
    )
    summary = replay.run()
    assert YarnSummary.from_dict(summary.as_dict()) == summary


def sls_trace(path: Path, specs: list) -> Path:
    """`jobs_strategy`'s jobs as an SLS trace file, in the order given (not by submission)."""
    objects = [
        {
            "job.id": f"j{k}",
            "job.start.ms": at * 1000,
            "job.queue.name": queue,
            "job.user": user,
            "job.tasks": [
                {
                    "container.type": kind,
                    "container.priority": 20 if kind == "map" else 10,
                    "container.duration.ms": d * 1000,
                }
                for kind, d in tasks
            ],
        }
        for k, (at, queue, user, tasks) in enumerate(specs)
    ]
    path.write_text("\n".join(json.dumps(o) for o in objects), encoding="utf-8")
    return path


@settings(max_examples=25, deadline=None)
@given(jobs_strategy, st.sampled_from([None, 30]), st.integers(0, 3), st.booleans())
def test_jobs_read_as_they_are_submitted_replay_as_the_jobs_read_in_full(
    specs: list, stop_s: int | None, seed: int, preempt: bool
) -> None:
    """A lazy SLS reading's `JobStream` (each job read again when submitted, its run let go of once over) gives the
    summary, the jobs table and the queue rows of the jobs read in full, cut short by `until` or not."""
    nodes = [NodeSpec(f"n{i}", cpu=4000, memory=4 * 1024 * MIB) for i in range(2)]
    cfg = preempting(preempt)
    until = None if stop_s is None else stop_s * SECOND
    with tempfile.TemporaryDirectory() as folder:
        path = sls_trace(Path(folder) / "t.json", specs)
        full = YarnReplay(SlsTrace(path, pods=False).jobs, nodes, cfg, seed=seed, until=until)
        stream = SlsTrace(path, pods=False, lazy=True).job_stream()
        with mock.patch("skenario.scheduling.queues.steps.BLOCK_ROWS", 2):  # its queues' series mostly on disk
            lazy = YarnReplay(stream, nodes, cfg, seed=seed, until=until)
        assert lazy.run() == full.run()
        assert lazy.jobs_table() == full.jobs_table()
        assert list(lazy.queue_rows()) == list(full.queue_rows())
    grid = np.arange(0, lazy.end + SECOND, SECOND // 2, dtype=np.int64)
    sampled = lazy.sampled(grid)
    for queue, rows in full.queue_series().items():  # each figure: its last change at or before each instant
        at = np.searchsorted(rows[:, 0], grid, side="right") - 1
        memory = np.where(at >= 0, rows[np.maximum(at, 0), 2], 0) if len(rows) else np.zeros(len(grid))
        assert np.array_equal(sampled[f"queue.{queue}.allocated.memory"], memory / 1024)
    # Held: the runs of jobs submitted and not over, and the next job's (its submission scheduled).
    submitted = sum(1 for row in lazy.jobs_table() if row["why"] not in (None, "not submitted yet"))
    assert submitted <= lazy.jobs_under_way <= submitted + 1
    if until is None:
        assert lazy.jobs_under_way == 0  # every run let go of: only rows are left


def test_a_lazy_trace_checked_for_yarn_raises_the_first_problem_in_submission_order(tmp_path: Path) -> None:
    """Checked as it is read (in file order), the lazy reading raises the problem of the first job submitted, as a
    replay of the jobs read in full does; a problem of the trace itself comes first."""
    cfg = config(("a", 100))
    specs = [(5, "a", "u", [("map", 1)]), (1, "zz", "u", [("map", 1)]), (0, "yy", "u", [("map", 1)])]
    path = sls_trace(tmp_path / "t.json", specs)
    check = partial(job_problem, config=cfg, file=str(path))
    with pytest.raises(SkenarioError) as full:
        YarnReplay(SlsTrace(path, pods=False).jobs, [GB_NODE], cfg, trace_file=str(path))
    with pytest.raises(SkenarioError) as lazy:
        SlsTrace(path, pods=False, lazy=True, check=check)
    assert str(lazy.value) == str(full.value) and "job j2: no leaf queue 'yy'" in str(full.value)
    broken = path.read_text().replace('"container.duration.ms": 1000}]}', '"container.duration.ms": 0}]}', 1)
    path.write_text(broken)
    with pytest.raises(SkenarioError, match=r"container\.duration\.ms is 0"):
        SlsTrace(path, pods=False, lazy=True, check=check)


def test_a_trace_read_in_full_is_checked_for_yarn_too(tmp_path: Path) -> None:
    """A trace a lazy reading reads in full (it is not ASCII) is checked all the same."""
    path = tmp_path / "t.json"
    path.write_text(
        json.dumps({"job.id": "jöb", "job.queue.name": "zz", "job.tasks": [{"container.duration.ms": 5}]}),
        encoding="utf-8",
    )
    check = partial(job_problem, config=config(("a", 100)), file=str(path))
    with pytest.raises(SkenarioError, match="job jöb: no leaf queue 'zz'"):
        SlsTrace(path, pods=False, lazy=True, check=check)
