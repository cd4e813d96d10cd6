"""Properties of the cluster model over random small configurations.

(a) Requests are conserved after every movement: arrived = completed + failed + in flight, the
    counts of the stocks adding up to what an observer saw arrive and finish. At every pause, each
    request in flight is in exactly one stock (the buffer or one replica's processing stock).
(b) Replicas are conserved after every movement: every replica made is launching, active,
    terminating or terminated. At every pause each live one is in exactly one stock that matches its
    state; launching + active ends at desired.
(c) No request completes sooner than its own CPU time (at the most its replica can give one
    request) plus its own IO time after arriving, nor later than its timeout. The work each request
    drew is recorded as the CPU admits it and as its IO starts, so random work is checked too.
(d) CPU utilisation is in [0, 1]: a replica's busy core-time never exceeds its cores times the
    time it held them, and the recorder's cpu_utilisation column stays in [0, 1].
(e) The same seed gives identical results twice, and pausing and observing change nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from unittest.mock import patch

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.core.entity import Entity
from skenario.core.environment import Environment
from skenario.core.movement import IgnoredMovement, Movement
from skenario.core.random import Constant, Exponential, RandomStreams
from skenario.core.time import MILLISECOND, SECOND
from skenario.model.cluster import ClusterModel
from skenario.model.config import (
    ClusterSpec,
    LaunchStage,
    MemorySpec,
    MetricsSource,
    MetricsSpec,
    ReplicaSpec,
    RequestSpec,
    RoutingPolicy,
    RoutingSpec,
)
from skenario.model.cpu.sharing import ProcessorSharingCPU
from skenario.model.metrics import Sample
from skenario.model.processing import RequestsProcessing
from skenario.model.replicas import Replica, ReplicaState
from skenario.model.requests import DONE, Request
from skenario.recording.recorder import Recorder
from skenario.workloads.patterns import poisson_arrivals

MS = MILLISECOND
MI = 2**20
DURATION = 20 * SECOND
LAG = 500 * MS  # metrics lag


@dataclass(frozen=True)
class Config:
    seed: int
    initial_replicas: int
    initial_ready: bool
    launch_ms: tuple[int, ...]
    random_launch: bool
    scale_events: tuple[tuple[int, int], ...]  # (time in ms, desired replicas)
    rate: float
    cpu_ms: int
    random_cpu: bool  # exponential CPU time of mean cpu_ms
    io_ms: int | None
    random_io: bool  # exponential IO time of mean io_ms
    timeout_ms: int | None
    grace_ms: int
    buffer_capacity: int
    concurrency: int | None
    queue_capacity: int | None
    policy: RoutingPolicy
    choices: int
    cpu_request: int
    cpu_limit: int | None
    record_ms: int
    pauses_ms: tuple[int, ...]
    memory_mi: tuple[int, int, int | None, int] | None = None  # baseline, per request, limit, node (MiB)
    named_stages: bool = False  # the stages are the container's start and its readiness: memory from the start

    def stage_names(self) -> tuple[str, ...]:
        count = len(self.launch_ms)
        if self.named_stages:
            return ("containerStart", "readiness")[2 - count :] if count else ()
        return tuple(f"stage{i}" for i in range(count))

    def spec(self) -> ClusterSpec:
        return ClusterSpec(
            requests=RequestSpec(
                Exponential(self.cpu_ms * MS) if self.random_cpu else Constant(self.cpu_ms * MS),
                None if self.io_ms is None else RecordedDraws(self.io_ms * MS, self.random_io),
                None if self.timeout_ms is None else self.timeout_ms * MS,
            ),
            replica=ReplicaSpec(
                cpu_request=self.cpu_request,
                cpu_limit=self.cpu_limit,
                concurrency=self.concurrency,
                queue_capacity=self.queue_capacity,
                launch=tuple(
                    LaunchStage(name, Exponential(ms * MS) if self.random_launch else Constant(ms * MS))
                    for name, ms in zip(self.stage_names(), self.launch_ms, strict=True)
                ),
                termination_grace=self.grace_ms * MS,
                memory_request=128 * MI if self.memory_mi is not None else None,
                memory_limit=self.memory_mi[2] * MI if self.memory_mi and self.memory_mi[2] else None,
                memory=None
                if self.memory_mi is None
                else MemorySpec(
                    Constant(self.memory_mi[0] * MI), Constant(self.memory_mi[1] * MI), self.memory_mi[3] * MI
                ),
            ),
            initial_replicas=self.initial_replicas,
            initial_ready=self.initial_ready,
            routing=RoutingSpec(policy=self.policy, choices=self.choices, buffer_capacity=self.buffer_capacity),
            metrics=MetricsSpec(MetricsSource.TICKS, interval=2 * SECOND, first_after=1 * SECOND, lag=LAG),
        )


@st.composite
def configs(draw: st.DrawFn) -> Config:
    cpu_request = draw(st.sampled_from([250, 500, 1000, 2000]))
    return Config(
        seed=draw(st.integers(0, 2**32 - 1)),
        initial_replicas=draw(st.integers(0, 4)),
        initial_ready=draw(st.booleans()),
        launch_ms=tuple(draw(st.lists(st.integers(0, 3000), max_size=2))),
        random_launch=draw(st.booleans()),
        scale_events=tuple(draw(st.lists(st.tuples(st.integers(1, 19_999), st.integers(0, 4)), max_size=5))),
        rate=draw(st.floats(0.5, 40)),
        cpu_ms=draw(st.integers(1, 300)),
        random_cpu=draw(st.booleans()),
        io_ms=draw(st.one_of(st.none(), st.integers(0, 200))),
        random_io=draw(st.booleans()),
        timeout_ms=draw(st.one_of(st.none(), st.integers(100, 5000))),
        grace_ms=draw(st.integers(0, 3000)),
        buffer_capacity=draw(st.integers(0, 20)),
        concurrency=draw(st.one_of(st.none(), st.integers(1, 3))),
        queue_capacity=draw(st.one_of(st.none(), st.integers(0, 5))),
        policy=draw(st.sampled_from(list(RoutingPolicy))),
        choices=draw(st.integers(1, 4)),
        cpu_request=cpu_request,
        cpu_limit=draw(st.one_of(st.none(), st.sampled_from([cpu_request, 2 * cpu_request]))),
        record_ms=draw(st.integers(500, 7000)),
        pauses_ms=tuple(sorted(set(draw(st.lists(st.integers(2, 19_999), min_size=1, max_size=6))))),
        memory_mi=draw(
            st.one_of(
                st.none(),
                st.tuples(
                    st.integers(10, 400),
                    st.integers(0, 100),
                    st.one_of(st.none(), st.integers(100, 800)),
                    st.integers(200, 2000),
                ),
            )
        ),
        named_stages=draw(st.booleans()),
    )


class RecordedDraws:
    """An IO-time distribution (constant or exponential) that keeps every value it hands out, in order.

    The model draws IO times from one stream, one value per request as its CPU part ends, so the
    n-th IO start gets the n-th value (rounded to whole ns, as every duration is).
    """

    def __init__(self, mean_ns: float, random: bool) -> None:
        self.inner = Exponential(mean_ns) if random else Constant(mean_ns)
        self.values: list[int] = []

    def batch(self, rng: np.random.Generator, size: int) -> np.ndarray:
        values = self.inner.batch(rng, size)
        self.values.extend(np.rint(values).astype(np.int64).tolist())
        return values

    def mean(self) -> float:
        return self.inner.mean()


class WorkLog:
    """Each request's CPU work as the CPU admits it, and its IO time as its IO starts."""

    def __init__(self) -> None:
        self.cpu: dict[Any, int] = {}
        self.io: dict[Any, int] = {}
        self.io_draws: RecordedDraws | None = None

    @contextmanager
    def recording(self, io_draws: RecordedDraws | None) -> Iterator[None]:
        self.io_draws = io_draws
        admit = ProcessorSharingCPU.admit
        cpu_done = RequestsProcessing._cpu_done
        log = self

        def logged_admit(cpu: ProcessorSharingCPU[Any], job: Any, work_ns: int, priority: int = 0) -> None:
            log.cpu[job] = work_ns
            admit(cpu, job, work_ns, priority)

        def logged_cpu_done(processing: RequestsProcessing, request: Request) -> None:
            cpu_done(processing, request)  # draws the IO time (a whole batch at first)
            if log.io_draws is not None:
                log.io[request] = log.io_draws.values[len(log.io)]

        with (
            patch.object(ProcessorSharingCPU, "admit", logged_admit),
            patch.object(RequestsProcessing, "_cpu_done", logged_cpu_done),
        ):
            yield


class Tracker:
    """Follows every request and replica through the movements, independently of the counters."""

    def __init__(self, model: ClusterModel, config: Config, work: WorkLog) -> None:
        self.model = model
        self.config = config
        self.work = work
        self.arrived: dict[Request, None] = {}
        self.completed: set[Request] = set()
        self.failed: set[Request] = set()
        # A request whose client gave up while its replica worked on it fails as a new entity of the
        # same id, and the attempt itself stays on the replica, abandoned, until it is done.
        self.origin: dict[int, Request] = {}
        self.abandoned: set[Request] = set()
        self.replicas: dict[Replica, None] = {}
        self.problems: list[str] = []
        self.speed = min(1.0, model.spec.replica.cpu_capacity / 1000)  # a request gets at most one core
        self.timeout = None if config.timeout_ms is None else config.timeout_ms * MS

    def on_movement(self, movement: Movement, entity: Entity) -> None:
        model = self.model
        if movement.kind == "arrive_at_routing":
            self.arrived[entity] = None  # type: ignore[index]
            self.origin[entity.id] = entity  # type: ignore[assignment]
        elif movement.from_stock is model.clients.gave_up:
            self.abandoned.add(self.origin[entity.id])
            self.failed.add(self.origin[entity.id])
        elif movement.kind in ("begin_launch", "start_initial_replica"):
            self.replicas[entity] = None  # type: ignore[index]
        elif movement.to_stock is model.requests_complete and entity not in self.abandoned:
            assert isinstance(entity, Request)
            if entity in self.completed or entity in self.failed:
                self.problems.append(f"{entity} finished twice")
            self.completed.add(entity)
            latency = movement.occurs_at - entity.arrived_at
            fastest = self.work.cpu[entity] / self.speed + self.work.io.get(entity, 0)
            if latency < fastest - 1:
                self.problems.append(f"{entity} completed in {latency} ns, faster than {fastest}")
            if self.timeout is not None and latency > self.timeout:
                self.problems.append(f"{entity} completed in {latency} ns, after its timeout {self.timeout}")
        elif movement.to_stock is model.requests_failed and entity not in self.abandoned:
            assert isinstance(entity, Request)
            if entity in self.completed or entity in self.failed:
                self.problems.append(f"{entity} finished twice")
            self.failed.add(entity)
        self.check_counts()

    def check_counts(self) -> None:
        """(a) and (b) by counts, after every movement."""
        model = self.model
        held = model.requests_routing.count() + model.requests_buffered.count()
        held += sum(replica.processing.count() for replica in self.replicas)
        held -= sum(1 for request in self.abandoned if request.stage != DONE)  # on a replica, but no one waits
        finished = model.requests_complete.count() + model.requests_failed.count()
        if model.traffic_source.emitted != len(self.arrived) or held + finished != len(self.arrived):
            self.problems.append(f"{len(self.arrived)} arrived but {held} held and {finished} finished")
        if finished != len(self.completed) + len(self.failed):
            self.problems.append(f"{finished} finished but {len(self.completed) + len(self.failed)} seen to finish")
        live = model.replicas_launching.count() + model.replicas_active.count() + model.replicas_terminating.count()
        live += model.replicas_restarting.count()
        if live + model.replicas_terminated.count() != len(self.replicas):
            self.problems.append(f"{len(self.replicas)} replicas made but {live} live, the rest not terminated")

    def on_ignored(self, ignored: IgnoredMovement) -> None:
        pass


def check_requests(model: ClusterModel, tracker: Tracker) -> None:
    """(a) conservation of requests, and each one in flight in exactly one stock."""
    arrived = tracker.arrived
    assert model.requests_arrived == len(arrived)
    assert model.requests_complete.count() == len(tracker.completed)
    assert model.requests_failed.count() == len(tracker.failed)
    assert sum(model.requests_failed.reasons.values()) == len(tracker.failed)
    assert "unknown" not in model.requests_failed.reasons  # every failure says why
    in_flight = set(arrived) - tracker.completed - tracker.failed
    assert len(arrived) == len(tracker.completed) + len(tracker.failed) + len(in_flight)
    assert model.requests_in_flight == len(in_flight)
    # Routing holds a request only during the instant it arrives; a pause comes between instants.
    assert model.requests_routing.count() == 0
    where: dict[Request, list[str]] = {}
    stocks: list[tuple[str, Any]] = [("buffer", model.requests_buffered)]
    stocks += [(replica.name, replica.processing) for replica in tracker.replicas]
    for name, stock in stocks:
        for request in stock:
            if request not in tracker.abandoned:
                where.setdefault(request, []).append(name)
    for request, names in where.items():
        assert request in in_flight, (request, names, "finished but still held")
        assert len(names) == 1, (request, names)
    assert set(where) == in_flight


def check_replicas(model: ClusterModel, tracker: Tracker) -> None:
    """(b) conservation of replicas, each live one in exactly one stock matching its state."""
    launching, active, terminating = model.replicas_launching, model.replicas_active, model.replicas_terminating
    restarting = model.replicas_restarting
    terminated = model.replicas_terminated.count()
    made = model.replica_source.emitted
    assert made == len(tracker.replicas)
    assert made == launching.count() + active.count() + restarting.count() + terminating.count() + terminated
    assert len(model.replicas) + terminated == made
    stock_of = {
        ReplicaState.LAUNCHING: launching,
        ReplicaState.ACTIVE: active,
        ReplicaState.RESTARTING: restarting,
        ReplicaState.TERMINATING: terminating,
    }
    for replica in tracker.replicas:
        holders = [stock for stock in stock_of.values() if replica in stock]
        if replica.state is ReplicaState.TERMINATED:
            assert holders == []
            assert replica.id not in model.replicas
            assert replica.terminated_at is not None
        else:
            assert holders == [stock_of[replica.state]], (replica, replica.state, [h.name for h in holders])
            assert model.replicas[replica.id] is replica


def check_cpu(model: ClusterModel, tracker: Tracker, now: int) -> None:
    """(d) busy core-time within cores x time held, per replica, and within the nodes' allocatable core-time."""
    for replica in tracker.replicas:
        busy = replica.processing.cpu.busy_core_ns()
        assert busy >= 0
        if replica.activated_at is None:
            assert busy == 0
            continue
        end = replica.terminated_at if replica.terminated_at is not None else now
        assert busy <= replica.processing.cpu.cores * (end - replica.activated_at) * (1 + 1e-12) + 1e-6
    busy, allocatable = model.node_cpu_core_ns()
    assert busy == model.busy_core_ns()  # without a cluster, every pod's node is its own
    assert busy <= allocatable * (1 + 1e-12) + 1e-6


def check_memory(model: ClusterModel, tracker: Tracker, config: Config) -> None:
    """A running container's working set is its baseline plus what its requests hold, never above
    its limit; a container not running holds nothing; each node holds the sum of its pods'. A
    container runs from its start: warming up (launching or restarting) it holds no requests."""
    if config.memory_mi is None:
        return
    baseline, per_request, limit, node_mi = config.memory_mi
    for replica in tracker.replicas:
        memory = replica.memory
        assert memory is not None
        if memory.running:
            assert replica.state is not ReplicaState.TERMINATED
            if replica.state in (ReplicaState.LAUNCHING, ReplicaState.RESTARTING):
                assert config.named_stages and replica.processing.count() == 0, replica.state
            assert memory.working_set == (baseline + per_request * replica.processing.count()) * MI
            assert limit is None or memory.working_set <= limit * MI
        else:
            assert memory.working_set == 0
        node = memory.node
        if node is not None:
            assert node.used == sum(pod.working_set for pod in node.pods)
            assert node.used <= node.capacity or not any(pod.running for pod in node.pods)
    # Kills and restarts: every restart follows a kill; a kill either restarted or is still waiting.
    assert model.restarts <= model.oom_kills
    assert node_mi > 0


def check_samples(model: ClusterModel, delivered: list[tuple[int, Sample, ReplicaState]]) -> None:
    """Each sample reached the sink `lag` after its tick, for a replica not yet gone, with sane values."""
    capacity = model.spec.replica.cpu_capacity
    for at, sample, state in delivered:
        assert at == sample.at + LAG
        # A terminating pod still reports metrics; one already terminated has left the sink's view.
        assert state is not ReplicaState.TERMINATED
        assert sample.replica.terminated_at is None or sample.replica.terminated_at >= at
        assert sample.replica.activated_at is not None and sample.replica.activated_at < sample.at
        assert -1e-6 <= sample.cpu_millicores <= capacity * (1 + 1e-9)
        assert sample.concurrency >= 0
        assert sample.rps >= 0
        assert sample.in_flight >= 0


def build(config: Config) -> tuple[Environment, ClusterModel, Recorder, list[Sample]]:
    streams = RandomStreams(config.seed)
    env = Environment(halt_at=DURATION)
    arrivals = poisson_arrivals(config.rate, 0, DURATION, streams.generator("traffic"))
    model = ClusterModel(env, config.spec(), arrivals, streams)
    recorder = Recorder(env, model, config.record_ms * MS)
    samples: list[Sample] = []
    model.metrics_sink.subscribe(samples.append)
    for at_ms, desired in config.scale_events:
        env.call_at(at_ms * MS, lambda desired=desired: model.scale_to(desired))
    return env, model, recorder, samples


def fingerprint(env: Environment, model: ClusterModel, recorder: Recorder, samples: list[Sample]) -> tuple[Any, ...]:
    return (
        model.requests_arrived,
        model.requests_complete.count(),
        dict(model.requests_failed.reasons),
        model.requests_in_flight,
        list(model.requests_complete.latency.buckets()),
        model.requests_complete.latency.total,
        model.replica_source.emitted,
        model.replicas_terminated.count(),
        env.movements_completed,
        dict(env.ignored_counts),
        [(s.replica_id, s.at, s.cpu_millicores, s.concurrency, s.rps) for s in samples],
        recorder.rows(),
    )


@settings(max_examples=300, deadline=None)
@given(config=configs())
def test_cluster_invariants_hold_at_every_step(config: Config) -> None:
    work = WorkLog()
    with work.recording(None):
        env, model, recorder, samples = build(config)
        io_draws = model.spec.requests.io_time
        work.io_draws = io_draws if isinstance(io_draws, RecordedDraws) else None
        run_checked(config, env, model, recorder, samples, work)
    # (e) once more with the same seed, without pauses, observers or logs: the very same run.
    first = fingerprint(env, model, recorder, samples)
    env2, model2, recorder2, samples2 = build(config)
    env2.run()
    recorder2.record()
    assert fingerprint(env2, model2, recorder2, samples2) == first


def run_checked(
    config: Config, env: Environment, model: ClusterModel, recorder: Recorder, samples: list[Sample], work: WorkLog
) -> None:
    tracker = Tracker(model, config, work)
    env.observe(tracker)
    delivered: list[tuple[int, Sample, ReplicaState]] = []
    model.metrics_sink.subscribe(lambda sample: delivered.append((env.now(), sample, sample.replica.state)))
    for pause_ms in config.pauses_ms:
        env.run(until=pause_ms * MS)
        assert env.now() == pause_ms * MS
        check_requests(model, tracker)
        check_replicas(model, tracker)
        check_cpu(model, tracker, env.now())
        check_memory(model, tracker, config)
        assert tracker.problems == []
    env.run()
    recorder.record()
    check_requests(model, tracker)
    check_replicas(model, tracker)
    check_cpu(model, tracker, env.now())
    check_memory(model, tracker, config)
    assert tracker.problems == []  # (c)
    check_samples(model, delivered)
    # The ReplicaSet reconciled: every scale event ran before the halt.
    # Calls at the same instant run in the order they were made: a stable sort by time.
    by_time = [desired for _, desired in sorted(config.scale_events, key=lambda event: event[0])]
    last = by_time[-1] if by_time else config.initial_replicas
    assert model.desired == last
    running = model.replicas_launching.count() + model.replicas_active.count() + model.replicas_restarting.count()
    assert running == last
    # (d) the recorder's utilisation columns: the nodes never give more than they have; a pod may use
    # more than it requested (up to its node), never less than nothing.
    for value in recorder.columns["node_cpu_utilisation"]:
        assert value is None or 0 <= value <= 1 + 1e-9, value
    for value in recorder.columns["cpu_request_utilisation"]:
        assert value is None or value >= 0, value
    # The recorder's rows add up to the model's counts.
    assert sum(recorder.columns["requests_arrived"]) == model.requests_arrived
    assert sum(recorder.columns["requests_completed"]) == model.requests_complete.count()
    assert sum(recorder.columns["requests_failed"]) == model.requests_failed.count()
    # Every completed request had its work logged (so (c) was checked for each one).
    assert all(request in work.cpu for request in tracker.completed)
