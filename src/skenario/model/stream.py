"""A stream's consumers: messages wait in a topic's partitions until a consumer pod pulls them.

A consumer group (a Kafka consumer group, a Flink job's source tasks) does not get requests pushed at
it: each message lands in a partition of the topic and waits there, and the pod that owns the partition
takes the next one when it has room (`in_flight` messages at once), so a backlog (the consumer lag)
builds whenever the pods cannot keep up and drains at their full speed afterwards. That catch-up is CPU
the autoscaler sees.

Partitions go to the ready consumers as Kafka's `RangeAssignor` gives them (`assign` in
clients/consumer/RangeAssignor.java): consumers in order, each a contiguous range of P // n partitions
and the first P % n one more, so with more consumers than partitions some stay idle. With no partitions
named, every consumer pulls from one shared queue (an even spread, the best case). Messages go to
partitions in turn (a producer with no keys).

A change in the number of ready consumers stops them all for a pause drawn from `pause`: a consumer
group's rebalance (every member revokes its partitions and waits for the new assignment) or a Flink
job's restart from its last checkpoint in reactive mode. A change during a pause starts it again; the
consumers ready as the run starts are the group it starts with, without a pause. Work
a pod holds when the pause starts finishes (what a restart would redo is not modelled), and nothing is
pulled until the pause ends; then the partitions are assigned afresh.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from sys import maxsize
from typing import Any

from skenario.core.environment import Environment
from skenario.core.stocks import SinkStock
from skenario.model.replicas import Replica
from skenario.model.replicaset import FIRST_INSTANT
from skenario.model.requests import BUFFERED, ROUTING, Request, RequestsBuffered


def range_assignment(partitions: int, consumers: int) -> list[range]:
    """The partitions each consumer gets, in consumer order: Kafka's `RangeAssignor` for one topic."""
    share, extra = divmod(partitions, consumers)
    ranges = []
    start = 0
    for index in range(consumers):
        length = share + (1 if index < extra else 0)
        ranges.append(range(start, start + length))
        start += length
    return ranges


class StreamBacklog(RequestsBuffered):
    """A topic's unconsumed messages, pulled by the consumer pods into their free slots.

    It is the model's buffered stock (every message arrives here), so the series and the autoscalers'
    `buffered_requests` see the backlog; `lag()` adds the messages consumers hold and have not finished,
    as a consumer group's lag counts what is past its committed offset.
    """

    __slots__ = (
        "_assigned",
        "_consumers",
        "_env",
        "_generation",
        "_done",
        "_held",
        "_idle",
        "_index",
        "_owned",
        "_pause",
        "_queues",
        "_sent",
        "failed",
        "in_flight",
        "on_job_done",
        "partitions",
        "per_job",
        "paused_until",
        "rebalances",
        "slots",
        "taken",
    )

    def __init__(
        self,
        env: Environment,
        failed: SinkStock[Request],  # RequestsFailed, or the clients when they retry
        *,
        partitions: int | None,
        in_flight: int,
        pause: Callable[[], int],
    ) -> None:
        super().__init__(env, maxsize)
        self.in_path = True  # every message goes to the topic first
        if partitions is not None and partitions < 1:
            raise ValueError(f"partitions must be >= 1, got {partitions}")
        if in_flight < 1:
            raise ValueError(f"in_flight must be >= 1, got {in_flight}")
        self.name = "StreamBacklog"
        self._env = env
        self.failed: Any = failed
        self.partitions = partitions
        self.in_flight = in_flight
        self._pause = pause
        self._queues: list[deque[Request]] = [deque() for _ in range(partitions or 1)]
        self._consumers: list[Replica] = []  # ready consumers, in the order partitions are assigned
        self._owned: dict[Replica, list[deque[Request]]] = {}  # each consumer's partitions (once assigned)
        self._assigned: list[Replica | None] = [None] * len(self._queues)  # each partition's consumer
        self.slots: dict[Replica, int] = {}  # messages each consumer holds and has not finished
        self._sent: dict[Request, Replica] = {}
        self._index = {id(queue): p for p, queue in enumerate(self._queues)}  # each partition's number
        self._held: dict[Request, int] = {}  # the partition of each message a consumer holds
        self._idle: dict[Replica, None] = {}  # one shared queue: consumers with a free slot and nothing to take
        self._generation = 0  # of the group: a pause's end from an earlier change is ignored
        self.paused_until: int | None = None  # while consumers wait for a rebalance or restart
        self.rebalances = 0
        self.taken = 0
        # Consumers that are Jobs (KEDA's ScaledJob): each finishes after `per_job` messages, then `on_job_done`.
        self.per_job: int | None = None
        self.on_job_done: Callable[[Replica], object] | None = None
        self._done: dict[Replica, int] = {}  # messages each such consumer has finished

    def add(self, entity: Request) -> None:
        super().add(entity)
        partition = self.taken % len(self._queues)
        self.taken += 1
        self._queues[partition].append(entity)
        if self.paused_until is not None:
            return
        if self.partitions is not None:
            consumer = self._assigned[partition]
            if consumer is not None and self.slots[consumer] < self.in_flight:
                self._pull(consumer)
            return
        idle = self._idle
        while idle:
            consumer = next(iter(idle))
            del idle[consumer]
            if self.slots.get(consumer, self.in_flight) < self.in_flight:
                self._pull(consumer)
                if self.slots[consumer] < self.in_flight:  # room for more: it stays idle
                    idle[consumer] = None
                return

    def lag(self) -> int:
        """Messages not yet consumed: waiting in the partitions or held by a consumer."""
        return len(self._items) + len(self._sent)

    def partition_lags(self) -> list[int] | None:
        """Each partition's lag (waiting there, or taken from it and not finished); None without partitions.
        A count over the partitions' queues, for a reader now and then (KEDA's Kafka scaler)."""
        if self.partitions is None:
            return None
        lags = [sum(1 for r in queue if r.stage == BUFFERED and r.failure is None) for queue in self._queues]
        for partition in self._held.values():
            lags[partition] += 1
        return lags

    def pod_ready(self, replica: Replica) -> None:
        """A consumer joins the group: everyone pauses and the partitions are assigned again."""
        if replica not in self.slots:
            self.slots[replica] = 0
            self._consumers.append(replica)
            self._consumers.sort(key=_member_id)
            self._rebalance()

    def pod_gone(self, replica: Replica) -> None:
        """A consumer leaves the group (its pod stops being ready): the same."""
        if replica in self.slots:
            del self.slots[replica]
            self._consumers.remove(replica)
            self._rebalance()

    def left(self, request: Request) -> None:
        """A message left its consumer (done, or failed with its pod): its slot frees for the next, or, for a
        consumer that is a Job, it completes once it has finished its share of messages."""
        replica = self._sent.pop(request, None)
        self._held.pop(request, None)
        if replica is not None and replica in self.slots:
            self.slots[replica] -= 1
            if self.per_job is not None and request.failure is None:
                done = self._done[replica] = self._done.get(replica, 0) + 1
                if done >= self.per_job:
                    del self._done[replica]
                    self.pod_gone(replica)  # it takes nothing more
                    if self.on_job_done is not None:
                        self.on_job_done(replica)
                    return
            if self.paused_until is None:
                self._pull(replica)

    def _rebalance(self) -> None:
        self._generation += 1
        self.rebalances += 1
        self._owned = {}
        self._assigned = [None] * len(self._queues)
        self._idle = {}
        # The consumers ready as the run starts form the group the run starts with: no pause.
        pause = self._pause() if self._env.now() > FIRST_INSTANT else 0
        if pause <= 0:
            self.paused_until = None
            self._resume()
            return
        generation = self._generation
        self.paused_until = self._env.now() + pause
        self._env.call_later(pause, lambda: self._end_pause(generation))

    def _end_pause(self, generation: int) -> None:
        if generation == self._generation:
            self.paused_until = None
            self._resume()

    def _resume(self) -> None:
        """Assign the partitions to the consumers there are now, and fill their free slots."""
        consumers = self._consumers
        if not consumers:
            return
        queues = self._queues
        if self.partitions is None:  # one shared queue: every consumer pulls from it
            self._owned = {consumer: queues for consumer in consumers}
        else:
            for consumer, owned in zip(consumers, range_assignment(len(queues), len(consumers)), strict=True):
                self._owned[consumer] = [queues[p] for p in owned]
                for p in owned:
                    self._assigned[p] = consumer
        for consumer in consumers:
            while self.slots[consumer] < self.in_flight and self._pull(consumer):
                pass

    def _pull(self, consumer: Replica) -> bool:
        """The consumer takes the oldest message of its partitions, if one waits; whether it took one."""
        owned = self._owned.get(consumer)
        if not owned:
            return False
        oldest: deque[Request] | None = None
        for queue in owned:
            while queue and (queue[0].stage != BUFFERED or queue[0].failure is not None):
                queue.popleft()  # gone already
            if queue and (oldest is None or queue[0].arrived_at < oldest[0].arrived_at):
                oldest = queue
        if oldest is None:
            if self.partitions is None:
                self._idle[consumer] = None
            return False
        request = oldest.popleft()
        processing = consumer.processing
        request.stage = ROUTING
        env = self._env
        if not processing.has_room():
            request.failure = processing.overflow
            env.schedule("request_failed", env.now(), self, self.failed, request)
            return True
        self.slots[consumer] += 1
        self._sent[request] = consumer
        if self.partitions is not None:
            self._held[request] = self._index[id(oldest)]
        request.processing = processing
        env.schedule("send_to_replica", env.now(), self, processing, request)
        return True


def _member_id(replica: Replica) -> int:
    """The order partitions are assigned in: consumers sorted by member id (here, the pod's)."""
    return replica.id
