"""YARN SLS's SYNTH generator: its samples and job stream as TestSynthJobGeneration checks them, its documented
rules checked on generated samples, and its mistakes said with the file, the field and the value."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from skenario.cli import cli
from skenario.scheduling.traces import read_pod_trace
from skenario.scheduling.traces.synth import SynthTrace, Workload, _Reader, weighted
from skenario.workloads.tracefiles import TraceError

ROOT = Path(__file__).resolve().parents[2]
SYN_GENERIC = {  # hadoop-sls src/test/resources/syn_generic.json, restated
    "description": "tiny jobs workload",
    "num_nodes": 20,
    "nodes_per_rack": 4,
    "num_jobs": 10,
    "rand_seed": 2,
    "workloads": [
        {
            "workload_name": "tiny-test",
            "workload_weight": 0.5,
            "queue_name": "sls_queue_1",
            "job_classes": [
                {
                    "class_name": "class_1",
                    "user_name": "foobar",
                    "class_weight": 1.0,
                    "type": "mapreduce",
                    "deadline_factor": {"val": 10},
                    "duration": {"val": 60, "std": 5},
                    "reservation": {"val": 0.5},
                    "tasks": [
                        {"type": "map", "priority": 20, "count": {"val": 5, "std": 1}, "time": {"val": 10, "std": 2},
                         "max_memory": {"val": 1024}, "max_vcores": {"val": 1}},
                        {"type": "reduce", "priority": 10, "count": {"val": 5, "std": 1}, "time": {"val": 20, "std": 4},
                         "max_memory": {"val": 2048}, "max_vcores": {"val": 2}},
                    ],
                }
            ],
            "time_distribution": [{"time": 1, "weight": 100}, {"time": 60, "weight": 0}],
        }
    ],
}  # fmt: skip


def write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "synth.json"
    path.write_text(json.dumps(data))
    return path


def sample(value: object) -> float:
    return _Reader("t").sample(value, "s").draw(np.random.default_rng(0))


def test_samples_as_upstreams_test_sample() -> None:
    assert sample({"val": 5}) == 5
    assert 2 < sample({"val": 5, "std": 1}) < 8
    assert 2 < sample({"val": 5, "std": 1, "dist": "NORM"}) < 8
    assert sample({"discrete": [2, 4, 6, 8]}) in (2, 4, 6, 8)
    assert sample({"discrete": [2, 4, 6, 8], "weights": [0, 0, 0, 1]}) == 8
    for invalid in (
        {"val": 5, "discrete": [2, 4, 6, 8], "weights": [0, 0, 0, 1]},
        {"val": 5, "std": 1, "dist": "INVALID"},
    ):
        with pytest.raises(TraceError):
            sample(invalid)


def test_lognormal_samples_have_the_mean_and_deviation_given() -> None:
    # getLogNormalDist: sigma^2 = ln(1 + std^2/val^2), mu = ln(val) - sigma^2/2, so E = val and SD = std.
    s = _Reader("t").sample({"val": 60, "std": 15}, "s")
    draws = np.array([s.draw(np.random.default_rng(seed)) for seed in range(4000)])
    assert draws.mean() == pytest.approx(60, abs=5 * 15 / math.sqrt(4000))
    assert draws.std() == pytest.approx(15, rel=0.08)
    assert _Reader("t").sample({"val": 60, "std": 0}, "s").std == 10  # a std of 0 is val / 6


def test_weighted_picks_in_proportion() -> None:
    rng = np.random.default_rng(3)
    counts = np.bincount([weighted([1.0, 3.0, 0.0, 6.0], rng) for _ in range(20_000)], minlength=4)
    expected = np.array([0.1, 0.3, 0.0, 0.6]) * 20_000
    assert counts[2] == 0
    assert np.all(np.abs(counts - expected) <= 5 * np.sqrt(expected + 1))


def test_submission_times_as_upstreams_test_workload_generate_time() -> None:
    # Buckets at 0 (weight 1), 30 (0), 60 (2) and 90 (1): none in [30, 60); [60, 90) the most; 90 exactly.
    workload = Workload("w", 1.0, "q", (), ((0, 1.0), (30, 0.0), (60, 2.0), (90, 1.0)))
    rng = np.random.default_rng(0)
    times = [workload.submission(rng) for _ in range(1000)]
    buckets = [sum(1 for t in times if lo <= t < hi) for lo, hi in ((0, 30), (30, 60), (60, 90), (90, 91))]
    assert buckets[0] > 0 and buckets[1] == 0 and buckets[2] > buckets[0] and buckets[2] > buckets[3] > 0
    assert all(t == 90 for t in times if t >= 90)


def test_generated_jobs_as_upstreams_validate_job(tmp_path: Path) -> None:
    trace = SynthTrace(write(tmp_path, SYN_GENERIC))
    assert len(trace.synthesized) == 10
    for job in trace.synthesized:
        assert 1 <= job.submitted < 60 and job.duration > 0
        if job.deadline is not None:
            assert job.deadline > job.submitted + job.duration
        assert job.containers
        for kind, seconds, memory, vcores, priority in job.containers:
            assert kind in ("map", "reduce") and seconds > 0 and memory >= 1024 and vcores >= 1
            assert priority == (20 if kind == "map" else 10)
    submitted = [job.submitted for job in trace.synthesized]
    assert submitted == sorted(submitted)  # released in order of submission
    assert [job.name for job in trace.synthesized] == [f"class_1_{i:06d}" for i in range(10)]
    assert len(trace.nodes()) == 20 and {job.queue for job in trace.jobs} == {"sls_queue_1"}
    again = SynthTrace(write(tmp_path, SYN_GENERIC))
    assert again.synthesized == trace.synthesized  # the file's seed makes the same jobs


def test_the_legacy_job_class_is_converted_as_validate_job_def_does(tmp_path: Path) -> None:
    data = json.loads(json.dumps(SYN_GENERIC))
    data["workloads"][0]["job_classes"] = [
        {
            "class_name": "old",
            "class_weight": 1,
            "mtasks_avg": 3, "mtasks_stddev": 0.001, "rtasks_avg": 1, "rtasks_stddev": 0.001,
            "dur_avg": 60, "dur_stddev": 5, "mtime_avg": 10, "mtime_stddev": 2, "rtime_avg": 20, "rtime_stddev": 4,
            "map_max_memory_avg": 1024, "map_max_memory_stddev": 0.001,
            "reduce_max_memory_avg": 2048, "reduce_max_memory_stddev": 0.001,
            "map_max_vcores_avg": 1, "map_max_vcores_stddev": 0.001,
            "reduce_max_vcores_avg": 2, "reduce_max_vcores_stddev": 0.001,
            "deadline_factor_avg": 2, "deadline_factor_stddev": 0.001,
        }
    ]  # fmt: skip
    job = SynthTrace(write(tmp_path, data)).synthesized[0]
    assert [c[0] for c in job.containers] == ["map"] * 3 + ["reduce"]
    assert {(c[0], c[4], c[2], c[3]) for c in job.containers} == {("map", 20, 1024, 1), ("reduce", 10, 2048, 2)}


def test_class_weights_pick_classes_in_proportion(tmp_path: Path) -> None:
    data = json.loads(json.dumps(SYN_GENERIC))
    data["num_jobs"] = 3000
    first = data["workloads"][0]["job_classes"][0]
    data["workloads"][0]["job_classes"] = [first, {**first, "class_name": "class_2", "class_weight": 3.0}]
    names = [job.name.rsplit("_", 1)[0] for job in SynthTrace(write(tmp_path, data)).synthesized]
    share = names.count("class_2") / len(names)
    assert share == pytest.approx(0.75, abs=5 * math.sqrt(0.75 * 0.25 / 3000))


def job_class(data: dict[str, Any]) -> dict[str, Any]:
    first: dict[str, Any] = data["workloads"][0]["job_classes"][0]
    return first


CLASS = "workloads.0.job_classes.0"


@pytest.mark.parametrize(
    ("change", "field", "says"),
    [
        (lambda d: d.pop("num_jobs"), "num_jobs", "is required"),
        (lambda d: job_class(d)["duration"].update(std="x"), f"{CLASS}.duration.std", "number"),
        (lambda d: job_class(d)["duration"].update(val=0), f"{CLASS}.duration.val", "> 0"),
        (lambda d: job_class(d)["tasks"][0]["count"].update(dist="GAMMA"), f"{CLASS}.tasks.0.count.dist", "LOGNORM"),
        (lambda d: d["workloads"][0].update(time_distribution=[{"time": 5, "weight": 0}]),
         "workloads.0.time_distribution", "all 0"),
        (lambda d: job_class(d)["tasks"][1]["max_memory"].update(weights=[1]),
         f"{CLASS}.tasks.1.max_memory", "constant"),
        (lambda d: job_class(d).pop("tasks") and None, f"{CLASS}.mtasks_avg.val", "> 0"),  # SLS's NPE, said
    ],
)  # fmt: skip
def test_mistakes_name_the_field(tmp_path: Path, change: object, field: str, says: str) -> None:
    data = json.loads(json.dumps(SYN_GENERIC))
    change(data)  # type: ignore[operator]
    with pytest.raises(TraceError) as caught:
        SynthTrace(write(tmp_path, data))
    assert caught.value.field == field and says in str(caught.value)


def test_schedule_replays_a_synth_file_and_refuses_a_bad_one_in_one_line(tmp_path: Path) -> None:
    reader = read_pod_trace("synth", write(tmp_path, SYN_GENERIC))
    assert reader.pods() and reader.nodes()
    done = CliRunner().invoke(cli, ["schedule", str(write(tmp_path, SYN_GENERIC)), "--format", "synth", "--no-store"])
    assert done.exit_code == 0, done.output
    bad = json.loads(json.dumps(SYN_GENERIC))
    bad["num_jobs"] = 0
    refused = CliRunner().invoke(cli, ["schedule", str(write(tmp_path, bad)), "--format", "synth", "--no-store"])
    assert refused.exit_code == 2 and "num_jobs" in refused.output and "Traceback" not in refused.output


def test_the_example_runs_through_the_capacity_scheduler() -> None:
    done = CliRunner().invoke(
        cli, ["run", str(ROOT / "examples" / "yarn" / "synth-replay.yaml"), "--no-store", "-o", "json"]
    )
    assert done.exit_code == 0, done.output
    summary = json.loads(done.output)["summary"]
    assert summary["jobs"] == summary["finished"] == 120 and set(summary["queues"]) == {"root.prod", "root.dev"}


def test_the_jobs_alone_are_the_jobs_a_reader_of_pods_makes(tmp_path: Path) -> None:
    """YARN's schedulers read the jobs alone (`pods=False`): the same jobs, and no pod made."""
    path = write(tmp_path, SYN_GENERIC)
    both, jobs_only = SynthTrace(path), SynthTrace(path, pods=False)
    assert jobs_only.jobs == both.jobs and both.pods() and jobs_only.pods() == []


def test_a_lazy_reading_makes_the_pods_a_full_one_makes_in_its_order(tmp_path: Path) -> None:
    """`lazy=True` makes each job's pods only as a replay takes them: the same pods in the same order (by
    arrival, then name: jobs submitted together are merged), with the count and first and last arrival."""
    data = json.loads(json.dumps(SYN_GENERIC))
    data["num_jobs"] = 60
    path = write(tmp_path, data)
    full, lazy = SynthTrace(path), SynthTrace(path, lazy=True)
    stream = lazy.pod_stream()
    pods = list(stream)
    assert pods == full.pods() == lazy.pods()
    assert len({p.created_at for p in pods}) < len({p.job for p in pods})  # some jobs arrive together
    assert (stream.count, stream.first_created, stream.last_created) == (
        len(pods),
        pods[0].created_at,
        pods[-1].created_at,
    )
    assert lazy.jobs == [] and lazy.nodes() == full.nodes()
