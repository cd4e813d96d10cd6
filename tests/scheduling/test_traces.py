"""Batch trace readers: the bundled SLS and openb samples read as the files say, and every bad input is named.

Expected values come from the files themselves (counted and summed here with the csv module) or
from the SLS sample's content worked by hand: 2 jobs, 3 + 2 tasks, all with start and end.
"""

from __future__ import annotations

import csv
import json
import os
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.core.time import MILLISECOND, SECOND, format_duration
from skenario.scheduling.affinity import NodeAffinity, Requirement, Term
from skenario.scheduling.objects import HOSTNAME_LABEL, NodeSpec, PodSpec
from skenario.scheduling.taints import Taint, TaintEffect
from skenario.scheduling.traces import (
    CsvPods,
    OpenbTrace,
    SlsTrace,
    TraceError,
    TracePod,
    read_pod_trace,
)
from skenario.scheduling.traces.sls import JsonObject, json_objects

TRACES = Path(__file__).resolve().parents[2] / "examples" / "traces"
SLS_TRACE = TRACES / "sls" / "inputsls.json"
SLS_NODES = TRACES / "sls" / "nodes-with-resources.json"
OPENB_PODS = TRACES / "openb_pod_list_default.csv"
OPENB_NODES = TRACES / "openb_node_list_all_node.csv"
MIB = 1024 * 1024
GIB = 1024 * MIB


def message(action: Callable[..., object], *args: Any, **kwargs: Any) -> str:
    """What the TraceError that `action` raises says."""
    with pytest.raises(TraceError) as caught:
        action(*args, **kwargs)
    return str(caught.value)


def assert_names(text: str, *parts: str) -> None:
    for part in parts:
        assert part in text, (part, text)


# --- SLS ---------------------------------------------------------------------------------------


def test_sls_sample_has_two_jobs_and_five_containers_with_their_times() -> None:
    pods = SlsTrace(SLS_TRACE).pods()
    assert len(pods) == 5
    assert sorted(p.spec.name for p in pods) == ["job_1/0", "job_1/1", "job_1/2", "job_2/0", "job_2/1"]
    first = next(p for p in pods if p.spec.name == "job_1/0")
    assert first.created_at == 6664 * MILLISECOND
    assert first.duration == (23707 - 6664) * MILLISECOND == 17043 * MILLISECOND
    assert first.job == "job_1"
    assert first.queue == "sls_queue_1"
    # The sample gives no container sizes: SLS's default container is 1024 MB and 1 vcore.
    assert first.spec.cpu == 1000
    assert first.spec.memory == 1024 * MIB
    assert first.spec.priority == -20  # container.priority 20, a lower YARN number is more important
    assert first.spec.labels == {"sls.job": "job_1", "sls.queue": "sls_queue_1", "sls.type": "map"}
    # job_2's task 1 starts (111788 ms) before its task 0 (111822 ms): sorted by arrival.
    assert [p.spec.name for p in pods] == ["job_1/0", "job_1/1", "job_1/2", "job_2/1", "job_2/0"]
    assert [p.created_at for p in pods] == sorted(p.created_at for p in pods)
    second_job = next(p for p in pods if p.spec.name == "job_2/1")
    assert second_job.duration == (131377 - 111788) * MILLISECOND
    assert SlsTrace(SLS_TRACE).nodes() == []


def test_sls_pods_of_one_job_and_task_type_share_one_mapping_of_their_labels() -> None:
    """The sample's jobs have maps only; every pod's labels are its own job's, queue's and type's, and
    a job's pods of one type hold one mapping (a month's half million pods would hold one each)."""
    pods = SlsTrace(SLS_TRACE).pods()
    for pod in pods:
        assert pod.spec.labels == {"sls.job": pod.job, "sls.queue": pod.queue, "sls.type": "map"}
    mappings = {(p.job, p.spec.labels["sls.type"]): set() for p in pods}
    for pod in pods:
        mappings[(pod.job, pod.spec.labels["sls.type"])].add(id(pod.spec.labels))
    assert all(len(ids) == 1 for ids in mappings.values()) and len(mappings) == 2


def test_sls_jobs_alone_are_the_jobs_a_reader_of_pods_makes() -> None:
    """YARN's schedulers read the jobs alone (`pods=False`): the same jobs, and no pod made."""
    both, jobs_only = SlsTrace(SLS_TRACE), SlsTrace(SLS_TRACE, pods=False)
    assert jobs_only.jobs == both.jobs and len(both.pods()) == 5 and jobs_only.pods() == []
    assert [job.id for job in jobs_only.jobs] == ["job_1", "job_2"]


def test_sls_jobs_hold_each_repeated_value_once(tmp_path: Path) -> None:
    """A month's half million containers repeat a few queues, users, types and sizes: the jobs a YARN replay
    holds share one object for each value (JSON's reader makes a new one at every occurrence)."""
    task = {"container.duration.ms": 5, "container.memory-mb": 2048, "container.vcores": 300, "container.type": "map"}
    objects = [job([task, task], **{"job.id": f"j{k}", "job.user": "alice"}) for k in range(3)]
    trace = SlsTrace(write_jobs(tmp_path / "t.json", *objects), pods=False)
    tasks = [t for j in trace.jobs for t in j.tasks]
    assert len(tasks) == 6 and {(t.type, t.memory_mb, t.vcores) for t in tasks} == {("map", 2048, 300)}
    for values in ([t.type for t in tasks], [t.memory_mb for t in tasks], [t.vcores for t in tasks]):
        assert len({id(v) for v in values}) == 1
    for values in ([j.queue for j in trace.jobs], [j.user for j in trace.jobs]):
        assert len({id(v) for v in values}) == 1


def test_sls_node_file_sizes_defaults_racks_and_labels() -> None:
    nodes = {n.name: n for n in SlsTrace(SLS_TRACE, SLS_NODES).nodes()}
    assert list(nodes) == ["node1", "node2", "node3", "node4"]
    assert (nodes["node1"].memory, nodes["node1"].cpu) == (2048 * MIB, 6000)
    assert (nodes["node2"].memory, nodes["node2"].cpu) == (10240 * MIB, 10000)  # NodeManager defaults
    assert (nodes["node4"].memory, nodes["node4"].cpu) == (6144 * MIB, 12000)
    assert nodes["node2"].labels == {"sls.rack": "rack1", HOSTNAME_LABEL: "node2"}
    assert nodes["node3"].labels == {"sls.rack": "rack1", "label1": "true", "label2": "true", HOSTNAME_LABEL: "node3"}
    sized = SlsTrace(SLS_TRACE, SLS_NODES, node_memory_mb=4096, node_vcores=2).nodes()
    assert (sized[1].memory, sized[1].cpu) == (4096 * MIB, 2000)
    assert (sized[0].memory, sized[0].cpu) == (2048 * MIB, 6000)  # the file's own size wins


def write_jobs(path: Path, *objects: Any, indent: int | None = 2) -> Path:
    """Concatenated JSON objects, no array and no separators but newlines, as SLS writes them."""
    path.write_text("\n".join(json.dumps(o, indent=indent) for o in objects) + "\n")
    return path


def job(tasks: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    return {"job.start.ms": 1000, "job.queue.name": "q", "job.id": "j", **fields, "job.tasks": tasks}


def test_sls_counts_durations_priorities_and_sizes(tmp_path: Path) -> None:
    tasks = [
        {"count": 2, "container.duration.ms": 500, "container.priority": 10, "container.type": "reduce"},
        {"duration.ms": 700, "container.memory-mb": 2048, "container.vcores": 3, "container.start.ms": 1500},
        {"count": 0, "container.start.ms": 2000, "container.end.ms": 2100},  # count < 1 counts as 1, as SLS
    ]
    path = write_jobs(tmp_path / "t.json", job(tasks, **{"job.count": 2}))
    pods = {p.spec.name: p for p in SlsTrace(path, default_memory_mb=512, default_vcores=2).pods()}
    assert sorted(pods) == sorted(
        f"j_{copy}/{task}" for copy in (0, 1) for task in ("0-0", "0-1", "1", "2")
    )  # 2 job copies x (2 + 1 + 1) containers
    reduce = pods["j_1/0-1"]
    assert reduce.created_at == 1000 * MILLISECOND  # no container.start.ms: the job's start
    assert reduce.duration == 500 * MILLISECOND
    assert reduce.spec.priority == -10
    assert (reduce.spec.cpu, reduce.spec.memory) == (2000, 512 * MIB)  # the given default container
    assert reduce.spec.labels == {"sls.job": "j_1", "sls.queue": "q", "sls.type": "reduce"}
    assert reduce.job == "j_1"
    sized = pods["j_0/1"]
    assert (sized.created_at, sized.duration) == (1500 * MILLISECOND, 700 * MILLISECOND)  # legacy duration.ms
    assert (sized.spec.cpu, sized.spec.memory, sized.spec.priority) == (3000, 2048 * MIB, -20)
    assert pods["j_0/2"].duration == 100 * MILLISECOND


def test_sls_header_gives_nodes_and_missing_ids_are_generated(tmp_path: Path) -> None:
    task = {"container.duration.ms": 10}
    path = write_jobs(tmp_path / "t.json", {"num.nodes": 3, "num.racks": 1}, {"job.tasks": [task]}, job([task]))
    trace = SlsTrace(path, node_memory_mb=2048, node_vcores=4)
    assert [n.name for n in trace.nodes()] == ["node0", "node1", "node2"]
    assert all((n.memory, n.cpu) == (2048 * MIB, 4000) for n in trace.nodes())
    pods = trace.pods()
    assert [p.spec.name for p in pods] == ["job_0/0", "j/0"]  # job 0 arrives at 0 (no job.start.ms), j at 1000 ms
    assert pods[0].queue is None
    assert "sls.queue" not in pods[0].spec.labels
    # With a node file, the header's count is ignored.
    assert len(SlsTrace(path, SLS_NODES).nodes()) == 4


_TASKS = st.lists(
    st.fixed_dictionaries(
        {"container.duration.ms": st.integers(1, 10_000)},
        optional={
            "count": st.integers(0, 3),
            "container.start.ms": st.integers(0, 5_000),
            "container.memory-mb": st.sampled_from([512, 1024, 2048]),
            "container.type": st.sampled_from(["map", "reduce"]),
        },
    ),
    min_size=1,
    max_size=4,
)
_JOBS = st.lists(
    st.fixed_dictionaries(
        {"job.tasks": _TASKS},
        optional={
            "job.start.ms": st.integers(0, 5_000),
            "job.count": st.integers(0, 3),
            "job.queue.name": st.just("q"),
        },
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=60, deadline=None)
@given(_JOBS, st.booleans(), st.booleans(), st.sampled_from([None, 2]))
def test_a_lazy_sls_reading_gives_the_pods_of_a_full_one_as_a_replay_takes_them(
    jobs: list[dict[str, Any]], header: bool, bom: bool, indent: int | None
) -> None:
    """`SlsTrace(lazy=True)` reads each job's object again when a replay reaches it: its pods, merged across jobs
    (tasks with starts of their own interleave them), are the full reading's, in the same order, with the same
    count and first and last arrival; the nodes too (a header's). With or without a byte order mark, one object
    a line or spread over several."""
    with tempfile.TemporaryDirectory() as folder:
        path = write_jobs(Path(folder) / "t.json", *([{"num.nodes": 2}] if header else []), *jobs, indent=indent)
        if bom:
            path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
        full, lazy = SlsTrace(path), SlsTrace(path, lazy=True)
        stream = lazy.pod_stream()
        pods = list(stream)
        assert pods == full.pods() == lazy.pods()
        assert (stream.count, stream.first_created, stream.last_created) == (
            len(pods),
            pods[0].created_at,
            pods[-1].created_at,
        )
        assert lazy.nodes() == full.nodes()
        assert lazy.jobs == []  # its jobs' runs are for YARN's schedulers, which read the jobs alone


@settings(max_examples=60, deadline=None)
@given(_JOBS, st.booleans(), st.sampled_from([None, 2]))
def test_a_lazy_sls_reading_gives_the_jobs_of_a_full_one_as_a_yarn_replay_submits_them(
    jobs: list[dict[str, Any]], header: bool, indent: int | None
) -> None:
    """Read for YARN (`pods=False`), the lazy reading's jobs are the full reading's in `job_order` (submission, then
    id: a job's copies and jobs submitted together are put in order), with their count and last submission."""
    with tempfile.TemporaryDirectory() as folder:
        path = write_jobs(Path(folder) / "t.json", *([{"num.nodes": 2}] if header else []), *jobs, indent=indent)
        full, lazy = SlsTrace(path, pods=False), SlsTrace(path, pods=False, lazy=True)
        stream = lazy.job_stream()
        read = list(stream)
        assert read == sorted(full.jobs, key=lambda j: (j.submitted_at, j.id)) == list(full.job_stream())
        assert (stream.count, stream.last_submitted) == (len(read), max(j.submitted_at for j in read))
        assert lazy.jobs == [] and lazy.pods() == [] and lazy.nodes() == full.nodes()


def test_a_lazy_sls_reading_says_what_a_full_one_says_about_bad_input(tmp_path: Path) -> None:
    """A problem, a repeated name or no jobs: the lazy reading raises the full reading's error (the first in the
    file)."""
    task = {"container.duration.ms": 1}
    cases = [
        (job([task]), job([task])),  # two containers named j/0
        (job([task]), job([{"container.duration.ms": 0}], **{"job.id": "k"})),
        (job([task]), {"num.nodes": 2}),
        ({"num.nodes": 2},),
    ]
    for objects in cases:
        path = write_jobs(tmp_path / "bad.json", *objects)
        assert message(SlsTrace, path, lazy=True) == message(SlsTrace, path)


def test_a_lazy_sls_reading_of_a_file_that_is_not_ascii_reads_it_in_full(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(job([{"container.duration.ms": 5}], **{"job.id": "jöb"}), ensure_ascii=False))
    lazy = SlsTrace(path, lazy=True)
    assert [p.spec.name for p in lazy.pod_stream()] == ["jöb/0"]
    assert [j.id for j in lazy.jobs] == ["jöb"]  # read in full: its jobs too


def test_a_lazy_sls_reading_of_a_pipe_reads_it_in_full(tmp_path: Path) -> None:
    """A pipe cannot be read a second time: read lazily, it is read in full, once."""
    text = json.dumps(job([{"container.duration.ms": 5}]))
    fifo = tmp_path / "trace.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=fifo.write_text, args=(text,))
    writer.start()
    trace = SlsTrace(fifo, lazy=True)
    writer.join()
    assert [p.spec.name for p in trace.pod_stream()] == ["j/0"] and [j.id for j in trace.jobs] == ["j"]


def test_a_trace_changed_under_a_lazy_replay_is_named(tmp_path: Path) -> None:
    """The second job's object is read when the replay reaches it: changed by then, the replay says so."""
    task = {"container.duration.ms": 5}
    path = write_jobs(
        tmp_path / "t.json", job([task], **{"job.id": "a"}), job([task], **{"job.id": "b", "job.start.ms": 9000})
    )
    pods = iter(SlsTrace(path, lazy=True).pod_stream())
    assert next(pods).spec.name == "a/0"
    path.write_text(path.read_text().replace('"job.id": "b"', '"job.id": b  '))  # same length, no longer JSON
    assert_names(message(lambda: next(pods)), "t.json", "changed while it was replayed", "job 1")


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**12) | st.text('ab \n\\"', max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text("xy", max_size=2), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(_JSON, st.sampled_from([" ", "\n", "\n\n  ", "\t"]), st.sampled_from([None, 1])), max_size=6),
    st.sampled_from(["", '{"a": [1,', "]", "nul"]),
    st.booleans(),
    st.integers(1, 9),
)
def test_a_json_stream_read_through_a_small_window_reads_as_one_read_whole(
    values: list[tuple[Any, str, int | None]], tail: str, bom: bool, chunk: int
) -> None:
    """`json_objects` parses from a window of the file that moves on: read a few bytes at a time, a stream of
    values (numbers split across reads among them) gives the same values, lines and byte spans as read at once,
    and a stream that goes wrong says the same line, column and character."""
    text = "".join(json.dumps(value, indent=indent) + gap for value, gap, indent in values) + tail
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.json"
        path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())

        def read(size: int) -> list[JsonObject] | str:
            try:
                return list(json_objects(path, chunk=size))
            except TraceError as exc:
                return str(exc)

        whole, windowed = read(10**6), read(chunk)
        assert windowed == whole
        if isinstance(whole, list):
            data = path.read_bytes()
            assert [json.loads(data[o.span[0] : o.span[1]]) for o in whole if o.span] == [o.value for o in whole]


def sls_error(tmp_path: Path, *objects: Any) -> str:
    return message(SlsTrace, write_jobs(tmp_path / "bad.json", *objects))


@pytest.mark.parametrize(
    ("task", "field", "value"),
    [
        ({"container.start.ms": 5}, "container.end.ms", ""),  # no end, no duration
        ({}, "container.duration.ms", ""),  # nothing at all
        ({"container.end.ms": 5}, "container.start.ms", ""),  # an end without a start
        ({"container.duration.ms": -5}, "container.duration.ms", "-5"),
        ({"duration.ms": 0}, "duration.ms", "0"),
        ({"container.duration.ms": "soon"}, "container.duration.ms", '"soon"'),
        ({"container.duration.ms": 1.5}, "container.duration.ms", "1.5"),
        ({"container.start.ms": 9, "container.end.ms": 4}, "container.end.ms", "4"),
        ({"container.start.ms": 9, "container.end.ms": 9}, "container.end.ms", "9"),
        ({"container.start.ms": -1, "container.end.ms": 4}, "container.start.ms", "-1"),
        ({"count": 2.5, "container.duration.ms": 1}, "count", "2.5"),
        ({"count": "two", "container.duration.ms": 1}, "count", '"two"'),
        ({"container.memory-mb": "lots", "container.duration.ms": 1}, "container.memory-mb", '"lots"'),
        ({"container.vcores": -2, "container.duration.ms": 1}, "container.vcores", "-2"),
        ({"container.priority": True, "container.duration.ms": 1}, "container.priority", "true"),
        ({"container.type": 3, "container.duration.ms": 1}, "container.type", "3"),
    ],
)
def test_sls_task_errors_name_file_job_task_field_and_value(
    tmp_path: Path, task: dict[str, Any], field: str, value: str
) -> None:
    good = {"container.duration.ms": 1}
    text = sls_error(tmp_path, job([good], **{"job.id": "a"}), job([good, good, task], **{"job.id": "b"}))
    assert_names(text, "bad.json", "job 1", "task 2", f"field '{field}'", value)


@pytest.mark.parametrize(
    ("fields", "field", "value"),
    [
        ({"job.tasks": []}, "job.tasks", "[]"),
        ({"job.tasks": {"count": 1}}, "job.tasks", '{"count": 1}'),
        ({"job.id": 7}, "job.id", "7"),
        ({"job.id": ""}, "job.id", '""'),
        ({"job.start.ms": "noon"}, "job.start.ms", '"noon"'),
        ({"job.start.ms": -3}, "job.start.ms", "-3"),
        ({"job.count": [2]}, "job.count", "[2]"),
        ({"job.queue.name": None}, "job.queue.name", "null"),
    ],
)
def test_sls_job_errors_name_file_job_field_and_value(
    tmp_path: Path, fields: dict[str, Any], field: str, value: str
) -> None:
    good = job([{"container.duration.ms": 1}], **{"job.id": "a"})
    text = sls_error(tmp_path, good, {**job([{"container.duration.ms": 1}]), **fields})
    assert_names(text, "bad.json", "job 1", f"field '{field}'", value)


def test_sls_stream_errors(tmp_path: Path) -> None:
    task = {"container.duration.ms": 1}
    # Not valid JSON: the message gives the line and column of the fault.
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(job([task])) + '\n{"job.id": "x",\n "job.tasks": [}\n')
    assert_names(message(SlsTrace, path), "broken.json:3", "line 3, column 16", "not valid JSON")
    # A job that is not an object, on line 2.
    path.write_text(json.dumps(job([task])) + "\n[1, 2]\n")
    assert_names(message(SlsTrace, path), "broken.json:2", "job 1", "[1, 2]", "not a JSON object")
    # A task that is not an object.
    assert_names(sls_error(tmp_path, job([task, "map"])), "bad.json", "job 0", "task 1", '"map"')
    # A header anywhere but first is a job without tasks.
    text = sls_error(tmp_path, job([task]), {"num.nodes": 2})
    assert_names(text, "job 1", "field 'job.tasks'", "header may only come first")
    # No jobs at all, or only a header.
    assert_names(sls_error(tmp_path), "bad.json", "no jobs")
    assert_names(sls_error(tmp_path, {"num.nodes": 2, "num.racks": 1}), "bad.json", "no jobs", "only a header")
    # Two containers with one name.
    text = sls_error(tmp_path, job([task]), job([task]))
    assert_names(text, "bad.json", "job 1", "task 0", "'j/0'", "already used by job 0")
    assert_names(message(SlsTrace, tmp_path / "missing.json"), "missing.json", "cannot open")


@pytest.mark.parametrize(
    ("node", "field", "value"),
    [
        ({"node": "n", "memory-mb": "big"}, "memory-mb", '"big"'),
        ({"node": "n", "vcores": -1}, "vcores", "-1"),
        ({"node": "n", "labels": ["a"]}, "labels", '["a"]'),
        ({"node": "n", "labels": "a, (exclusive=true)"}, "labels", "(exclusive=true)"),
        ({"node": 5}, "node", "5"),
        ({"memory-mb": 5}, "node", "no node name"),
    ],
)
def test_sls_node_file_errors(tmp_path: Path, node: dict[str, Any], field: str, value: str) -> None:
    nodes = write_jobs(
        tmp_path / "nodes.json",
        {"rack": "r0", "nodes": [{"node": "a"}]},
        {"rack": "r1", "nodes": [{"node": "b"}, node]},
        indent=None,  # one rack per line: rack 1 is on line 2
    )
    text = message(SlsTrace, SLS_TRACE, nodes)
    assert_names(text, "nodes.json:2", "rack 1 (r1), node 1", f"field '{field}'", value)


def test_sls_node_file_stream_of_racks_and_its_errors(tmp_path: Path) -> None:
    path = write_jobs(
        tmp_path / "nodes.json", {"rack": "r0", "nodes": [{"node": "a"}]}, {"rack": "r1", "nodes": [{"node": "b"}]}
    )
    assert [(n.name, n.labels["sls.rack"]) for n in SlsTrace(SLS_TRACE, path).nodes()] == [("a", "r0"), ("b", "r1")]
    path = write_jobs(
        tmp_path / "nodes.json", {"rack": "r0", "nodes": [{"node": "a"}]}, {"rack": "r1", "nodes": [{"node": "a"}]}
    )
    assert_names(
        message(SlsTrace, SLS_TRACE, path), "nodes.json", "rack 1 (r1), node 0", "'a'", "already used by rack 0"
    )
    path = write_jobs(tmp_path / "nodes.json", {"nodes": []})
    assert_names(message(SlsTrace, SLS_TRACE, path), "nodes.json", "rack 0", "field 'rack'")
    path = write_jobs(tmp_path / "nodes.json", {"rack": "r", "nodes": "a,b"})
    assert_names(message(SlsTrace, SLS_TRACE, path), "nodes.json", "rack 0", "field 'nodes'", '"a,b"')
    path = write_jobs(tmp_path / "nodes.json")
    assert_names(message(SlsTrace, SLS_TRACE, path), "nodes.json", "no nodes")


# --- openb -------------------------------------------------------------------------------------


def csv_rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def test_openb_pods_match_the_csv() -> None:
    rows = csv_rows(OPENB_PODS)
    trace = OpenbTrace(OPENB_PODS, OPENB_NODES)
    pods = trace.pods()
    assert len(rows) == len(pods) == 8152
    assert [(p.created_at, p.spec.name) for p in pods] == sorted((p.created_at, p.spec.name) for p in pods)
    assert sum(p.spec.cpu_request for p in pods) == sum(int(r["cpu_milli"]) for r in rows)
    assert sum(p.spec.memory_request for p in pods) == sum(int(r["memory_mib"]) for r in rows) * MIB
    by_name = {p.spec.name: p for p in pods}
    pending = [r for r in rows if not r["scheduled_time"]]
    assert len(pending) == sum(r["pod_phase"] == "Pending" for r in rows) == 897
    for row in rows:
        pod = by_name[row["name"]]
        assert pod.created_at == int(row["creation_time"]) * SECOND
        placed = row["scheduled_time"] or row["creation_time"]
        assert pod.duration == (int(row["deletion_time"]) - int(placed)) * SECOND
        gpus = int(row["num_gpu"]) * int(row["gpu_milli"])
        assert pod.spec.extended == ({"alibaba.com/gpu-milli": gpus} if int(row["num_gpu"]) else {})
        assert pod.spec.labels == {"alibaba.com/qos": row["qos"]}
        assert pod.spec.affinity == NodeAffinity()  # the default list constrains no GPU model


def test_openb_nodes_match_the_csv() -> None:
    rows = csv_rows(OPENB_NODES)
    nodes = OpenbTrace(OPENB_PODS, OPENB_NODES).nodes()
    assert len(rows) == len(nodes) == 1523
    assert [n.name for n in nodes] == [r["sn"] for r in rows]
    assert sum(n.cpu for n in nodes) == sum(int(r["cpu_milli"]) for r in rows)
    assert sum(n.extended.get("alibaba.com/gpu-milli", 0) for n in nodes) == 1000 * sum(int(r["gpu"]) for r in rows)
    cpu_only = [n for n in nodes if not n.extended]
    assert len(cpu_only) == sum(r["gpu"] == "0" for r in rows)
    assert all("alibaba.com/gpu-model" not in n.labels for n in cpu_only)
    first_gpu = next(r for r in rows if r["model"])
    node = next(n for n in nodes if n.name == first_gpu["sn"])
    assert node.labels["alibaba.com/gpu-model"] == first_gpu["model"]
    assert node.memory == int(first_gpu["memory_mib"]) * MIB
    assert OpenbTrace(OPENB_PODS).nodes() == []


POD_HEADER = (
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time"
)


def write_openb(path: Path, *rows: str, header: str = POD_HEADER) -> Path:
    path.write_text("\n".join([header, *rows]) + "\n")
    return path


def test_openb_gpu_models_become_required_affinity(tmp_path: Path) -> None:
    path = write_openb(
        tmp_path / "pods.csv",
        "p0,4000,8192,2,1000,V100M16|V100M32,LS,Running,10,50,12",
        "p1,1000,1024,0,0,,BE,Running,5,9,",
    )
    p1, p0 = OpenbTrace(path).pods()
    required = (Term(match_expressions=(Requirement("alibaba.com/gpu-model", "In", ("V100M16", "V100M32")),)),)
    assert p0.spec.affinity == NodeAffinity(required=required)
    assert p0.spec.extended == {"alibaba.com/gpu-milli": 2000}
    assert (p0.created_at, p0.duration) == (10 * SECOND, 38 * SECOND)  # deletion - scheduled
    assert (p1.created_at, p1.duration) == (5 * SECOND, 4 * SECOND)  # never scheduled: deletion - creation
    assert p0.spec.affinity.allows({"alibaba.com/gpu-model": "V100M32"}, "n")
    assert not p0.spec.affinity.allows({"alibaba.com/gpu-model": "T4"}, "n")


@pytest.mark.parametrize(
    ("row", "line", "field", "value"),
    [
        ("p1,-100,1024,0,0,,BE,Running,5,9,", 3, "cpu_milli", "-100"),
        ("p1,1.5,1024,0,0,,BE,Running,5,9,", 3, "cpu_milli", "1.5"),
        ("p1,100,lots,0,0,,BE,Running,5,9,", 3, "memory_mib", "lots"),
        ("p1,100,1024,1,1500,,BE,Running,5,9,", 3, "gpu_milli", "1500"),
        ("p1,100,1024,0,0,,BE,Running,5,x,", 3, "deletion_time", "x"),
        ("p1,100,1024,0,0,,BE,Running,9,5,", 3, "deletion_time", "5"),  # deleted before created
        ("p1,100,1024,0,0,,BE,Running,5,9,12", 3, "deletion_time", "9"),  # deleted before scheduled
        ("p1,100,1024,0,0,,BE,Running,5,9,3", 3, "scheduled_time", "3"),  # scheduled before created
        ("p1,100,1024,0,0,,BE,Running,,9,", 3, "creation_time", "''"),
        ("p1,100,1024,1,500,A||B,BE,Running,5,9,", 3, "gpu_spec", "A||B"),
        ("p0,100,1024,0,0,,BE,Running,5,9,", 3, "name", "p0"),  # a repeated name
        (",100,1024,0,0,,BE,Running,5,9,", 3, "name", "''"),
        ("p1,100,1024,0,0,,BE,Running,5,9", 3, "fields", "10"),
    ],
)
def test_openb_pod_errors_name_file_line_column_and_value(
    tmp_path: Path, row: str, line: int, field: str, value: str
) -> None:
    path = write_openb(tmp_path / "pods.csv", "p0,100,1024,0,0,,BE,Running,5,9,6", row)
    text = message(OpenbTrace, path)
    location = f"pods.csv:{line}" if field == "fields" else f"pods.csv:{line}, field '{field}'"
    assert_names(text, location, value)


def test_openb_file_errors(tmp_path: Path) -> None:
    header = POD_HEADER.replace(",qos", "")
    text = message(OpenbTrace, write_openb(tmp_path / "pods.csv", "p0,1,1,0,0,,Running,5,9,6", header=header))
    assert_names(text, "pods.csv:1", "field 'qos'", "no column 'qos'")
    (tmp_path / "empty.csv").write_text("")
    assert_names(message(OpenbTrace, tmp_path / "empty.csv"), "empty.csv", "empty trace file")
    assert_names(message(OpenbTrace, write_openb(tmp_path / "head.csv")), "head.csv", "no data rows")
    good = write_openb(tmp_path / "good.csv", "p0,1,1,0,0,,LS,Running,5,9,6")
    nodes = tmp_path / "nodes.csv"
    nodes.write_text("sn,cpu_milli,memory_mib,gpu,model\nn0,1000,1024,0,\nn1,1000,1024,two,T4\n")
    assert_names(message(OpenbTrace, good, nodes), "nodes.csv:3", "field 'gpu'", "'two'")
    nodes.write_text("sn,cpu_milli,memory_mib,gpu,model\nn0,1000,1024,0,\nn0,1000,1024,1,T4\n")
    assert_names(message(OpenbTrace, good, nodes), "nodes.csv:3", "field 'sn'", "'n0'", "already used by line 2")
    nodes.write_text("sn,cpu_milli,memory_mib,gpu\nn0,1000,1024,0\n")
    assert_names(message(OpenbTrace, good, nodes), "nodes.csv:1", "field 'model'", "no column 'model'")


# --- skenario's CSV of pods --------------------------------------------------------------------


def test_csv_pods_and_nodes(tmp_path: Path) -> None:
    pods = tmp_path / "pods.csv"
    pods.write_text(
        "name,created,cpu,memory,duration,priority,gpu,labels\n"
        "late,1.5h,2,2Gi,,7,1,app=web;tier=front\n"
        "early,90,500m,512Mi,250ms,-3,,\n"
        "tie,90s,,1G,1m30s,,0,app=batch\n"
    )
    nodes = tmp_path / "nodes.csv"
    nodes.write_text(
        "name,cpu,memory,pods,gpu,labels,taints\n"
        "n0,4,16Gi,,,zone=a,\n"
        'n1,8000m,1e9,20,2,,"gpu=true:NoSchedule;spot:PreferNoSchedule"\n'
    )
    trace = CsvPods(pods, nodes)
    assert trace.pods() == [
        TracePod(
            PodSpec("early", cpu=500, memory=512 * MIB, priority=-3, movable=False), 90 * SECOND, 250 * MILLISECOND
        ),
        TracePod(PodSpec("tie", memory=10**9, labels={"app": "batch"}, movable=False), 90 * SECOND, 90 * SECOND),
        TracePod(
            PodSpec(
                "late",
                cpu=2000,
                memory=2 * GIB,
                priority=7,
                extended={"nvidia.com/gpu": 1},
                labels={"app": "web", "tier": "front"},
                movable=False,  # a trace's pods are bare pods
            ),
            5400 * SECOND,
            None,
        ),
    ]
    assert trace.nodes() == [
        NodeSpec("n0", cpu=4000, memory=16 * GIB, labels={"zone": "a"}),
        NodeSpec(
            "n1",
            cpu=8000,
            memory=10**9,
            pods=20,
            extended={"nvidia.com/gpu": 2},
            taints=(Taint("gpu", TaintEffect.NO_SCHEDULE, "true"), Taint("spot", TaintEffect.PREFER_NO_SCHEDULE)),
        ),
    ]


@pytest.mark.parametrize(
    ("row", "field", "value"),
    [
        ("b,10,1.2345,1Gi,,,,", "cpu", "1.2345"),  # finer than a millicore
        ("b,10,two,1Gi,,,,", "cpu", "two"),
        ("b,10,1,512m,,,,", "memory", "512m"),  # millibytes: a classic mistake
        ("b,10,1,0.5,,,,", "memory", "0.5"),
        ("b,-5s,1,1Gi,,,,", "created", "-5s"),
        ("b,soon,1,1Gi,,,,", "created", "soon"),
        ("b,,1,1Gi,,,,", "created", "''"),
        ("b,10,1,1Gi,-1,,,", "duration", "-1"),
        ("b,10,1,1Gi,5 parsecs,,,", "duration", "5 parsecs"),
        ("b,10,1,1Gi,,high,,", "priority", "high"),
        ("b,10,1,1Gi,,,-1,", "gpu", "-1"),
        ("b,10,1,1Gi,,,,app", "labels", "app"),
        ("b,10,1,1Gi,,,,a=1;a=2", "labels", "a=1;a=2"),
        ("a,10,1,1Gi,,,,", "name", "a"),  # a repeated name
    ],
)
def test_csv_pod_errors_name_file_line_column_and_value(tmp_path: Path, row: str, field: str, value: str) -> None:
    path = tmp_path / "pods.csv"
    path.write_text(f"name,created,cpu,memory,duration,priority,gpu,labels\na,1,1,1Gi,,,,\n{row}\n")
    assert_names(message(CsvPods, path), f"pods.csv:3, field '{field}'", value)


@pytest.mark.parametrize(
    ("text", "location", "says"),
    [
        ("name,created,cpu\na,1,1\n", "pods.csv:1, field 'memory'", "no column 'memory'"),
        ("name,created,cpu,memory,durration\na,1,1,1,\n", "pods.csv:1, field 'durration'", "unknown column"),
        ("name,created,cpu,memory,cpu\na,1,1,1,1\n", "pods.csv:1, field 'cpu'", "twice"),
        ("name,created,cpu,memory\n", "pods.csv:1", "no data rows"),
        ("", "pods.csv:1", "empty trace file"),
        ("name,created,cpu,memory\na,1,1\n", "pods.csv:2", "3 fields"),
    ],
)
def test_csv_pod_file_errors(tmp_path: Path, text: str, location: str, says: str) -> None:
    path = tmp_path / "pods.csv"
    path.write_text(text)
    assert_names(message(CsvPods, path), location, says)


@pytest.mark.parametrize(
    ("row", "field", "value"),
    [
        ("n1,1,1Gi,,,,gpu=true:NoPlease", "taints", "NoPlease"),
        ("n1,1,1Gi,,,,gpu=true", "taints", "gpu=true"),
        ("n1,1,1Gi,0,,,", "pods", "0"),
        ("n1,,1Gi,,,,", "cpu", "''"),
        ("n1,1,,,,,", "memory", "''"),
        ("n0,1,1Gi,,,,", "name", "n0"),
    ],
)
def test_csv_node_errors(tmp_path: Path, row: str, field: str, value: str) -> None:
    pods = tmp_path / "pods.csv"
    pods.write_text("name,created,cpu,memory\na,1,1,1Gi\n")
    nodes = tmp_path / "nodes.csv"
    nodes.write_text(f"name,cpu,memory,pods,gpu,labels,taints\nn0,1,1Gi,,,,\n{row}\n")
    assert_names(message(CsvPods, pods, nodes), f"nodes.csv:3, field '{field}'", value)


label_keys = st.from_regex(r"[a-z]([a-z0-9.-]{0,6}/)?[a-z0-9]{1,6}", fullmatch=True)
label_values = st.from_regex(r"[A-Za-z0-9._-]{0,8}", fullmatch=True)
pod_rows = st.fixed_dictionaries(
    {
        "name": st.from_regex(r"[a-z0-9][a-z0-9.-]{0,12}", fullmatch=True),
        "created": st.integers(0, 10**15),
        "duration": st.none() | st.integers(0, 10**14),
        "cpu": st.none() | st.integers(0, 256_000),
        "memory": st.none() | st.integers(0, 2**40) | st.integers(0, 4096).map(lambda mib: mib * MIB),
        "priority": st.integers(-(10**9), 10**9),
        "gpu": st.integers(0, 8),
        "labels": st.dictionaries(label_keys, label_values, max_size=3),
        "style": st.integers(0, 1),  # which of two spellings the row uses
    }
)


def seconds_text(ns: int, style: int) -> str:
    """Either a Go-style duration or plain decimal seconds, both exact."""
    return format_duration(ns) if style else f"{ns // SECOND}.{ns % SECOND:09d}"


def cpu_text(millicores: int | None, style: int) -> str:
    if millicores is None:
        return ""
    return f"{millicores}m" if style else f"{millicores // 1000}.{millicores % 1000:03d}"


def memory_text(size: int | None, style: int) -> str:
    if size is None:
        return ""
    if style and size % MIB == 0:
        return f"{size // MIB}Mi"
    if style and size % 1000 == 0:
        return f"{size // 1000}k"
    return str(size)


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(pod_rows, max_size=25, unique_by=lambda row: row["name"]))
def test_csv_pods_round_trip_and_come_back_sorted(tmp_path_factory: pytest.TempPathFactory, rows: list[Any]) -> None:
    path = tmp_path_factory.mktemp("roundtrip") / "pods.csv"
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["name", "created", "cpu", "memory", "duration", "priority", "gpu", "labels"])
        if not rows:
            writer.writerow(["only", "0", "1", "1", "", "", "", ""])
        for row in rows:
            style = row["style"]
            writer.writerow(
                [
                    row["name"],
                    seconds_text(row["created"], style),
                    cpu_text(row["cpu"], style),
                    memory_text(row["memory"], style),
                    "" if row["duration"] is None else seconds_text(row["duration"], 1 - style),
                    str(row["priority"]),
                    str(row["gpu"]) if row["gpu"] or style else "",
                    ";".join(f"{k}={v}" for k, v in row["labels"].items()),
                ]
            )
    expected = [
        TracePod(
            PodSpec(
                row["name"],
                cpu=row["cpu"],
                memory=row["memory"],
                priority=row["priority"],
                extended={"nvidia.com/gpu": row["gpu"]} if row["gpu"] else {},
                labels=row["labels"],
                movable=False,
            ),
            row["created"],
            row["duration"],
        )
        for row in rows
    ] or [TracePod(PodSpec("only", cpu=1000, memory=1, movable=False), 0, None)]
    pods = CsvPods(path).pods()
    assert sorted(pods, key=lambda p: p.spec.name) == sorted(expected, key=lambda p: p.spec.name)
    keys = [(p.created_at, p.spec.name) for p in pods]
    assert keys == sorted(keys)


# --- dispatch ----------------------------------------------------------------------------------


def test_read_pod_trace_dispatches_on_kind(tmp_path: Path) -> None:
    sls = read_pod_trace("sls", SLS_TRACE, SLS_NODES, node_vcores=4)
    assert isinstance(sls, SlsTrace)
    assert sls.path == SLS_TRACE
    assert sls.nodes()[1].cpu == 4000
    assert isinstance(read_pod_trace("openb", OPENB_PODS), OpenbTrace)
    pods = tmp_path / "pods.csv"
    pods.write_text("name,created,cpu,memory\na,1,1,1Gi\n")
    assert isinstance(read_pod_trace("csv", str(pods)), CsvPods)
    assert_names(message(read_pod_trace, "swf", pods), "pods.csv", "field 'kind'", "'swf'", "sls, synth, openb, csv")
    assert_names(message(read_pod_trace, "csv", pods, node_vcores=4), "field 'node_vcores'", "csv", "none")
    assert_names(message(read_pod_trace, "sls", SLS_TRACE, vcores=4), "field 'vcores'", "node_vcores")
    with pytest.raises(ValueError, match="node_vcores"):
        SlsTrace(SLS_TRACE, node_vcores=-1)


def test_each_call_returns_a_new_list() -> None:
    trace = SlsTrace(SLS_TRACE, SLS_NODES)
    trace.pods().clear()
    trace.nodes().clear()
    assert len(trace.pods()) == 5
    assert len(trace.nodes()) == 4
