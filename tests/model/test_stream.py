"""A stream's consumers: lag that builds and drains at capacity, rebalance pauses, and partitions spread as
Kafka's RangeAssignor spreads them. Timelines hand-computed from arrival rates and per-pod capacity."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.core.environment import Environment
from skenario.core.random import Constant, Exponential, RandomStreams
from skenario.core.time import MILLISECOND, SECOND
from skenario.model.cluster import ClusterModel
from skenario.model.config import ClusterSpec, LaunchStage, ReplicaSpec, RequestSpec, StreamSpec
from skenario.model.stream import range_assignment

MS = MILLISECOND


def rate_arrivals(*phases: tuple[float, int, int]) -> Iterator[int]:
    """Evenly spaced arrivals: (per second, from ns, to ns) for each phase in turn."""
    for rate, start, stop in phases:
        gap = SECOND / rate
        k = 1
        while (at := start + round(k * gap)) < stop:
            yield at
            k += 1


def stream_model(
    arrivals: Iterator[int],
    *,
    replicas: int,
    halt: int,
    partitions: int | None = None,
    pause: int = 0,
    cpu_time: int = 10 * MS,
    in_flight: int = 1,
) -> tuple[Environment, ClusterModel]:
    """Consumers of one core each (1000m request and limit), `cpu_time` per message: 100 messages/s
    each at 10 ms; a new pod is ready 1 s after it is made."""
    env = Environment(halt_at=halt)
    spec = ClusterSpec(
        requests=RequestSpec(cpu_time=Constant(cpu_time), timeout=None),
        replica=ReplicaSpec(
            cpu_request=1000, cpu_limit=1000, launch=(LaunchStage("containerStart", Constant(SECOND)),)
        ),
        initial_replicas=replicas,
        stream=StreamSpec(partitions, in_flight, Constant(pause)),
    )
    return env, ClusterModel(env, spec, arrivals, RandomStreams(1))


def lag_at(env: Environment, model: ClusterModel, *times: int) -> Callable[[], list[int]]:
    """The stream's lag read at each of `times` while the run goes."""
    seen: list[int] = []
    stream = model.stream
    assert stream is not None
    for at in times:
        env.call_at(at, lambda: seen.append(stream.lag()))
    return lambda: seen


def test_range_assignment_follows_kafkas_range_assignor() -> None:
    """RangeAssignor's javadoc: 3 partitions over C0 and C1 give C0 [p0, p1] and C1 [p2]; 16 over 5
    give 4, 3, 3, 3, 3; more consumers than partitions leave the last idle."""
    assert range_assignment(3, 2) == [range(0, 2), range(2, 3)]
    assert [len(r) for r in range_assignment(16, 5)] == [4, 3, 3, 3, 3]
    assert range_assignment(2, 3) == [range(0, 1), range(1, 2), range(2, 2)]


def test_lag_builds_above_capacity_and_drains_at_the_surplus() -> None:
    """Two consumers take 200/s. 300/s for 60 s leaves 18 000 - 12 000 = 6 000 behind; then 100/s
    drains it at 200 - 100 = 100/s, so it is gone at 120 s."""
    arrivals = rate_arrivals((300, 0, 60 * SECOND), (100, 60 * SECOND, 200 * SECOND))
    env, model = stream_model(arrivals, replicas=2, halt=200 * SECOND)
    seen = lag_at(env, model, 30 * SECOND, 60 * SECOND, 90 * SECOND, 119 * SECOND, 121 * SECOND)
    env.run()
    at_30, at_60, at_90, at_119, at_121 = seen()
    assert abs(at_30 - 3_000) <= 3
    assert abs(at_60 - 6_000) <= 3
    assert abs(at_90 - 3_000) <= 3  # drained 100/s for 30 s
    assert 90 <= at_119 <= 103
    assert at_121 <= 2  # only what the two consumers hold


def test_catch_up_runs_the_consumers_at_full_cpu() -> None:
    """While a backlog waits, each consumer's core is busy all the time: from 10 s to 60 s at 300/s the two
    cores do 2 × 50 core-seconds, whatever the arrival rate above 200/s."""
    arrivals = rate_arrivals((300, 0, 100 * SECOND))
    env, model = stream_model(arrivals, replicas=2, halt=100 * SECOND)
    busy: list[float] = []
    env.call_at(10 * SECOND, lambda: busy.append(model.busy_core_ns()))
    env.call_at(60 * SECOND, lambda: busy.append(model.busy_core_ns()))
    env.run()
    assert abs((busy[1] - busy[0]) - 100 * SECOND) <= 2 * 10 * MS  # up to one message each either side


def test_a_new_consumer_pauses_the_group_and_the_backlog_drains_after() -> None:
    """150/s on two consumers (200/s) keeps no lag. A third pod made at 30 s is ready at 31 s: all pause
    10 s, so 1 500 messages wait at 41 s; three consumers (300/s) then drain 150/s, empty by 51 s."""
    arrivals = rate_arrivals((150, 0, 80 * SECOND))
    env, model = stream_model(arrivals, replicas=2, halt=80 * SECOND, pause=10 * SECOND)
    env.call_at(30 * SECOND, lambda: model.scale_to(3))
    seen = lag_at(env, model, 30 * SECOND, 41 * SECOND - 1, 52 * SECOND)
    env.run()
    before, paused, after = seen()
    assert before <= 2
    assert abs(paused - 1_500) <= 3
    assert after <= 3
    assert model.stream is not None and model.stream.rebalances == 3  # two initial joins, then the third pod


def test_a_change_during_a_pause_starts_it_again() -> None:
    """Pods made at 30 s and 35 s are ready at 31 s and 36 s: the pause runs to 36 + 10 = 46 s, so at 150/s
    15 s of arrivals (2 250) wait at 46 s; four consumers drain them at 400 - 150 = 250/s, in 9 s."""
    arrivals = rate_arrivals((150, 0, 80 * SECOND))
    env, model = stream_model(arrivals, replicas=2, halt=80 * SECOND, pause=10 * SECOND)
    env.call_at(30 * SECOND, lambda: model.scale_to(3))
    env.call_at(35 * SECOND, lambda: model.scale_to(4))
    seen = lag_at(env, model, 46 * SECOND - 1, 54 * SECOND, 56 * SECOND)
    env.run()
    paused, before_end, after = seen()
    assert abs(paused - 2_250) <= 3
    assert abs(before_end - 250) <= 4
    assert after <= 4


def test_a_consumer_that_leaves_pauses_the_group_too() -> None:
    """Three consumers at 150/s keep up; scaled to two at 20 s, the one that stops leaves the group at once:
    a 5-s pause leaves 750 waiting, drained by the two at 50/s in 15 s."""
    arrivals = rate_arrivals((150, 0, 60 * SECOND))
    env, model = stream_model(arrivals, replicas=3, halt=60 * SECOND, pause=5 * SECOND)
    env.call_at(20 * SECOND, lambda: model.scale_to(2))
    seen = lag_at(env, model, 25 * SECOND - 1, 41 * SECOND)
    env.run()
    paused, after = seen()
    assert abs(paused - 750) <= 4
    assert after <= 3


def test_more_partitions_on_one_consumer_make_it_the_bottleneck() -> None:
    """Three partitions over two consumers: the first owns two (120 of 180 messages/s) but takes only
    100/s, so its lag grows 20/s while the second idles; one shared queue keeps up with the same load."""
    arrivals = rate_arrivals((180, 0, 100 * SECOND))
    env, model = stream_model(arrivals, replicas=2, halt=100 * SECOND, partitions=3)
    seen = lag_at(env, model, 50 * SECOND, 100 * SECOND - 1)
    env.run()
    at_50, at_100 = seen()
    assert abs(at_50 - 1_000) <= 4
    assert abs(at_100 - 2_000) <= 4

    env, model = stream_model(rate_arrivals((180, 0, 100 * SECOND)), replicas=2, halt=100 * SECOND)
    seen = lag_at(env, model, 50 * SECOND, 100 * SECOND - 1)
    env.run()
    assert max(seen()) <= 2


def test_more_consumers_than_partitions_leave_the_extra_idle() -> None:
    """Two partitions and three consumers: the third owns none and takes no message."""
    arrivals = rate_arrivals((100, 0, 30 * SECOND))
    env, model = stream_model(arrivals, replicas=3, halt=30 * SECOND, partitions=2)
    env.run()
    served = sorted(replica.processing.arrived for replica in model.replicas.values())
    assert served[0] == 0
    assert abs(served[1] - served[2]) <= 1


@settings(max_examples=30, deadline=None)
@given(
    rate=st.floats(20, 400),
    replicas=st.integers(1, 4),
    partitions=st.one_of(st.none(), st.integers(1, 6)),
    in_flight=st.integers(1, 3),
    pause=st.integers(0, 5 * SECOND),
    scale_at=st.integers(1 * SECOND, 25 * SECOND),
    scale_to=st.integers(0, 5),
    seed=st.integers(0, 2**16),
)
def test_every_message_is_consumed_once_or_still_counted_in_the_lag(
    rate: float,
    replicas: int,
    partitions: int | None,
    in_flight: int,
    pause: int,
    scale_at: int,
    scale_to: int,
    seed: int,
) -> None:
    """Arrivals equal completed + failed + lag at the halt, and no consumer ever holds more than
    `in_flight` messages pulled from the topic."""
    env = Environment(halt_at=30 * SECOND)
    spec = ClusterSpec(
        requests=RequestSpec(cpu_time=Exponential(8 * MS), timeout=None),
        replica=ReplicaSpec(cpu_request=500, cpu_limit=500, launch=(LaunchStage("containerStart", Constant(SECOND)),)),
        initial_replicas=replicas,
        stream=StreamSpec(partitions, in_flight, Exponential(pause) if pause else Constant(0)),
    )
    model = ClusterModel(env, spec, rate_arrivals((rate, 0, 30 * SECOND)), RandomStreams(seed))
    stream = model.stream
    assert stream is not None
    most: list[int] = []

    def watch() -> None:
        most.append(max(stream.slots.values(), default=0))
        if env.now() + SECOND < env.halt_at:
            env.call_later(SECOND, watch)

    env.call_at(SECOND // 2, watch)
    env.call_at(scale_at, lambda: model.scale_to(scale_to))
    env.run()
    assert model.requests_arrived == model.requests_complete.count() + model.requests_failed.count() + stream.lag()
    assert max(most) <= in_flight
