"""YARN SLS's synthetic load (SYNTH): jobs generated from a JSON of workloads, job classes and distributions.

Read as `SynthTraceJobProducer` reads it (hadoop-sls, sls/synthetic/): `num_jobs` jobs, each from a workload
picked by `workload_weight`, submitted at a time from that workload's `time_distribution` (a bucket picked by
`weight`, then a whole second uniformly in it up to the next bucket's `time`; the last bucket's own time),
of a job class picked by `class_weight`, into the workload's `queue_name`. Jobs are released in order of
submission; each is named `<class_name>_%06d` in that order. A job's containers follow its class's `tasks`
(`SynthJob`): per task type one draw of `count`, `max_memory` (at least 1024 MB) and `max_vcores` (at least
1), and per container one draw of `time`. The legacy flat job class (`mtasks_avg`, `mtime_avg`, ...) is
converted as `validateJobDef` converts it: maps of priority 20, reduces of priority 10.

A sample (`Sample`, `SynthUtils`) is `{val}` (a constant), `{val, std, dist}` (LOGNORM, the default, with that
mean and standard deviation, or NORM; a `std` of 0 is val/6; val must be > 0), or `{discrete, weights}` (a
weighted pick; weights default to 1 each); whole numbers are rounded half up (`Math.round`). The draws come
from the file's `rand_seed`, through numpy, so a file gives the same jobs on every machine, though not the
same jobs as Java's generator would.

Units are the format's: times in seconds (`time_distribution`, `duration`, and a task's `time`, which the
generator's source documents as seconds, `// durations in sec`; SLS's own replay passes that number on
as a container's `duration.ms`), memory in MB. `num_nodes` nodes are made when no node file is given.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from skenario.core.random import RandomStreams
from skenario.core.time import SECOND
from skenario.scheduling.objects import PodSpec
from skenario.scheduling.traces.base import MIB, LoadedTrace, PodStream, TracePod, sorted_pods
from skenario.scheduling.traces.sls import JOB_LABEL, QUEUE_LABEL, TYPE_LABEL, SlsJob, SlsTask, read_sls_nodes, sls_node
from skenario.workloads.tracefiles import TraceError, TracePath

MIN_MEMORY_MB = 1024  # SynthJob.MIN_MEMORY
MIN_VCORES = 1  # SynthJob.MIN_VCORES
MAP_PRIORITY, REDUCE_PRIORITY = 20, 10  # SynthTraceJobProducer's DEFAULT_MAPPER_PRIORITY, DEFAULT_REDUCER_PRIORITY


@dataclass(frozen=True)
class Sample:
    """A value to draw: a constant, a (log)normal of mean `val` and deviation `std`, or a weighted pick."""

    mode: str  # const, LOGNORM, NORM or discrete
    val: float = 0.0
    std: float = 0.0
    values: tuple[str, ...] = ()
    weights: tuple[float, ...] = ()

    def draw(self, rng: np.random.Generator) -> float:
        if self.mode == "const":
            return self.val
        if self.mode == "discrete":
            return float(self.values[weighted(self.weights, rng)])
        if self.mode == "NORM":
            return float(rng.normal(self.val, self.std))
        sigma2 = math.log1p(self.std**2 / self.val**2)  # `getLogNormalDist`: a lognormal of that mean and deviation
        return float(rng.lognormal(math.log(self.val) - sigma2 / 2, math.sqrt(sigma2)))

    def whole(self, rng: np.random.Generator) -> int:
        """`getLong`: the draw rounded half up (`Math.round`)."""
        return math.floor(self.draw(rng) + 0.5)


def weighted(weights: Sequence[float], rng: np.random.Generator) -> int:
    """`SynthUtils.getWeighted`: u = U[0,1) × the total; the first index whose running sum passes u."""
    total = sum(weights)
    u = rng.random() * total
    running = 0.0
    for index, weight in enumerate(weights):
        running += weight
        if running > u:
            return index
    return len(weights) - 1


@dataclass(frozen=True)
class TaskDefinition:
    type: str
    count: Sample
    time: Sample
    memory: Sample
    vcores: Sample
    priority: int


@dataclass(frozen=True)
class JobClass:
    name: str
    user: str
    weight: float
    type: str
    duration: Sample
    reservation: Sample
    deadline_factor: Sample
    tasks: tuple[TaskDefinition, ...]


@dataclass(frozen=True)
class Workload:
    name: str
    weight: float
    queue: str
    classes: tuple[JobClass, ...]
    times: tuple[tuple[int, float], ...]  # (second, weight) buckets

    def submission(self, rng: np.random.Generator) -> int:
        """`Workload.generateSubmissionTime`, in seconds."""
        index = weighted([w for _, w in self.times], rng)
        start = self.times[index][0]
        end = self.times[min(index + 1, len(self.times) - 1)][0]
        return start + (int(rng.integers(end - start)) if end > start else 0)


@dataclass(frozen=True)
class SynthJob:
    """One generated job: its containers, and what SLS reads but does not run (duration, deadline)."""

    name: str
    queue: str
    user: str
    type: str
    submitted: int  # s
    duration: int  # s
    deadline: int | None  # s, with a reservation
    containers: tuple[tuple[str, int, int, int, int], ...]  # (type, seconds, memory MB, vcores, priority)


class _Reader:
    """The JSON read with each mistake said at its path: `workloads.0.job_classes.1.tasks.0.count.std`."""

    def __init__(self, file: str) -> None:
        self.file = file

    def error(self, path: str, value: Any, problem: str) -> TraceError:
        return TraceError(problem, file=self.file, field=path, value=value)

    def mapping(self, value: Any, path: str) -> Mapping[str, Any]:
        if not isinstance(value, dict):
            raise self.error(path, value, "must be a JSON object")
        return value

    def items(self, where: Mapping[str, Any], key: str, path: str, required: bool = True) -> list[Any]:
        value = where.get(key)
        if value is None and not required:
            return []
        if not isinstance(value, list) or (required and not value):
            raise self.error(f"{path}{key}", value, "must be a non-empty list")
        return value

    def number(self, where: Mapping[str, Any], key: str, path: str, default: float | None = None) -> float:
        value = where.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise self.error(f"{path}{key}", value, "must be a number" if key in where else "is required")
        return float(value)

    def whole(self, where: Mapping[str, Any], key: str, path: str, default: int | None = None) -> int:
        value = self.number(where, key, path, default)
        if not value.is_integer():
            raise self.error(f"{path}{key}", value, "must be a whole number")
        return int(value)

    def text(self, where: Mapping[str, Any], key: str, path: str, default: str | None = None) -> str:
        value = where.get(key, default)
        if not isinstance(value, str) or not value:
            raise self.error(f"{path}{key}", value, "must be a non-empty string" if key in where else "is required")
        return value

    def sample(self, value: Any, path: str) -> Sample:
        """`Sample`'s constructor: its three modes, and what makes it fail."""
        data = self.mapping(value, path)
        val, std, dist = data.get("val"), data.get("std"), data.get("dist")
        discrete, weights = data.get("discrete"), data.get("weights")
        if val is not None:
            if std is None:
                if dist is not None or discrete is not None or weights is not None:
                    raise self.error(path, value, "a constant ('val' alone) takes no 'dist', 'discrete' or 'weights'")
                return Sample("const", self.number(data, "val", f"{path}."))
            if discrete is not None or weights is not None:
                raise self.error(path, value, "a distribution ('val' and 'std') takes no 'discrete' or 'weights'")
            if dist is not None and dist not in ("LOGNORM", "NORM"):
                raise self.error(f"{path}.dist", dist, "must be LOGNORM or NORM")
            mean, deviation = self.number(data, "val", f"{path}."), self.number(data, "std", f"{path}.")
            if mean <= 0:
                raise self.error(f"{path}.val", mean, "a distribution's mean must be > 0 (SLS has none to draw from)")
            if deviation < 0:
                raise self.error(f"{path}.std", deviation, "must be >= 0")
            return Sample(dist or "LOGNORM", mean, deviation if deviation > 0 else mean / 6)
        if not isinstance(discrete, list) or not discrete:
            raise self.error(path, value, "give 'val' (with 'std' for a distribution) or a 'discrete' list")
        values = tuple(str(v) for v in discrete)
        for v in values:
            try:
                float(v)
            except ValueError:
                raise self.error(f"{path}.discrete", v, "must be numbers") from None
        if weights is None:
            weights = [1.0] * len(values)
        if not isinstance(weights, list) or len(weights) != len(values):
            raise self.error(f"{path}.weights", weights, f"needs one weight for each of the {len(values)} values")
        parsed = tuple(self.number({"w": w}, "w", f"{path}.weights.{i}.") for i, w in enumerate(weights))
        if any(w < 0 for w in parsed) or sum(parsed) <= 0:
            raise self.error(f"{path}.weights", weights, "must be >= 0, and not all 0")
        return Sample("discrete", values=values, weights=parsed)


def _legacy(reader: _Reader, job: Mapping[str, Any], path: str) -> tuple[TaskDefinition, ...]:
    """`validateJobDef`'s conversion of the flat job class: a map and a reduce task definition."""

    def sample(avg: str, std: str) -> Sample:
        return reader.sample({"val": job.get(avg, 0.0), "std": job.get(std, 0.0)}, f"{path}{avg}")

    tasks = []
    for kind, prefix, memory, vcores, priority in (
        ("map", "m", "map_max_memory", "map_max_vcores", MAP_PRIORITY),
        ("reduce", "r", "reduce_max_memory", "reduce_max_vcores", REDUCE_PRIORITY),
    ):
        tasks.append(
            TaskDefinition(
                kind,
                sample(f"{prefix}tasks_avg", f"{prefix}tasks_stddev"),
                sample(f"{prefix}time_avg", f"{prefix}time_stddev"),
                sample(f"{memory}_avg", f"{memory}_stddev"),
                sample(f"{vcores}_avg", f"{vcores}_stddev"),
                priority,
            )
        )
    return tuple(tasks)


def _job_class(reader: _Reader, value: Any, path: str) -> JobClass:
    job = reader.mapping(value, path)
    at = f"{path}."
    weight = reader.number(job, "class_weight", at)
    if weight < 0:
        raise reader.error(f"{at}class_weight", weight, "must be >= 0")
    if job.get("tasks") is None:
        tasks = _legacy(reader, job, at)
        duration = reader.sample({"val": job.get("dur_avg", 0.0), "std": job.get("dur_stddev", 0.0)}, f"{at}dur_avg")
        reservation = Sample("const", reader.number(job, "chance_of_reservation", at, 0.0))
        factor = reader.sample(
            {"val": job.get("deadline_factor_avg", 0.0), "std": job.get("deadline_factor_stddev", 0.0)},
            f"{at}deadline_factor_avg",
        )
        kind = "mapreduce"
    else:
        tasks = tuple(
            TaskDefinition(
                reader.text(task, "type", f"{at}tasks.{i}."),
                reader.sample(task.get("count"), f"{at}tasks.{i}.count"),
                reader.sample(task.get("time"), f"{at}tasks.{i}.time"),
                reader.sample(task.get("max_memory"), f"{at}tasks.{i}.max_memory"),
                reader.sample(task.get("max_vcores"), f"{at}tasks.{i}.max_vcores"),
                reader.whole(task, "priority", f"{at}tasks.{i}.", 20),
            )
            for i, task in enumerate(
                reader.mapping(t, f"{at}tasks.{n}") for n, t in enumerate(reader.items(job, "tasks", at))
            )
        )
        duration = reader.sample(job.get("duration"), f"{at}duration")
        reservation = reader.sample(job.get("reservation", {"val": 0}), f"{at}reservation")
        factor = reader.sample(job.get("deadline_factor", {"val": 1}), f"{at}deadline_factor")
        kind = reader.text(job, "type", at, "mapreduce")
    return JobClass(
        reader.text(job, "class_name", at),
        reader.text(job, "user_name", at, "default"),
        weight,
        kind,
        duration,
        reservation,
        factor,
        tasks,
    )


def _workload(reader: _Reader, value: Any, path: str) -> Workload:
    data = reader.mapping(value, path)
    at = f"{path}."
    classes = tuple(
        _job_class(reader, c, f"{at}job_classes.{i}") for i, c in enumerate(reader.items(data, "job_classes", at))
    )
    if sum(c.weight for c in classes) <= 0:
        raise reader.error(f"{at}job_classes", None, "the classes' weights are all 0: no class can be picked")
    times: list[tuple[int, float]] = []
    for i, bucket in enumerate(reader.items(data, "time_distribution", at)):
        entry = reader.mapping(bucket, f"{at}time_distribution.{i}")
        second = reader.whole(entry, "time", f"{at}time_distribution.{i}.")
        weight = reader.number(entry, "weight", f"{at}time_distribution.{i}.", 0.0)
        if second < 0 or weight < 0:
            raise reader.error(f"{at}time_distribution.{i}", bucket, "a time and a weight are >= 0")
        if times and second < times[-1][0]:
            raise reader.error(f"{at}time_distribution.{i}.time", second, "the buckets' times must not go back")
        times.append((second, weight))
    if sum(w for _, w in times) <= 0:
        raise reader.error(f"{at}time_distribution", None, "the buckets' weights are all 0: no time can be picked")
    weight = reader.number(data, "workload_weight", at)
    if weight < 0:
        raise reader.error(f"{at}workload_weight", weight, "must be >= 0")
    return Workload(
        reader.text(data, "workload_name", at, f"workload {path}"),
        weight,
        reader.text(data, "queue_name", at, "default"),
        classes,
        tuple(times),
    )


def generate(workloads: Sequence[Workload], count: int, seed: int) -> list[SynthJob]:
    """`createStory` then `SynthJob` for each job in order of submission: the jobs the file describes."""
    streams = RandomStreams(seed)
    story_rng, job_rng = streams.generator("synth.story"), streams.generator("synth.jobs")
    story = []
    for order in range(count):
        workload = workloads[weighted([w.weight for w in workloads], story_rng)]
        submitted = workload.submission(story_rng)
        job_class = workload.classes[weighted([c.weight for c in workload.classes], story_rng)]
        story.append((submitted, order, workload, job_class))
    story.sort(key=lambda entry: (entry[0], entry[1]))
    jobs = []
    for sequence, (submitted, _, workload, job_class) in enumerate(story):
        duration = job_class.duration.whole(job_rng)
        reserved = job_rng.random() <= job_class.reservation.draw(job_rng)
        factor = job_class.deadline_factor.draw(job_rng)
        deadline = submitted + math.ceil(factor * duration) if reserved else None
        containers = []
        for task in job_class.tasks:
            number = task.count.whole(job_rng)
            memory = max(task.memory.whole(job_rng), MIN_MEMORY_MB)
            vcores = max(task.vcores.whole(job_rng), MIN_VCORES)
            for _ in range(max(number, 0)):
                containers.append((task.type, task.time.whole(job_rng), memory, vcores, task.priority))
        jobs.append(
            SynthJob(
                f"{job_class.name}_{sequence:06d}",
                workload.queue,
                job_class.user,
                job_class.type,
                submitted,
                duration,
                deadline,
                tuple(containers),
            )
        )
    return jobs


class SynthTrace(LoadedTrace):
    """A SYNTH file's jobs as an SLS trace's: `jobs` for YARN's schedulers, pods for kube-scheduler."""

    def __init__(
        self,
        path: TracePath,
        nodes_path: TracePath | None = None,
        *,
        node_memory_mb: int = 10240,
        node_vcores: int = 10,
        pods: bool = True,
        lazy: bool = False,
    ) -> None:
        """`pods=False` makes the jobs alone (YARN's schedulers place them): `pods()` is then empty. `lazy=True` makes
        the pods only as a replay takes them (`pod_stream`, a `LazySynthPods`): `jobs` is then empty."""
        self.file = str(path)
        reader = _Reader(self.file)
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise TraceError(f"not JSON: {exc.msg}", file=self.file, line=exc.lineno) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise TraceError(f"cannot read the file: {exc}", file=self.file) from None
        top = reader.mapping(data, "the file")
        workloads = [_workload(reader, w, f"workloads.{i}") for i, w in enumerate(reader.items(top, "workloads", ""))]
        if sum(w.weight for w in workloads) <= 0:
            raise reader.error("workloads", None, "the workloads' weights are all 0: no workload can be picked")
        count = reader.whole(top, "num_jobs", "")
        if count < 1:
            raise reader.error("num_jobs", count, "must be at least 1")
        self.seed = reader.whole(top, "rand_seed", "", 0)
        self.description = str(top.get("description", ""))
        self.synthesized = generate(workloads, count, self.seed)
        self.jobs: list[SlsJob] = []
        self._lazy = LazySynthPods(self.synthesized) if lazy and pods else None
        made: list[TracePod] = []
        for job in self.synthesized if self._lazy is None else ():
            if not job.containers:
                continue  # every count drew 0: nothing to run
            tasks = [
                SlsTask(f"{job.name}/{index}", kind, priority, memory, vcores, _duration(seconds))
                for index, (kind, seconds, memory, vcores, priority) in enumerate(job.containers)
            ]
            if pods:
                made.extend(job_pods(job))
            self.jobs.append(SlsJob(job.name, job.user, job.queue, job.submitted * SECOND, job.type, tuple(tasks), 0))
        if nodes_path is not None:
            nodes = read_sls_nodes(nodes_path, node_memory_mb, node_vcores)
        else:
            nodes = [
                sls_node(f"node{i}", node_memory_mb, node_vcores, {})
                for i in range(reader.whole(top, "num_nodes", "", 0))
            ]
        super().__init__(path, nodes_path, nodes, sorted_pods(made))

    def pods(self) -> list[TracePod]:
        return super().pods() if self._lazy is None else list(self._lazy)

    def pod_stream(self) -> PodStream:
        return super().pod_stream() if self._lazy is None else self._lazy


def _duration(seconds: int) -> int:
    """A container runs for some time: 0 s is read as 1 s."""
    return max(seconds, 1) * SECOND


def job_pods(job: SynthJob) -> Iterator[TracePod]:
    """The generated job's containers as pods, all arriving at its submission."""
    labels = {JOB_LABEL: job.name, QUEUE_LABEL: job.queue}
    for index, (kind, seconds, memory, vcores, priority) in enumerate(job.containers):
        spec = PodSpec(
            name=f"{job.name}/{index}",
            cpu=vcores * 1000,
            memory=memory * MIB,
            priority=-priority,
            labels=labels | {TYPE_LABEL: kind},
            movable=False,
        )
        yield TracePod(spec, job.submitted * SECOND, _duration(seconds), job=job.name, queue=job.queue)


class LazySynthPods:
    """A SYNTH trace's pods made from its generated jobs as a replay takes them (a `PodStream`): the jobs by
    submission, the pods of the jobs submitted at one instant sorted by name, as `sorted_pods` sorts them all."""

    def __init__(self, jobs: Sequence[SynthJob]) -> None:
        self._jobs = sorted((job for job in jobs if job.containers), key=lambda job: job.submitted)
        self.count = sum(len(job.containers) for job in self._jobs)
        self.first_created = self._jobs[0].submitted * SECOND if self._jobs else 0
        self.last_created = self._jobs[-1].submitted * SECOND if self._jobs else 0

    def __iter__(self) -> Iterator[TracePod]:
        for _, together in itertools.groupby(self._jobs, key=lambda job: job.submitted):
            yield from sorted((pod for job in together for pod in job_pods(job)), key=lambda pod: pod.spec.name)
