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

import codecs
import functools
import heapq
import itertools
import json
import os
import re
import sys
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, BinaryIO, Protocol

import numpy as np

from skenario.core.time import MILLISECOND
from skenario.errors import SkenarioError
from skenario.scheduling.objects import NodeSpec, PodSpec
from skenario.scheduling.traces.base import MIB, LoadedTrace, PodStream, TracePod, UniqueNames, sorted_pods
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
    """One top-level value of a JSON stream, its position in the stream and the line it begins on; `span`, where
    its text lies in the file in bytes (start, end), when the file is ASCII (else None: it cannot be read alone)."""

    index: int
    line: int
    value: Any
    span: tuple[int, int] | None = None


def json_stream(path: TracePath) -> list[JsonObject]:
    """The top-level values of a file of concatenated JSON values (whitespace between them is skipped)."""
    return list(json_objects(path))


READ_CHUNK = 1 << 20
"""Bytes a JSON stream is read by at least: its values are parsed from a window of the file, not the whole of it."""


def json_objects(path: TracePath, chunk: int = READ_CHUNK) -> Iterator[JsonObject]:
    """`json_stream`'s values one at a time, read from a window of the file that moves on as they are taken (a
    value longer than the window widens it): neither the file's text nor every value parsed from it is held."""
    file = str(path)
    try:
        handle = open(path, "rb")  # noqa: SIM115 (closed by the `with` below, once the values are read)
    except OSError as exc:
        raise TraceError(f"cannot open trace file: {exc.strerror or exc}", file=file) from None
    with handle:
        window = _Window(handle, file, chunk)
        decoder = json.JSONDecoder()
        index, position = 0, 0
        line, counted = 1, 0  # the line at `counted` in the window
        while True:
            text = window.text
            while position < len(text) and text[position] in _WHITESPACE:
                position += 1
            if position == len(text):
                if window.eof:
                    return
                line = window.refill(position, line + text.count("\n", counted, position))
                position = counted = 0
                continue
            line += text.count("\n", counted, position)
            counted = start = position
            try:
                value, position = decoder.raw_decode(text, start)
                complete = position < len(text) or window.eof  # a value at the window's end may go on (a number)
            except json.JSONDecodeError as exc:
                if window.eof:
                    raise window.error(exc) from None
                complete = False
            if not complete:  # read on and parse the value again from its start
                line = window.refill(start, line)
                position = counted = 0
                continue
            yield JsonObject(index, line, value, window.span(start, position))
            index += 1


class _Window:
    """The part of a JSON stream's file being parsed: its text, and where it begins in the file (characters taken
    before it, its first character's line and column)."""

    def __init__(self, handle: BinaryIO, file: str, chunk: int) -> None:
        self._handle = handle
        self._file = file
        self._chunk = chunk
        self._utf8 = codecs.getincrementaldecoder("utf-8-sig")()
        self.text = ""
        self.eof = False
        self.taken = 0
        self.line = 1
        self.column = 1
        self._skip: int | None = None  # the byte order mark's bytes, once read
        self._ascii = True  # every character read so far is a byte: a value's bytes are known (`span`)
        self.refill(0, 1)

    def refill(self, keep: int, line: int) -> int:
        """Let go of the text before `keep` (its line is `line`) and read on, at least as much as the window holds
        (so a long value is parsed a few times, not once per chunk); `line`, where the window now begins."""
        if keep:
            newline = self.text.rfind("\n", 0, keep)
            self.column = keep - newline if newline >= 0 else self.column + keep
            self.taken += keep
        self.line = line
        first = 3 if self._skip is None else 0  # the first read holds a byte order mark whole, if any
        data = self._handle.read(max(self._chunk, len(self.text) - keep, first))
        try:
            read = self._utf8.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            where = self._handle.tell() - len(data) + exc.start
            raise TraceError(f"not a UTF-8 text file: {exc.reason} near byte {where}", file=self._file) from None
        if self._skip is None:
            self._skip = 3 if data.startswith(codecs.BOM_UTF8) else 0
        self._ascii = self._ascii and read.isascii()
        self.eof = not data
        self.text = self.text[keep:] + read
        return line

    def span(self, start: int, end: int) -> tuple[int, int] | None:
        """The bytes of the window's text [start, end) in the file, while every character so far is a byte."""
        if not self._ascii:
            return None
        offset = self.taken + (self._skip or 0)
        return offset + start, offset + end

    def error(self, exc: json.JSONDecodeError) -> TraceError:
        """Where the file is not valid JSON, from where the window begins."""
        line = self.line + exc.lineno - 1
        column = self.column + exc.colno - 1 if exc.lineno == 1 else exc.colno
        return TraceError(
            f"not valid JSON at line {line}, column {column} (character {self.taken + exc.pos}): {exc.msg}",
            file=self._file,
            line=line,
        )


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


def _shared(text: str | None) -> str | None:
    """A value many records repeat (a queue; users and container types are interned where read), held once
    (`sys.intern`): a month's half million containers would otherwise each hold the JSON reader's copy."""
    return None if text is None else sys.intern(text)


@functools.lru_cache(maxsize=4096)
def _size(value: int) -> int:
    """A container size many containers repeat, one int for all of them (an int past 256 is 32 bytes each)."""
    return value


def is_header(value: Any) -> bool:
    """The optional first object: cluster size, no tasks."""
    return isinstance(value, dict) and "job.tasks" not in value and ("num.nodes" in value or "num.racks" in value)


@dataclass(frozen=True, slots=True)
class SlsTask:
    """One container of an SLS job, as YARN asks for it (repeated tasks appear once per copy)."""

    name: str  # `<job id>/<task index>`, plus `-<k>` when the task repeats (the pod's name)
    type: str  # container.type: map or reduce
    priority: int  # container.priority: a lower number is served first
    memory_mb: int
    vcores: int
    duration: int  # ns it runs once launched


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True)
class _Job:
    """A job's object, checked: what its pods and its `SlsJob`s are made of."""

    record: Record
    base_id: str
    start: int  # ns: job.start.ms
    queue: str | None
    copies: int
    tasks: list[_Task]
    user: str
    am_type: str

    def job_id(self, copy: int) -> str:
        return f"{self.base_id}_{copy}" if self.copies > 1 else self.base_id

    def containers(self, job_id: str) -> Iterator[tuple[str, _Task]]:
        """Each container of a copy of the job: its pod's name and its task."""
        for task in self.tasks:
            for k in range(task.count):
                yield f"{job_id}/{task.index}" + (f"-{k}" if task.count > 1 else ""), task

    def created(self, task: _Task) -> int:
        return self.start if task.created_at is None else task.created_at


class Claims(Protocol):
    """Where a reader claims each pod's name (`UniqueNames`)."""

    def claim(self, name: str, record: str | None, line: int | None = None, field: str = "name") -> None: ...


class _NameHashes:
    """Names claimed as their hashes alone: a lazy reading's first pass asks only whether one repeats (if one
    seems to, the trace is read again in full, and `UniqueNames` says which)."""

    def __init__(self) -> None:
        self._hashes = array("q")

    def claim(self, name: str, record: str | None, line: int | None = None, field: str = "name") -> None:
        self._hashes.append(hash(name))

    def repeated(self) -> bool:
        hashes = np.frombuffer(self._hashes, dtype=np.int64) if self._hashes else np.zeros(0, dtype=np.int64)
        return bool(np.unique(hashes).size < hashes.size)


class _Claimed:
    """Names already checked (a lazy reading's second pass): nothing to claim."""

    def claim(self, name: str, record: str | None, line: int | None = None, field: str = "name") -> None:
        return None


@dataclass(frozen=True)
class _Place:
    """Where a job's object lies in its file, and when a replay needs it (its first pod's arrival; for a YARN
    replay, its submission): what a lazy reading keeps of a job."""

    first_created: int
    start: int  # the object's bytes in the file: [start, end)
    end: int
    line: int
    index: int


class LazySlsPods:
    """An SLS trace's pods read from its file as a replay takes them (a `PodStream`): the jobs in order of their first
    pod's arrival, each job's object read again from the file once the replay reaches it, its pods merged by
    (arrival, name) with those of the jobs already read. Memory holds the jobs' places, and the pods of the jobs
    read whose arrivals are still to come."""

    def __init__(self, trace: SlsTrace, places: list[_Place], count: int, last_created: int) -> None:
        self._trace = trace
        self._places = sorted(places, key=lambda place: (place.first_created, place.start))
        self.count = count
        self.first_created = self._places[0].first_created
        self.last_created = last_created

    def __iter__(self) -> Iterator[TracePod]:
        trace, claimed = self._trace, _Claimed()
        waiting: list[tuple[int, str, TracePod]] = []
        places = iter(self._places)
        place = next(places, None)
        with open(trace.path, "rb", buffering=0) as handle:  # each job read from the file as it is then
            while True:
                while place is not None and (not waiting or place.first_created <= waiting[0][0]):
                    for pod in trace._job(place.index, _read_again(handle, place, trace.file), claimed):
                        heapq.heappush(waiting, (pod.created_at, pod.spec.name, pod))
                    place = next(places, None)
                if not waiting:
                    return
                yield heapq.heappop(waiting)[2]


def job_order(job: SlsJob) -> tuple[int, str]:
    """The order a YARN replay submits jobs in: by submission, then id."""
    return job.submitted_at, job.id


class JobStream(Protocol):
    """A trace's jobs as a YARN replay takes them: in `job_order`, their count and last submission known before."""

    @property
    def count(self) -> int: ...
    @property
    def last_submitted(self) -> int: ...
    def __iter__(self) -> Iterator[SlsJob]: ...


class ListedJobs:
    """Jobs held in a list, as a `JobStream`."""

    def __init__(self, jobs: Iterable[SlsJob]) -> None:
        self._jobs = sorted(jobs, key=job_order)
        self.count = len(self._jobs)
        self.last_submitted = max((job.submitted_at for job in self._jobs), default=0)

    def __iter__(self) -> Iterator[SlsJob]:
        return iter(self._jobs)


class LazySlsJobs:
    """An SLS trace's jobs read from its file as a YARN replay submits them (a `JobStream`): each job's object read
    again once the replay reaches its submission, the jobs submitted at one instant put in `job_order`. Memory holds
    the jobs' places, and the jobs of one instant."""

    def __init__(self, trace: SlsTrace, places: list[_Place], count: int, last_submitted: int) -> None:
        self._trace = trace
        self._places = sorted(places, key=lambda place: (place.first_created, place.start))
        self.count = count
        self.last_submitted = last_submitted

    def __iter__(self) -> Iterator[SlsJob]:
        trace, claimed = self._trace, _Claimed()
        at_once: list[SlsJob] = []
        with open(trace.path, "rb", buffering=0) as handle:
            for place in self._places:
                if at_once and place.first_created != at_once[0].submitted_at:
                    yield from sorted(at_once, key=job_order)
                    at_once.clear()
                for _ in trace._job(place.index, _read_again(handle, place, trace.file), claimed, False, at_once):
                    pass
        yield from sorted(at_once, key=job_order)


def _read_again(handle: BinaryIO, place: _Place, file: str) -> JsonObject:
    """A job's object read again from where the first pass found it."""
    handle.seek(place.start)
    try:
        value = json.loads(handle.read(place.end - place.start))
    except ValueError:
        raise TraceError(f"the trace changed while it was replayed: job {place.index}", file=file) from None
    return JsonObject(place.index, place.line, value)


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
        lazy: bool = False,
        check: Callable[[SlsJob], SkenarioError | None] | None = None,
    ) -> None:
        """`pods=False` reads the jobs alone (YARN's schedulers place them): `pods()` is then empty. `lazy=True`
        checks the whole trace now, as without it, but makes its pods (or, with `pods=False`, its jobs) only as a
        replay takes them (`pod_stream`, a `LazySlsPods`; `job_stream`, a `LazySlsJobs`), reading each job's object
        from the file again then: `jobs` is then empty, and `pods()` reads them all. A trace that is not ASCII is
        read in full as without it. `check` is given every job as it is read (a YARN scheduler's own checks): of the
        problems it finds, the first job's in `job_order` is raised, once the trace has no problem of its own."""
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
        self.jobs: list[SlsJob] = []
        self._problems: list[tuple[tuple[int, str], SkenarioError]] = []  # what `check` found, by `job_order`
        self._lazy = self._places(path, pods, check) if lazy else None
        header, jobs = self._objects(path) if self._lazy is None else (self._lazy[0], iter(()))
        made: list[TracePod] = []
        if self._lazy is None:
            names = UniqueNames(self.file, "pod")
            read = 0
            for index, job_object in enumerate(jobs):
                made.extend(self._job(index, job_object, names, pods, self.jobs))  # with pods=False, the jobs alone
                read += 1
            if not read:
                raise TraceError("the trace has no jobs" + (" (only a header)" if header else ""), file=self.file)
            self._check(self.jobs, check)
        if self._problems:
            raise min(self._problems, key=lambda problem: problem[0])[1]
        if nodes_path is not None:
            nodes = read_sls_nodes(nodes_path, node_memory_mb, node_vcores)
        elif header is not None:
            count = Record(self.file, header.line, "header").integer(header.value, "num.nodes", 0)
            nodes = [sls_node(f"node{i}", node_memory_mb, node_vcores, {}) for i in range(count)]
        else:
            nodes = []
        super().__init__(path, nodes_path, nodes, sorted_pods(made))

    def _objects(self, path: TracePath) -> tuple[JsonObject | None, Iterator[JsonObject]]:
        """The trace's header, if it has one, and its jobs' objects as they are read."""
        objects = json_objects(path)
        first = next(objects, None)
        if first is not None and is_header(first.value):
            return first, objects
        return None, itertools.chain(() if first is None else (first,), objects)

    def _check(self, jobs: Iterable[SlsJob], check: Callable[[SlsJob], SkenarioError | None] | None) -> None:
        if check is None:
            return
        for job in jobs:
            problem = check(job)
            if problem is not None:
                self._problems.append((job_order(job), problem))

    def _places(
        self, path: TracePath, pods: bool, check: Callable[[SlsJob], SkenarioError | None] | None
    ) -> tuple[JsonObject | None, LazySlsPods | LazySlsJobs] | None:
        """A lazy reading's first pass: every job checked and its names claimed, as a full reading does, and where
        each lies; None where the full reading must say what it says (a problem, a name that may repeat, no
        jobs) or cannot be done lazily (a file that is not ASCII, or not a file: a pipe)."""
        if not os.path.isfile(path):
            return None  # a pipe or a device cannot be read again: read in full
        names = _NameHashes()
        places: list[_Place] = []
        count, last = 0, 0
        made: list[SlsJob] = []  # without pods, each object's jobs: checked, then let go of
        try:
            header, jobs = self._objects(path)
            for index, job_object in enumerate(jobs):
                if job_object.span is None:
                    return None
                if not pods:
                    for _ in self._job(index, job_object, names, False, made):
                        pass
                    self._check(made, check)
                    submitted = made[0].submitted_at  # every copy's
                    places.append(_Place(submitted, *job_object.span, job_object.line, index))
                    count, last = count + len(made), max(last, submitted)
                    made.clear()
                    continue
                job = self._checked(index, job_object)
                created = [job.created(task) for task in job.tasks]
                for copy in range(job.copies):
                    job_id = job.job_id(copy)
                    for name, _ in job.containers(job_id):
                        names.claim(name, None)
                        count += 1
                places.append(_Place(min(created), *job_object.span, job_object.line, index))
                last = max(last, *created)
        except TraceError:
            self._problems.clear()
            return None
        if not places or names.repeated():
            self._problems.clear()
            return None
        if pods:
            return header, LazySlsPods(self, places, count, last)
        return header, LazySlsJobs(self, places, count, last)

    def pods(self) -> list[TracePod]:
        if self._lazy is None or isinstance(self._lazy[1], LazySlsJobs):
            return super().pods()
        return list(self._lazy[1])

    def pod_stream(self) -> PodStream:
        if self._lazy is None:
            return super().pod_stream()
        stream = self._lazy[1]
        assert isinstance(stream, LazySlsPods), "a trace read for its jobs alone (pods=False) has no pods"
        return stream

    def job_stream(self) -> JobStream:
        """The jobs in `job_order`: read as they are taken when the trace was read lazily, else from `jobs`."""
        if self._lazy is None:
            return ListedJobs(self.jobs)
        stream = self._lazy[1]
        assert isinstance(stream, LazySlsJobs), "a trace read lazily for its pods has no jobs: give pods=False"
        return stream

    def _checked(self, index: int, job_object: JsonObject) -> _Job:
        """The job's object read and checked (every problem a `TraceError` naming its field)."""
        record = Record(self.file, job_object.line, f"job {index}")
        job = record.object(job_object.value, "the job")
        base_id = record.string(job, "job.id", f"job_{index}")
        record = Record(self.file, job_object.line, f"job {index} ({base_id})")
        start = record.integer(job, "job.start.ms", 0) * MILLISECOND
        queue = _shared(record.optional_string(job, "job.queue.name"))
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
        user = sys.intern(record.string(job, "job.user", "default"))
        am_type = sys.intern(record.string(job, "am.type", "mapreduce"))
        return _Job(record, base_id, start, queue, copies, parsed, user, am_type)

    def _job(
        self, index: int, job_object: JsonObject, names: Claims, pods: bool = True, jobs: list[SlsJob] | None = None
    ) -> Iterator[TracePod]:
        """The job's pods (with `pods`) as they are made; its `SlsJob`s (one per copy) go to `jobs` if given."""
        job = self._checked(index, job_object)
        for copy in range(job.copies):
            job_id = job.job_id(copy)
            labels = {JOB_LABEL: job_id} | ({QUEUE_LABEL: job.queue} if job.queue is not None else {})
            # Every pod of the job with the same task labels shares one mapping of them (they are never
            # changed): a month's half million pods make two or three per job, not one each.
            shared: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}
            owns: dict[int, tuple[tuple[str, str], ...]] = {}  # each task's own labels, as a key of `shared`
            containers: list[SlsTask] = []
            for name, task in job.containers(job_id):
                names.claim(name, f"job {index} ({job_id}), task {task.index}", job_object.line)
                if jobs is not None:
                    containers.append(
                        SlsTask(
                            name,
                            task.spec.labels[TYPE_LABEL],
                            -task.spec.priority,
                            _size((task.spec.memory or 0) // MIB),
                            _size((task.spec.cpu or 0) // 1000),
                            task.duration,
                        )
                    )
                if not pods:
                    continue
                own = owns.get(task.index)
                if own is None:
                    own = owns[task.index] = tuple(sorted(task.spec.labels.items()))
                if own not in shared:
                    shared[own] = labels | dict(task.spec.labels)
                spec = PodSpec(
                    name=name,
                    cpu=task.spec.cpu,
                    memory=task.spec.memory,
                    priority=task.spec.priority,
                    labels=shared[own],
                    movable=False,  # a bare pod: no controller recreates it elsewhere
                )
                yield TracePod(spec, job.created(task), task.duration, job=job_id, queue=job.queue)
            if jobs is not None:
                jobs.append(
                    SlsJob(job_id, job.user, job.queue, job.start, job.am_type, tuple(containers), job_object.line)
                )

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
        kind = sys.intern(record.string(task, "container.type", "map"))
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
