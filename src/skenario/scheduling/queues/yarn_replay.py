"""An SLS trace replayed through YARN's Capacity or Fair Scheduler on the event clock, as SLS runs it.

What happens to a job (SLS's `MRAMSimulator` and `NMSimulator`, with the ResourceManager between):
1. At `job.start.ms` the application is submitted to its leaf queue; it waits *pending* until the
   AM limits let its ApplicationMaster start, then asks for its AM container.
2. Nodes heartbeat every `nm_heartbeat` (each at its own phase, drawn from the seed); at a
   heartbeat the node first reports the containers that ended since the last one (their resources
   return), then the scheduler allocates on it (`CapacityScheduler.node_update`).
3. The AM starts when its container is allocated, and heartbeats every `am_heartbeat` from then:
   at its first heartbeat it asks for every map (as SLS's `packageRequests`, one ask per priority,
   sized as the first container of that priority); it launches the containers it was given at its
   next heartbeat, each running its trace duration; once every map is reported done it asks for
   the reduces (an `am.type` other than `mapreduce` asks for everything at once). When every task is
   reported done the application finishes and its AM container ends.

Heartbeats that could change nothing are not run: a node heartbeats only while it has room and
some application asks, or when it has something to report; an AM only when it has news. The
outcome is the same as beating every interval, at a cost that follows the work, not the cluster's
size times the trace's length.

Per job: submitted, AM started (its wait), finished; per queue, step series of allocated and
pending resources and running and pending applications, with SLS's names
(`queue.<q>.allocated.memory`, ...).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar, Literal, NamedTuple

import numpy as np

from skenario.core.environment import Environment
from skenario.core.random import RandomStreams
from skenario.core.time import MILLISECOND, SECOND
from skenario.errors import SkenarioError
from skenario.scheduling.objects import NodeSpec
from skenario.scheduling.queues.applications import Application, Container, Node
from skenario.scheduling.queues.capacity import CapacityScheduler, LeafQueue, ParentQueue, Queue
from skenario.scheduling.queues.capacity_config import CapacityConfig
from skenario.scheduling.queues.fair import FairQueue, FairScheduler
from skenario.scheduling.queues.fair_config import FairConfig, FairPreemption
from skenario.scheduling.queues.fair_preemption import starved_amount
from skenario.scheduling.queues.preemption import PreemptionQueue, PreemptionSettings, to_obtain
from skenario.scheduling.queues.resources import Resource
from skenario.scheduling.queues.steps import SpilledSeries, StepIntegral, sample
from skenario.scheduling.traces.sls import JobStream, ListedJobs, SlsJob, SlsTask

HORIZON = 100 * 365 * 86_400 * SECOND
MIB = 1024 * 1024
MAP = "map"
AM_CONTAINER = Resource(1024, 1)  # SLS's yarn.sls.am.container.memory and .vcores
NOT_SUBMITTED = "not submitted yet"
SERIES_COLUMNS = 8  # a queue row: t, queue, allocated MB and vcores, pending MB, apps running and pending, preempted


@dataclass(eq=False)
class JobRun:
    """One job's life in the replay."""

    job: SlsJob
    app: Application
    started_at: int | None = None  # its AM container allocated
    finished_at: int | None = None
    rejected: str | None = None
    asked_maps: bool = False
    asked_reduces: bool = False
    waiting: dict[int, list[SlsTask]] = field(default_factory=dict)  # priority: tasks asked for, not yet given
    given: list[tuple[Container, SlsTask]] = field(default_factory=list)  # allocated, to launch at the next beat
    reported: int = 0  # tasks whose end the AM has heard of
    maps_reported: int = 0
    heard: int = 0  # ends the NMs reported, not yet heard by the AM
    maps_heard: int = 0
    am_beat_due: bool = False
    submitted: bool = False
    lost: list[SlsTask] = field(default_factory=list)  # preempted: asked for again at the AM's next beat
    preempted: int = 0

    @property
    def maps(self) -> int:
        return sum(1 for t in self.job.tasks if t.type == MAP)

    def row(self) -> JobRow:
        job = self.job
        return JobRow(
            job.id,
            self.app.queue,
            job.user,
            job.submitted_at,
            self.started_at,
            self.finished_at,
            len(job.tasks),
            self.preempted,
            self.rejected,
        )


class JobRow(NamedTuple):
    """What the tables keep of a job once it is over (finished or rejected): its tasks and its application go."""

    id: str
    queue: str  # its leaf queue's path
    user: str
    submitted_at: int
    started_at: int | None
    finished_at: int | None
    containers: int
    preempted: int
    rejected: str | None

    @property
    def state(self) -> str:
        if self.rejected is not None:
            return "rejected"
        if self.finished_at is not None:
            return "finished"
        if self.started_at is not None:
            return "running"
        return "pending"

    @property
    def last_time(self) -> int:
        return max(self.submitted_at, self.started_at or 0, self.finished_at or 0)


@dataclass(frozen=True)
class QueueSummary:
    queue: str
    jobs: int
    finished: int
    mean_wait_s: float
    max_wait_s: float
    allocated_memory_mean: float  # time-weighted share of the cluster's memory
    allocated_memory_peak: float
    pending_memory_mean_mb: float
    preempted: int = 0  # containers killed by the preemption monitor


@dataclass(frozen=True)
class YarnSummary:
    scheduler: str  # CapacityScheduler or FairScheduler
    jobs: int
    finished: int
    rejected: int
    unfinished: int
    containers: int
    mean_wait_s: float
    p95_wait_s: float
    max_wait_s: float
    mean_runtime_s: float
    allocated_memory_mean: float
    allocated_memory_peak: float
    queues: tuple[QueueSummary, ...]
    preempted: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "scheduler": self.scheduler,
            "jobs": self.jobs,
            "finished": self.finished,
            "rejected": self.rejected,
            "unfinished": self.unfinished,
            "containers": self.containers,
            "meanWaitSeconds": self.mean_wait_s,
            "p95WaitSeconds": self.p95_wait_s,
            "maxWaitSeconds": self.max_wait_s,
            "meanRuntimeSeconds": self.mean_runtime_s,
            "allocatedMemoryMean": self.allocated_memory_mean,
            "allocatedMemoryPeak": self.allocated_memory_peak,
            "preemptedContainers": self.preempted,
            "queues": {
                q.queue: {
                    "jobs": q.jobs,
                    "finished": q.finished,
                    "meanWaitSeconds": q.mean_wait_s,
                    "maxWaitSeconds": q.max_wait_s,
                    "allocatedMemoryMean": q.allocated_memory_mean,
                    "allocatedMemoryPeak": q.allocated_memory_peak,
                    "pendingMemoryMeanMB": q.pending_memory_mean_mb,
                    "preemptedContainers": q.preempted,
                }
                for q in self.queues
            },
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> YarnSummary:
        """Back from `as_dict` (a stored replay's summary)."""
        queues = tuple(
            QueueSummary(
                queue,
                int(q["jobs"]),
                int(q["finished"]),
                float(q["meanWaitSeconds"]),
                float(q["maxWaitSeconds"]),
                float(q["allocatedMemoryMean"]),
                float(q["allocatedMemoryPeak"]),
                float(q["pendingMemoryMeanMB"]),
                int(q.get("preemptedContainers", 0)),
            )
            for queue, q in data.get("queues", {}).items()
        )
        return cls(
            scheduler=str(data["scheduler"]),
            jobs=int(data["jobs"]),
            finished=int(data["finished"]),
            rejected=int(data["rejected"]),
            unfinished=int(data["unfinished"]),
            containers=int(data["containers"]),
            mean_wait_s=float(data["meanWaitSeconds"]),
            p95_wait_s=float(data["p95WaitSeconds"]),
            max_wait_s=float(data["maxWaitSeconds"]),
            mean_runtime_s=float(data["meanRuntimeSeconds"]),
            allocated_memory_mean=float(data["allocatedMemoryMean"]),
            allocated_memory_peak=float(data["allocatedMemoryPeak"]),
            queues=queues,
            preempted=int(data.get("preemptedContainers", 0)),
        )


def job_problem(job: SlsJob, config: CapacityConfig | FairConfig, file: str) -> SkenarioError | None:
    """What YARN refuses of a job before it runs: a queue the scheduler does not have, a container above the
    maximum allocation (None: nothing)."""
    name = job.queue if job.queue is not None else "default"
    try:
        config.leaf(name)
    except KeyError as exc:
        return SkenarioError(
            f"job {job.id}: {exc.args[0]}", file=file, line=job.line, field="job.queue.name", value=name
        )
    maximum = config.maximum_allocation
    for task in job.tasks:
        if task.memory_mb > maximum.memory or task.vcores > maximum.vcores:
            return SkenarioError(
                f"job {job.id}, container {task.name} asks {task.memory_mb} MB and {task.vcores} vcores, above "
                f"the maximum allocation of {maximum.memory} MB and {maximum.vcores} vcores "
                "(yarn.scheduler.maximum-allocation-mb/-vcores): YARN refuses such a request",
                file=file,
                line=job.line,
                field="container.memory-mb",
                value=task.memory_mb,
            )
    return None


class YarnReplay:
    """SLS jobs on nodes under the Capacity or Fair Scheduler, run until every job is done (or `until`, in ns).

    The jobs come as a list, or as a `JobStream` (an SLS trace read lazily: each job read when it is submitted,
    checked with `job_problem` when the trace was read). A job's run lives from its submission to its end; then
    only its row is kept (`JobRow`), so memory follows the jobs under way, not the trace's length."""

    kind: ClassVar[str] = "trace"
    keeping: ClassVar[Literal["none"]] = "none"

    def __init__(
        self,
        jobs: Sequence[SlsJob] | JobStream,
        nodes: Sequence[NodeSpec],
        config: CapacityConfig | FairConfig,
        *,
        seed: int = 0,
        nm_heartbeat: int = SECOND,
        am_heartbeat: int = SECOND,
        am_resource: Resource = AM_CONTAINER,
        until: int | None = None,
        trace_file: str = "trace",
    ) -> None:
        if not nodes:
            raise SkenarioError("a replay needs nodes: give an SLS node file with --nodes, or num.nodes in the trace")
        if nm_heartbeat <= 0 or am_heartbeat <= 0:
            raise ValueError("heartbeat intervals must be positive")
        self.config = config
        self.nm_heartbeat = nm_heartbeat
        self.am_heartbeat = am_heartbeat
        self.until = until
        self.nodes = [Node(n.name, Resource(n.memory // MIB, n.cpu // 1000)) for n in nodes]
        self.scheduler: CapacityScheduler | FairScheduler = (
            CapacityScheduler(config, self.nodes)
            if isinstance(config, CapacityConfig)
            else FairScheduler(config, self.nodes)
        )
        self.preemption = config.preemption  # the Capacity Scheduler's monitor, or the Fair Scheduler's
        rng = RandomStreams(seed).generator("heartbeats")
        self._phase = {node.name: int(rng.integers(nm_heartbeat)) for node in self.nodes}
        self._am_resource, self._file = am_resource, trace_file
        if isinstance(jobs, Sequence):
            jobs = ListedJobs(jobs)
            for job in jobs:  # refused now, not when submitted
                problem = job_problem(job, config, trace_file)
                if problem is not None:
                    raise problem
        self.job_count = jobs.count
        self._last_submitted = jobs.last_submitted
        self._job_of: dict[str, JobRun] = {}  # the runs from their submission to their end, by job id
        self._over: list[JobRow] = []  # the jobs finished or rejected, as they ended
        self._unsubmitted: list[JobRow] = []  # once the replay is over: the jobs `until` left out
        self.env = Environment(halt_at=max(until if until is not None else HORIZON, 2))
        self._armed: set[str] = set()
        self._sleeping: dict[str, Node] = {}  # nodes with room whose heartbeats wait for demand
        self._reserved: dict[str, Node] = {}  # nodes a reservation holds
        self._reports: dict[str, list[Container]] = {}  # per node: containers ended, not yet reported
        self._tasks: dict[int, tuple[JobRun, SlsTask | None]] = {}  # container id: its job and task (None: the AM)
        self.containers = 0
        self.preempted: dict[str, int] = dict.fromkeys(self.scheduler.leaves, 0)  # containers killed, per leaf
        self._live: dict[int, Container] = {}  # allocated and not yet released, by id
        self._marked: dict[int, int] = {}  # container id: when preemption first selected it
        self._killed: set[int] = set()  # preempted containers whose trace end is still scheduled
        self._monitor_armed = False
        self._below: dict[tuple[str, str], int] = {}  # (fair or min, leaf): since when it has been below that share
        self.end = 0
        self.phase = "Pending"
        self.message: str | None = "not started"
        self._queues = list(self.scheduler.leaves)
        # Per queue, rows of 8: t, queue, allocated MB and vcores, pending MB, running and pending apps, containers
        # preempted so far (8 bytes each), on disk but for the last few; the summary's figures folded as they come.
        self._series = SpilledSeries(len(self._queues), SERIES_COLUMNS)
        self._last: dict[int, tuple[int, int, int, int, int, int]] = {}
        self._allocated = [StepIntegral() for _ in self._queues]  # each queue's allocated MB
        self._pending_mb = [StepIntegral() for _ in self._queues]
        self._cluster = StepIntegral(every_value=False)  # every queue's allocated MB together, read at each instant
        self._cluster_mb = 0
        self._feed = iter(jobs)
        self._submit_next()
        for node in self.nodes:
            self._sleeping[node.name] = node

    def _run_of(self, job: SlsJob) -> JobRun:
        problem = job_problem(job, self.config, self._file)
        if problem is not None:
            raise problem
        leaf = self._leaf_path(job)
        return JobRun(job, Application(job.id, job.user, leaf, job.submitted_at, self._am_resource))

    def _leaf_path(self, job: SlsJob) -> str:
        return self.config.leaf(job.queue if job.queue is not None else "default").path

    def _over_now(self, run: JobRun) -> None:
        """The job finished or was refused: its row stays, its run goes."""
        self._over.append(run.row())
        del self._job_of[run.job.id]

    # -- running ---------------------------------------------------------------------------------

    def run(self, until: int | None = None, *, steps: int = 1, progress: Any = None) -> YarnSummary:
        if until is not None and until != self.until:
            raise ValueError(f"this replay ends at {self.until}: give until={until} when making it")
        env = self.env
        if self.until is not None:
            env.run()
        else:
            stop = self._last_submitted + SECOND
            while True:
                env.run(until=min(stop, env.halt_at - 1))
                if env.pending <= 1 or env.now() >= env.halt_at - 1:
                    break
                stop = 2 * stop
        self._unsubmitted = [
            JobRow(job.id, self._leaf_path(job), job.user, job.submitted_at, None, None, len(job.tasks), 0, None)
            for job in self._feed
        ]
        latest = max((row.last_time for row in self._rows()), default=0)
        self.end = max(env.now() if self.until is not None else 0, latest) + 1
        self.phase, self.message = "Completed", f"replayed to {self.end / SECOND:,.0f} s"
        if progress is not None:
            progress(self.end)
        return self.summary()

    @property
    def jobs_under_way(self) -> int:
        """Jobs whose runs are held: submitted (or next to be) and neither finished nor refused."""
        return len(self._job_of)

    def simulated(self) -> int:
        return self.end

    def pause_soon(self) -> None:
        """Return from the kernel after the movement under way (a stop is then the caller's to make)."""
        self.env.pause_soon()

    def fail(self, message: str) -> None:
        """Mark the replay Failed: it was stopped from outside."""
        self.phase, self.message = "Failed", message

    def _submit_next(self) -> None:
        job = next(self._feed, None)
        if job is None:
            return
        run = self._job_of[job.id] = self._run_of(job)

        def submit() -> None:
            run.submitted = True
            reason = self.scheduler.submit(run.app)
            if reason is not None:
                run.rejected = reason
                self._over_now(run)
            self._changed()
            self._submit_next()

        self.env.call_at(max(run.job.submitted_at, 1), submit)

    def _next_beat(self, node: Node, after: int) -> int:
        """The node's first heartbeat strictly after `after` (it beats at its phase plus whole intervals)."""
        interval, phase = self.nm_heartbeat, self._phase[node.name]
        if after < phase:
            return phase
        return phase + ((after - phase) // interval + 1) * interval

    def _arm(self, node: Node) -> None:
        if node.name in self._armed:
            return
        self._armed.add(node.name)
        self._sleeping.pop(node.name, None)
        self.env.call_at(self._next_beat(node, self.env.now()), lambda: self._beat(node))

    def _has_room(self, node: Node) -> bool:
        sched = self.scheduler
        return node.reservation is None and sched.rc.fits_in(sched.minimum, node.unallocated)

    def _changed(self) -> None:
        """Something that may let a waiting node allocate: wake the nodes with room, if anyone asks."""
        self._record()
        for name, node in list(self._reserved.items()):  # a reservation dropped elsewhere leaves room here
            if node.reservation is None:
                del self._reserved[name]
                if self._has_room(node) and name not in self._armed:
                    self._sleeping[name] = node
        if not self._sleeping or not self.scheduler.has_demand():
            return
        for node in list(self._sleeping.values()):
            self._arm(node)

    def _beat(self, node: Node) -> None:
        """A NodeManager heartbeat: report what ended, then let the scheduler allocate here."""
        self._armed.discard(node.name)
        now = self.env.now()
        sched = self.scheduler
        reported = self._reports.pop(node.name, [])
        if not reported and node.reservation is None and not sched.has_demand():
            self._sleeping[node.name] = node  # nothing to report and nobody asks: this beat would change nothing
            return
        for container in reported:
            sched.release(container)
            self._live.pop(container.id, None)
            run, task = self._tasks.pop(container.id)
            if task is not None:
                run.heard += 1
                run.maps_heard += task.type == MAP
                self._am_news(run)
        allocated = sched.node_update(node, now)
        for container in allocated:
            self._given(container)
        if node.reservation is not None:
            self._reserved[node.name] = node  # it beats again when something on it ends
        elif self._has_room(node):
            if sched.has_demand() and (allocated or reported):
                self._arm(node)
            else:
                self._sleeping[node.name] = node
        if allocated or reported:
            self._changed()

    def _given(self, container: Container) -> None:
        self.containers += 1
        self._live[container.id] = container
        if self.preemption is not None and not self._monitor_armed:
            self._monitor_armed = True
            self.env.call_at(self._next_monitor(), self._monitor)
        run = self._job_of[container.app.id]
        if container.is_am:
            run.started_at = self.env.now()
            self._tasks[container.id] = (run, None)
            self._am_news(run)  # its first heartbeat asks for the maps
            return
        tasks = run.waiting[container.priority]
        task = tasks.pop(0)
        if not tasks:
            del run.waiting[container.priority]
        self._tasks[container.id] = (run, task)
        run.given.append((container, task))
        self._am_news(run)

    def _am_news(self, run: JobRun) -> None:
        """Something for the AM to act on at its next heartbeat (it beats every interval from its start)."""
        if run.am_beat_due or run.started_at is None or run.finished_at is not None:
            return
        run.am_beat_due = True
        interval, start, now = self.am_heartbeat, run.started_at, self.env.now()
        beat = start + ((now - start) // interval + 1) * interval
        self.env.call_at(beat, lambda: self._am_beat(run))

    def _am_beat(self, run: JobRun) -> None:
        run.am_beat_due = False
        now = self.env.now()
        for container, task in run.given:  # launched now: each runs its trace duration
            self.env.call_at(now + task.duration, partial(self._ended, container))
        run.given.clear()
        if run.lost:  # MRAMSimulator asks again for the containers it lost to preemption
            lost, run.lost = run.lost, []
            self._ask(run, lost)
        run.reported += run.heard
        run.maps_reported += run.maps_heard
        run.heard = run.maps_heard = 0
        asked = False
        if not run.asked_maps:
            run.asked_maps = True
            first = run.job.am_type != "mapreduce"
            asked = self._ask(run, [t for t in run.job.tasks if first or t.type == MAP])
            run.asked_reduces = first
        if not run.asked_reduces and run.maps_reported >= run.maps:
            run.asked_reduces = True
            asked = self._ask(run, [t for t in run.job.tasks if t.type != MAP]) or asked
        if run.reported >= len(run.job.tasks):
            run.finished_at = now
            self._over_now(run)
            self.scheduler.finish(run.app)
            am = run.app.am_container
            if am is not None:
                self._ended(am)
            self._changed()
        elif asked:
            self._changed()

    def _ask(self, run: JobRun, tasks: list[SlsTask]) -> bool:
        """SLS's `packageRequests`: one ask per priority, sized as that priority's first container."""
        by_priority: dict[int, list[SlsTask]] = {}
        for task in tasks:
            by_priority.setdefault(task.priority, []).append(task)
        for priority, group in by_priority.items():
            first = group[0]
            run.waiting.setdefault(priority, []).extend(group)
            asked = run.app.asks.get(priority)  # an ask standing at this priority keeps its size, as SLS's does
            size = asked[0] if asked is not None else Resource(first.memory_mb, first.vcores)
            self.scheduler.ask(run.app, priority, size, len(group))
        return bool(tasks)

    def _ended(self, container: Container) -> None:
        """The container's process ended; its node reports it at its next heartbeat."""
        if container.id in self._killed:
            self._killed.discard(container.id)  # preempted before its trace end
            return
        self._reports.setdefault(container.node.name, []).append(container)
        self._arm(container.node)

    # -- preemption --------------------------------------------------------------------------------

    def _next_monitor(self) -> int:
        settings = self.preemption
        assert settings is not None
        every = (
            settings.monitoring_interval_ms if isinstance(settings, PreemptionSettings) else settings.check_interval_ms
        )
        interval = every * MILLISECOND
        return (self.env.now() // interval + 1) * interval

    def _monitor(self) -> None:
        """Select containers to preempt, and kill those selected for long enough: the Capacity Scheduler's
        `ProportionalCapacityPreemptionPolicy.editSchedule`, or the Fair Scheduler's `FSPreemptionThread`."""
        settings = self.preemption
        sched = self.scheduler
        assert settings is not None
        now = self.env.now()
        if isinstance(settings, PreemptionSettings):
            assert isinstance(sched, CapacityScheduler)
            amounts = to_obtain(self._preemption_tree(sched.root), sched.cluster.memory, settings)
            selected = [c for path, amount in amounts.items() for c in self._select(sched.leaves[path], amount)]
            wait = settings.max_wait_before_kill_ms * MILLISECOND
        else:
            assert isinstance(sched, FairScheduler)
            selected = self._starved_selection(sched, settings, now)
            wait = settings.wait_before_kill_ms * MILLISECOND
        marked = {c.id: self._marked.get(c.id, now) for c in selected}
        self._marked = marked
        killed = False
        for container in selected:
            if now - marked[container.id] >= wait:
                self._kill(container)
                killed = True
        if killed:
            self._changed()
        if self._live:
            self.env.call_at(self._next_monitor(), self._monitor)
        else:
            self._monitor_armed = False

    def _starved_selection(self, sched: FairScheduler, settings: FairPreemption, now: int) -> list[Container]:
        """The Fair Scheduler's starved queues and the containers that would feed them (`FSPreemptionThread`)."""
        sched.update_fair_shares()
        amounts = {}
        for path, leaf in sched.leaves.items():
            share = leaf.fair_share.memory
            minimum = min(sched.minimum_share(leaf).memory, (leaf.used + leaf.asked).memory)
            threshold = leaf.config.starvation.fair_share_threshold
            amount = starved_amount(
                leaf.used.memory,
                share,
                minimum,
                leaf.asked.memory,
                leaf.config.starvation,
                self._below_since(("fair", path), leaf.used.memory < share * threshold),
                self._below_since(("min", path), leaf.used.memory < minimum),
                now,
            )
            if amount > 0:
                amounts[path] = amount
        if not amounts or sched.root.used.memory <= settings.utilization_threshold * sched.cluster.memory:
            return []
        taken: dict[str, int] = {}
        chosen: list[Container] = []
        newest_first = sorted(self._live.values(), key=lambda c: -c.id)
        for path, amount in amounts.items():
            for container in newest_first:
                if amount <= 0:
                    break
                victim = sched.leaves[container.app.queue]
                if container.is_am or container.app.queue == path or container in chosen:
                    continue
                left = victim.used.memory - taken.get(victim.path, 0) - container.resource.memory
                if left < victim.fair_share.memory:
                    continue  # preemption never takes a queue below its fair share
                chosen.append(container)
                taken[victim.path] = taken.get(victim.path, 0) + container.resource.memory
                amount -= container.resource.memory
        return chosen

    def _below_since(self, key: tuple[str, str], below: bool) -> int | None:
        """Since when a queue has been below a share (None: it is not)."""
        if not below:
            self._below.pop(key, None)
            return None
        return self._below.setdefault(key, self.env.now())

    def _preemption_tree(self, queue: Queue) -> PreemptionQueue:
        cluster = self.scheduler.cluster
        node = PreemptionQueue(
            queue.path,
            queue.guarantee(cluster).memory,
            queue.maximum(cluster).memory,
            preemption_disabled=queue.config.preemption_disabled,
        )
        if isinstance(queue, ParentQueue):
            node.children = [self._preemption_tree(child) for child in queue.children]
        else:
            assert isinstance(queue, LeafQueue)
            node.used, node.pending = queue.used.memory, queue.asked.memory
        return node

    def _select(self, leaf: LeafQueue | FairQueue, amount: int) -> list[Container]:
        """`FifoCandidatesSelector`: the newest application first; its reservations, then its containers
        lowest priority and newest first; AM containers are not taken."""
        chosen: list[Container] = []
        held: dict[str, list[Container]] = {}  # each application's live task containers, read once
        for c in self._live.values():
            if c.app.queue == leaf.path and not c.is_am:
                held.setdefault(c.app.id, []).append(c)
        for app in sorted(leaf.active, key=lambda a: a.order, reverse=True):
            if amount <= 0:
                break
            for reserved in list(app.reserved):
                if amount <= 0:
                    break
                amount -= reserved.resource.memory
                self.scheduler.unreserve(reserved)
            for container in sorted(held.get(app.id, []), key=lambda c: (-c.priority, -c.id)):
                if amount <= 0:
                    break
                chosen.append(container)
                amount -= container.resource.memory
        return chosen

    def _kill(self, container: Container) -> None:
        """The container is preempted: its resources return now and its AM asks for its task again."""
        self.scheduler.release(container)
        del self._live[container.id]
        self._marked.pop(container.id, None)
        node = container.node
        if node.name not in self._armed and node.reservation is None and self._has_room(node):
            self._sleeping[node.name] = node  # room again: woken with the others
        self.preempted[container.app.queue] += 1
        run, task = self._tasks.pop(container.id)
        assert task is not None
        launched = (container, task) not in run.given
        if launched:
            self._killed.add(container.id)
        else:
            run.given.remove((container, task))
        run.preempted += 1
        run.lost.append(task)
        self._am_news(run)

    # -- results ---------------------------------------------------------------------------------

    def _record(self) -> None:
        now = self.env.now()
        sched = self.scheduler
        changed = False
        for k, path in enumerate(self._queues):
            leaf = sched.leaves[path]
            pending = sched.pending_demand(leaf)
            row = (
                leaf.used.memory,
                leaf.used.vcores,
                pending.memory,
                len(leaf.active),
                len(leaf.pending),
                self.preempted[path],
            )
            last = self._last.get(k)
            if last != row:
                self._last[k] = row
                self._series.append(k, (now, k, *row))
                self._cluster_mb += row[0] - (last[0] if last is not None else 0)
                self._allocated[k].change(now, row[0])
                self._pending_mb[k].change(now, row[2])
                changed = True
        if changed:
            self._cluster.change(now, self._cluster_mb)

    def queue_series(self) -> dict[str, np.ndarray]:
        """Per queue, the step series: time (ns), the queue's index, allocated MB and vcores, pending MB, running and
        pending apps, and the containers preempted so far; each read whole from where it was kept."""
        return {path: self._series.read(k) for k, path in enumerate(self._queues)}

    def sampled(self, grid: np.ndarray) -> dict[str, np.ndarray]:
        """Each queue's figures at the instants of `grid` (ns), with SLS's names (`queue.<q>.allocated.memory` in GB,
        ...), each queue's series read a block at a time."""
        out: dict[str, np.ndarray] = {}
        for k, queue in enumerate(self._queues):
            memory, vcores, pending, running, waiting, preempted = sample(self._series.chunks(k), 0, range(2, 8), grid)
            out[f"queue.{queue}.allocated.memory"] = memory / 1024
            out[f"queue.{queue}.allocated.vcores"] = vcores
            out[f"queue.{queue}.pending.memory"] = pending / 1024
            out[f"queue.{queue}.running.applications"] = running
            out[f"queue.{queue}.pending.applications"] = waiting
            out[f"queue.{queue}.preempted.containers"] = preempted
        return out

    def queue_rows(self) -> Iterator[dict[str, Any]]:
        """The per-queue series as rows named as SLS's `realtimetrack.json` names them for a queue
        (`queue.<q>.allocated.memory` in GB, `.allocated.vcores`), with the pending demand and
        applications beside them; a row wherever one of a queue's figures changed, by time and queue, made as
        they are read (a month's changes are millions of rows)."""
        by_queue = [_queue_rows(path, self._series.chunks(k)) for k, path in enumerate(self._queues)]
        return heapq.merge(*by_queue, key=lambda row: (row["time"], row["queue"]))

    def _rows(self) -> list[JobRow]:
        """Every job's row, in the order they were submitted (`job_order`): those over, those under way, and those
        the replay did not reach."""
        rows = [*self._over, *(run.row() for run in self._job_of.values()), *self._unsubmitted]
        return sorted(rows, key=lambda row: (row.submitted_at, row.id))

    def why(self, job: str) -> str:
        """Why the job has not started or not finished at the replay's end, in the scheduler's own terms."""
        run = self._job_of.get(job)
        if run is not None:
            return self._why(run)
        row = next((r for r in (*self._over, *self._unsubmitted) if r.id == job), None)
        if row is None:
            raise KeyError(f"no job {job!r} in the trace")
        if row.rejected is not None:
            return f"rejected: {row.rejected}"
        return "finished" if row.finished_at is not None else NOT_SUBMITTED

    def _why(self, run: JobRun) -> str:
        if not run.submitted:
            return NOT_SUBMITTED
        if run.started_at is not None and not run.app.asked:
            return "running: every container it asked for was given"
        if not run.app.asked and run.app.active:
            return "started: its AM asks at its next heartbeat"
        return self.scheduler.why_waiting(run.app)

    def _why_under_way(self, row: JobRow) -> str:
        """`why` of a job neither finished nor refused: its run's, or the replay did not reach it."""
        run = self._job_of.get(row.id)
        return NOT_SUBMITTED if run is None else self._why(run)

    def jobs_table(self) -> list[dict[str, Any]]:
        out = []
        for row in self._rows():
            started, finished = row.started_at, row.finished_at
            out.append(
                {
                    "job": row.id,
                    "queue": row.queue,
                    "user": row.user,
                    "state": row.state,
                    "submitted_s": row.submitted_at / SECOND,
                    "started_s": None if started is None else started / SECOND,
                    "finished_s": None if finished is None else finished / SECOND,
                    "wait_s": None if started is None else (started - row.submitted_at) / SECOND,
                    "runtime_s": None if started is None or finished is None else (finished - started) / SECOND,
                    "containers": row.containers,
                    "preempted": row.preempted,
                    "rejected": row.rejected,
                    "why": None if finished is not None or row.rejected is not None else self._why_under_way(row),
                }
            )
        return out

    def summary(self) -> YarnSummary:
        end = max(self.end, 1)
        rows = self._rows()
        started = [r for r in rows if r.started_at is not None]
        waits = np.array([(r.started_at or 0) - r.submitted_at for r in started], dtype=float) / SECOND
        finished = [r for r in started if r.finished_at is not None]
        runtimes = np.array([(r.finished_at or 0) - (r.started_at or 0) for r in finished], dtype=float) / SECOND
        cluster_mb = max(self.scheduler.cluster.memory, 1)
        by_queue: dict[str, list[JobRow]] = {}
        for row in rows:
            by_queue.setdefault(row.queue, []).append(row)
        queues = []
        for k, path in enumerate(self._queues):
            mine = by_queue.get(path, [])
            mine_waits = np.array(
                [(r.started_at or 0) - r.submitted_at for r in mine if r.started_at is not None], dtype=float
            )
            queues.append(
                QueueSummary(
                    path,
                    len(mine),
                    sum(1 for r in mine if r.finished_at is not None),
                    float(mine_waits.mean() / SECOND) if len(mine_waits) else 0.0,
                    float(mine_waits.max() / SECOND) if len(mine_waits) else 0.0,
                    self._allocated[k].mean(end) / cluster_mb,
                    self._allocated[k].peak / cluster_mb,
                    self._pending_mb[k].mean(end),
                    self.preempted[path],
                )
            )
        return YarnSummary(
            scheduler=type(self.scheduler).__name__,
            jobs=self.job_count,
            finished=len(finished),
            rejected=sum(1 for r in rows if r.rejected is not None),
            unfinished=sum(1 for r in rows if r.rejected is None and r.finished_at is None),
            containers=self.containers,
            mean_wait_s=float(waits.mean()) if len(waits) else 0.0,
            p95_wait_s=float(np.percentile(waits, 95)) if len(waits) else 0.0,
            max_wait_s=float(waits.max()) if len(waits) else 0.0,
            mean_runtime_s=float(runtimes.mean()) if len(runtimes) else 0.0,
            allocated_memory_mean=self._cluster.mean(end) / cluster_mb,
            allocated_memory_peak=self._cluster.peak / cluster_mb,
            queues=tuple(queues),
            preempted=sum(self.preempted.values()),
        )


def _queue_rows(path: str, chunks: Iterator[np.ndarray]) -> Iterator[dict[str, Any]]:
    """A queue's rows (`YarnReplay.queue_rows`), read a block of its series at a time."""
    for rows in chunks:
        for t, _, memory, vcores, pending, running, waiting, preempted in rows.tolist():
            yield {
                "time": t // MILLISECOND,
                "queue": path,
                "allocated.memory": memory / 1024,
                "allocated.vcores": vcores,
                "pending.memory": pending / 1024,
                "running.applications": running,
                "pending.applications": waiting,
                "preempted.containers": preempted,
            }
