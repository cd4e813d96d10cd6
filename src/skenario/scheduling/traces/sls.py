"""YARN Scheduler Load Simulator (SLS) JSON traces and node files, as pods and nodes.

An SLS trace is a stream of concatenated JSON objects, one per job, with no enclosing array; a
first object with `num.nodes`/`num.racks` and no `job.tasks` is a header. How it becomes pods:

* **One pod per container:** a job's `job.tasks[]` entries, each repeated `count` times, the job
  itself repeated `job.count` times (as SLS, a count below 1 counts as 1). A pod is named
  `<job id>/<task index>`, plus `-<k>` when the task repeats; a repeated job's id gains `_<k>`. A
  job without `job.id` is `job_<index>`. Indexes count from 0 and skip the header.
* **Resources:** `container.vcores` (default 1) as `vcores * 1000` millicores and
  `container.memory-mb` (default 1024) as MiB; other `container.<resource>` keys are not read.
* **Priority:** within a YARN application a LOWER `container.priority` is served first, while a
  HIGHER Kubernetes pod priority wins, so the pod priority is `-container.priority` (default 20, -20).
* **Time:** the pod arrives at `container.start.ms`, or at `job.start.ms` (default 0) if the task
  gives no start; SLS itself requests every container when the job's AM starts and uses start and
  end only for the lifetime. The duration is, as SLS picks it, `container.duration.ms`, else the
  legacy `duration.ms`, else `container.end.ms - container.start.ms`; it must be more than 0.
* **Labels:** `sls.job` (the job id), `sls.queue` (`job.queue.name`, omitted if absent) and
  `sls.type` (`container.type`, default `map`); the pod's `job` and `queue` say the same.
* **Ignored:** `container.host` (a locality preference; the scheduler places pods itself),
  `am.type`, `job.user`, `job.end.ms`, `job.label.expression`, the AM container and
  `container.execution.type`.

Nodes come from an SLS node file, a stream of `{"rack": r, "nodes": [{"node", "memory-mb"?,
"vcores"?, "labels"?}]}` objects: node `node` with label `sls.rack: r` and, for each YARN node
label in `"label1, label2(exclusive=false)"`, a label of that name set to `"true"`; missing sizes
take the NodeManager defaults (10240 MB, 10 vcores). The node is named by its host only, not
`/rack/host`. Without a node file, a header's `num.nodes` gives `node0`, `node1`, ... of the
default size; otherwise there are no nodes.

Errors name the file, the line where the job's (or rack's) object begins, the record (`job 2,
task 3`), the field and the value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from skenario.core.time import MILLISECOND
from skenario.scheduling.objects import NodeSpec, PodSpec
from skenario.scheduling.traces.base import MIB, LoadedTrace, TracePod, UniqueNames, sorted_pods
from skenario.workloads.tracefiles import TraceError, TracePath

JOB_LABEL = "sls.job"
QUEUE_LABEL = "sls.queue"
TYPE_LABEL = "sls.type"
RACK_LABEL = "sls.rack"
DEFAULT_PRIORITY = 20  # SLS's default container priority (that of a mapper)

_WHITESPACE = " \t\n\r"  # JSON's whitespace
_INTEGER = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True)
class JsonObject:
    """One top-level value of a JSON stream, its position in the stream and the line it begins on."""

    index: int
    line: int
    value: Any


def json_stream(path: TracePath) -> list[JsonObject]:
    """The top-level values of a file of concatenated JSON values (whitespace between them is skipped)."""
    file = str(path)
    try:
        with open(path, encoding="utf-8-sig") as handle:
            text = handle.read()
    except OSError as exc:
        raise TraceError(f"cannot open trace file: {exc.strerror or exc}", file=file) from None
    except UnicodeDecodeError as exc:
        raise TraceError(f"not a UTF-8 text file: {exc}", file=file) from None
    decoder = json.JSONDecoder()
    values: list[JsonObject] = []
    position, line, counted, size = 0, 1, 0, len(text)
    while True:
        while position < size and text[position] in _WHITESPACE:
            position += 1
        if position == size:
            return values
        line += text.count("\n", counted, position)
        counted = position
        try:
            value, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError as exc:
            raise TraceError(
                f"not valid JSON at line {exc.lineno}, column {exc.colno} (character {exc.pos}): {exc.msg}",
                file=file,
                line=exc.lineno,
            ) from None
        values.append(JsonObject(len(values), line, value))


@dataclass(frozen=True)
class Record:
    """Where a value was read: the file, the line its top-level object begins on, and `job 2, task 3`."""

    file: str
    line: int
    name: str

    def error(self, field: str | None, value: Any, problem: str) -> TraceError:
        return TraceError(f"{self.name}: {problem}", file=self.file, line=self.line, field=field, value=value)

    def object(self, value: Any, what: str) -> Mapping[str, Any]:
        if not isinstance(value, dict):
            raise self.error(None, value, f"{what} is {_json(value)}, not a JSON object")
        return value

    def integer(self, where: Mapping[str, Any], key: str, default: int, minimum: int | None = 0) -> int:
        """An integer field (a JSON number or, as SLS reads it, a string of digits), or `default`."""
        if key not in where:
            return default
        value = where[key]
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        elif isinstance(value, str) and _INTEGER.fullmatch(value):
            number = int(value)
        else:
            raise self.error(key, value, f"{key} is {_json(value)}, not a whole number")
        if minimum is not None and number < minimum:
            raise self.error(key, value, f"{key} is {number}, less than {minimum}")
        return number

    def optional_integer(self, where: Mapping[str, Any], key: str) -> int | None:
        return self.integer(where, key, 0) if key in where else None

    def string(self, where: Mapping[str, Any], key: str, default: str) -> str:
        text = self.optional_string(where, key)
        return default if text is None else text

    def optional_string(self, where: Mapping[str, Any], key: str) -> str | None:
        if key not in where:
            return None
        value = where[key]
        if not isinstance(value, str) or not value:
            raise self.error(key, value, f"{key} is {_json(value)}, not a non-empty string")
        return value


def _json(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def is_header(value: Any) -> bool:
    """The optional first object: cluster size, no tasks."""
    return isinstance(value, dict) and "job.tasks" not in value and ("num.nodes" in value or "num.racks" in value)


@dataclass(frozen=True)
class SlsTask:
    """One container of an SLS job, as YARN asks for it (repeated tasks appear once per copy)."""

    name: str  # `<job id>/<task index>`, plus `-<k>` when the task repeats (the pod's name)
    type: str  # container.type: map or reduce
    priority: int  # container.priority: a lower number is served first
    memory_mb: int
    vcores: int
    duration: int  # ns it runs once launched


@dataclass(frozen=True)
class SlsJob:
    """One job of an SLS trace for a YARN scheduler: who submits it where and when, and its tasks."""

    id: str
    user: str  # job.user (default "default")
    queue: str | None  # job.queue.name
    submitted_at: int  # ns: job.start.ms
    am_type: str  # am.type (default "mapreduce": reduces are asked once every map is done)
    tasks: tuple[SlsTask, ...]
    line: int  # where the job's object begins, for messages


@dataclass(frozen=True)
class _Task:
    index: int
    count: int
    created_at: int | None  # ns, if the task gives its own start
    duration: int  # ns
    spec: PodSpec  # named after the task index, relabelled per job copy


class SlsTrace(LoadedTrace):
    """An SLS JSON trace and, optionally, an SLS node file (see the module's docstring for the mapping)."""

    def __init__(
        self,
        path: TracePath,
        nodes_path: TracePath | None = None,
        *,
        default_memory_mb: int = 1024,
        default_vcores: int = 1,
        node_memory_mb: int = 10240,
        node_vcores: int = 10,
        pods: bool = True,
    ) -> None:
        """`pods=False` reads the jobs alone (YARN's schedulers place them): `pods()` is then empty."""
        sizes = {
            "default_memory_mb": default_memory_mb,
            "default_vcores": default_vcores,
            "node_memory_mb": node_memory_mb,
            "node_vcores": node_vcores,
        }
        for option, size in sizes.items():
            if isinstance(size, bool) or not isinstance(size, int) or size < 0:
                raise ValueError(f"{option} must be a whole number >= 0, got {size!r}")
        self.default_memory_mb = default_memory_mb
        self.default_vcores = default_vcores
        self.file = str(path)
        stream = json_stream(path)
        header = stream[0] if stream and is_header(stream[0].value) else None
        jobs = stream[:0:-1] if header is not None else stream[::-1]  # last first: each let go of once read
        del stream
        if not jobs:
            raise TraceError("the trace has no jobs" + (" (only a header)" if header else ""), file=self.file)
        names = UniqueNames(self.file, "pod")
        self.jobs: list[SlsJob] = []
        made: list[TracePod] = []
        for index in range(len(jobs)):
            made.extend(self._job(index, jobs.pop(), names, pods))  # with pods=False, the jobs alone
        if nodes_path is not None:
            nodes = read_sls_nodes(nodes_path, node_memory_mb, node_vcores)
        elif header is not None:
            count = Record(self.file, header.line, "header").integer(header.value, "num.nodes", 0)
            nodes = [sls_node(f"node{i}", node_memory_mb, node_vcores, {}) for i in range(count)]
        else:
            nodes = []
        super().__init__(path, nodes_path, nodes, sorted_pods(made))

    def _job(self, index: int, job_object: JsonObject, names: UniqueNames, pods: bool = True) -> Iterator[TracePod]:
        record = Record(self.file, job_object.line, f"job {index}")
        job = record.object(job_object.value, "the job")
        base_id = record.string(job, "job.id", f"job_{index}")
        record = Record(self.file, job_object.line, f"job {index} ({base_id})")
        start = record.integer(job, "job.start.ms", 0) * MILLISECOND
        queue = record.optional_string(job, "job.queue.name")
        copies = max(record.integer(job, "job.count", 1, minimum=None), 1)
        tasks = job.get("job.tasks")
        if not isinstance(tasks, list) or not tasks:
            problem = "no job.tasks" if tasks is None else f"job.tasks is {_json(tasks)}, not a list of tasks"
            hint = " (a num.nodes/num.racks header may only come first)" if is_header(job) else ""
            raise record.error("job.tasks", tasks, problem + hint)
        parsed = [
            self._task(Record(self.file, record.line, f"{record.name}, task {t}"), t, task)
            for t, task in enumerate(tasks)
        ]
        user = record.string(job, "job.user", "default")
        am_type = record.string(job, "am.type", "mapreduce")
        for copy in range(copies):
            job_id = f"{base_id}_{copy}" if copies > 1 else base_id
            labels = {JOB_LABEL: job_id} | ({QUEUE_LABEL: queue} if queue is not None else {})
            # Every pod of the job with the same task labels shares one mapping of them (they are never
            # changed): a month's half million pods make two or three per job, not one each.
            shared: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}
            containers: list[SlsTask] = []
            for task in parsed:
                own = tuple(sorted(task.spec.labels.items()))
                if own not in shared:
                    shared[own] = labels | dict(task.spec.labels)
                for k in range(task.count):
                    name = f"{job_id}/{task.index}" + (f"-{k}" if task.count > 1 else "")
                    names.claim(name, f"job {index} ({job_id}), task {task.index}", job_object.line)
                    containers.append(
                        SlsTask(
                            name,
                            task.spec.labels[TYPE_LABEL],
                            -task.spec.priority,
                            (task.spec.memory or 0) // MIB,
                            (task.spec.cpu or 0) // 1000,
                            task.duration,
                        )
                    )
                    if not pods:
                        continue
                    spec = PodSpec(
                        name=name,
                        cpu=task.spec.cpu,
                        memory=task.spec.memory,
                        priority=task.spec.priority,
                        labels=shared[own],
                        movable=False,  # a bare pod: no controller recreates it elsewhere
                    )
                    created = start if task.created_at is None else task.created_at
                    yield TracePod(spec, created, task.duration, job=job_id, queue=queue)
            self.jobs.append(SlsJob(job_id, user, queue, start, am_type, tuple(containers), job_object.line))

    def _task(self, record: Record, index: int, value: Any) -> _Task:
        task = record.object(value, "the task")
        count = max(record.integer(task, "count", 1, minimum=None), 1)
        start = record.optional_integer(task, "container.start.ms")
        end = record.optional_integer(task, "container.end.ms")
        if start is not None and end is not None and end < start:
            raise record.error("container.end.ms", end, f"container.end.ms {end} is before container.start.ms {start}")
        key = next((k for k in ("container.duration.ms", "duration.ms") if k in task), None)
        if key is not None:
            duration = record.integer(task, key, 0, minimum=None)
            if duration <= 0:
                raise record.error(key, task[key], f"{key} is {duration}: a container must run for more than 0 ms")
        elif start is not None and end is not None:
            duration = end - start
            if duration == 0:
                raise record.error("container.end.ms", end, f"container.end.ms {end} equals container.start.ms")
        else:
            missing = "container.end.ms" if start is not None else "container.start.ms" if end is not None else None
            raise record.error(
                missing or "container.duration.ms",
                None,
                "no duration: give container.duration.ms (or duration.ms), or container.start.ms and container.end.ms",
            )
        vcores = record.integer(task, "container.vcores", self.default_vcores)
        memory_mb = record.integer(task, "container.memory-mb", self.default_memory_mb)
        priority = record.integer(task, "container.priority", DEFAULT_PRIORITY, minimum=None)
        kind = record.string(task, "container.type", "map")
        spec = PodSpec(
            name=str(index), cpu=vcores * 1000, memory=memory_mb * MIB, priority=-priority, labels={TYPE_LABEL: kind}
        )
        created = None if start is None else start * MILLISECOND
        return _Task(index, count, created, duration * MILLISECOND, spec)


def read_sls_nodes(path: TracePath, memory_mb: int = 10240, vcores: int = 10) -> list[NodeSpec]:
    """An SLS node file: a stream of rack objects, each with its nodes."""
    file = str(path)
    names = UniqueNames(file, "node")
    nodes = []
    stream = json_stream(path)
    for rack_object in stream:
        record = Record(file, rack_object.line, f"rack {rack_object.index}")
        rack_entry = record.object(rack_object.value, "the rack")
        rack = record.optional_string(rack_entry, "rack")
        if rack is None:
            raise record.error("rack", None, "no rack name")
        entries = rack_entry.get("nodes")
        if not isinstance(entries, list):
            raise record.error("nodes", entries, f"nodes is {_json(entries)}, not a list of nodes")
        for n, value in enumerate(entries):
            where = Record(file, rack_object.line, f"{record.name} ({rack}), node {n}")
            entry = where.object(value, "the node")
            name = where.optional_string(entry, "node")
            if name is None:
                raise where.error("node", None, "no node name")
            names.claim(name, where.name, where.line, "node")
            labels = {RACK_LABEL: rack} | dict.fromkeys(_node_labels(where, entry), "true")
            size_mb = where.integer(entry, "memory-mb", memory_mb)
            nodes.append(sls_node(name, size_mb, where.integer(entry, "vcores", vcores), labels))
    if not nodes:
        raise TraceError("the node file has no nodes", file=file)
    return nodes


def _node_labels(record: Record, entry: Mapping[str, Any]) -> list[str]:
    """`"label1, label2(exclusive=false)"` as [label1, label2]."""
    text = entry.get("labels", "")
    if not isinstance(text, str):
        raise record.error("labels", text, f'labels is {_json(text)}, not a string such as "label1, label2"')
    labels = []
    for part in text.split(","):
        if not part.strip():
            continue
        name = part.split("(", 1)[0].strip()
        if not name:
            raise record.error("labels", text, f"labels has '{part.strip()}', which names no label")
        labels.append(name)
    return labels


def sls_node(name: str, memory_mb: int, vcores: int, labels: dict[str, str]) -> NodeSpec:
    return NodeSpec(name=name, cpu=vcores * 1000, memory=memory_mb * MIB, labels=labels)
