"""Kueue's admission, restated from kueue's pkg/scheduler TestSchedule (one scheduling cycle per case).

Upstream's cases share one set of ResourceFlavors, ClusterQueues and LocalQueues (restated below as
skenario's dataclasses; the ClusterQueue with a nonexistent flavor is left out), and some add their
own. Each case queues some workloads, runs one cycle and expects which workloads hold quota with
which flavors (`wantAssignments`), which are still queued (`wantLeft`: under StrictFIFO a workload
that does not fit stays at the head; one that fitted but lost its quota to an earlier workload of
the same cycle stays too) and which were set aside (`wantInadmissibleLeft`, under BestEffortFIFO).

Cases of one head, or of heads that cannot affect each other, are worked at the level of the pure
functions (`QuotaBook`, `assign_flavors`). Cases about the order within a cycle run on a replay:
workloads already admitted upstream arrive first, one at a time, and the cycle's heads all arrive
together at `HEADS_AT`; the state is read right after that instant's first cycle. A pod set of
`n` pods of `r` each is one pod asking `n * r`, since the quota counts only the sum. Upstream's
"N more needed" is in whole CPUs; skenario's messages count millicores.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pytest

from skenario.core.time import SECOND
from skenario.scheduling.objects import NodeSpec, PodSpec
from skenario.scheduling.queues.kueue import QUEUE_LABEL
from skenario.scheduling.queues.kueue_admission import QuotaBook, Workload, assign_flavors
from skenario.scheduling.queues.kueue_config import (
    ClusterQueue,
    Flavor,
    KueueConfig,
    Preemption,
    Quota,
    ResourceGroup,
)
from skenario.scheduling.replay import BatchReplay
from skenario.scheduling.traces import TracePod

CPU = 1000  # millicores
GIB = 1024**3
GPU = "example.com/gpu"


def cpus(nominal: int, borrowing: int | None = None, lending: int | None = None) -> Quota:
    return Quota(
        nominal * CPU, None if borrowing is None else borrowing * CPU, None if lending is None else lending * CPU
    )


def cpu_group(*flavors: tuple[str, Quota]) -> ResourceGroup:
    return ResourceGroup(("cpu",), tuple((name, {"cpu": quota}) for name, quota in flavors))


# TestSchedule's shared objects.
FLAVORS = {name: Flavor(name) for name in ("default", "on-demand", "spot", "model-a")}
SALES = ClusterQueue("sales", (cpu_group(("default", cpus(50, 0))),), strategy="StrictFIFO")
ENG_ALPHA = ClusterQueue(
    "eng-alpha",
    (cpu_group(("on-demand", cpus(50, 50)), ("spot", cpus(100, 0))),),
    cohort="eng",
    strategy="StrictFIFO",
)
ENG_BETA = ClusterQueue(
    "eng-beta",
    (
        cpu_group(("on-demand", cpus(50, 10)), ("spot", cpus(0, 100))),
        ResourceGroup((GPU,), (("model-a", {GPU: Quota(20, 0)}),)),
    ),
    cohort="eng",
    strategy="StrictFIFO",
    preemption=Preemption(reclaim_within_cohort="Any", within_cluster_queue="LowerPriority"),
)
LEND_A = ClusterQueue("lend-a", (cpu_group(("default", cpus(3, lending=2))),), cohort="lend")
LEND_B = ClusterQueue("lend-b", (cpu_group(("default", cpus(2, lending=2))),), cohort="lend")
LOCAL_QUEUES = {
    ("sales", "main"): "sales",
    ("eng-alpha", "main"): "eng-alpha",
    ("eng-beta", "main"): "eng-beta",
    ("lend", "lend-a-queue"): "lend-a",
    ("lend", "lend-b-queue"): "lend-b",
}

# Added by "no overadmission while borrowing".
ENG_GAMMA = ClusterQueue(
    "eng-gamma",
    (cpu_group(("on-demand", cpus(50, 10)), ("spot", cpus(0, 100))),),
    cohort="eng",
    preemption=Preemption(reclaim_within_cohort="Any", within_cluster_queue="LowerPriority"),
)


# Added by the "... borrow ... in the same cycle" cases: three like queues sharing r1 and r2 of one flavor.
def cq_of_co(name: str) -> ClusterQueue:
    group = ResourceGroup(("r1", "r2"), (("default", {"r1": Quota(10, 10), "r2": Quota(10, 10)}),))
    preemption = Preemption(reclaim_within_cohort="Any", within_cluster_queue="LowerPriority")
    return ClusterQueue(name, (group,), cohort="co", preemption=preemption)


CO = [cq_of_co(f"cq{k}") for k in (1, 2, 3)]


def config(*extra: ClusterQueue, local_queues: Mapping[tuple[str, str], str] | None = None) -> KueueConfig:
    queues = {q.name: q for q in (SALES, ENG_ALPHA, ENG_BETA, LEND_A, LEND_B, *extra)}
    return KueueConfig(FLAVORS, queues, {**LOCAL_QUEUES, **(local_queues or {})})


# -- one cycle of independent heads, on the pure functions -------------------------------------------


@dataclass(frozen=True)
class Head:
    """A workload at the head of its ClusterQueue, and what upstream expects of it in the cycle."""

    ref: str  # namespace/name, as upstream names it
    cluster_queue: str
    requests: Mapping[str, int]
    flavors: Mapping[str, str] | None = None  # admitted with these flavors; None: not admitted
    borrows: bool | None = None  # None: upstream does not say
    shortfalls: tuple[str, ...] = ()  # what the message of one not admitted must say


@pytest.mark.parametrize(
    ("usage", "heads"),
    [
        # Upstream: eng-alpha offers no flavor of example.com/gpu, so the workload gets none ("resource
        # example.com/gpu unavailable in ClusterQueue") and stays queued.
        pytest.param(
            {},
            [Head("eng-alpha/new", "eng-alpha", {GPU: 1}, shortfalls=(f"resource {GPU} unavailable in ClusterQueue",))],
            id="cannot borrow resource not listed in clusterQueue",
        ),
        # Upstream: eng-beta's 45 CPUs of on-demand leave eng-alpha 55 of the cohort's 100 there, short
        # of 60, so eng-alpha/new (no preemption policy) is admitted to the next flavor, spot.
        pytest.param(
            {"eng-beta": {("on-demand", "cpu"): 45 * CPU}},
            [Head("eng-alpha/new", "eng-alpha", {"cpu": 60 * CPU}, flavors={"cpu": "spot"})],
            id="not enough resources to borrow, fallback to next flavor; WhenCanPreempt: TryNextFlavor",
        ),
        # Upstream: eng-beta uses its 50 CPUs of on-demand and borrows 1 of spot. eng-alpha/can-reclaim (100)
        # fits neither flavor ("on-demand, 50 more needed", "spot, 1 more needed") and stays queued, while
        # eng-beta/needs-to-borrow (1) is admitted to on-demand, borrowing in the other flavor.
        pytest.param(
            {"eng-beta": {("on-demand", "cpu"): 50 * CPU, ("spot", "cpu"): 1 * CPU}},
            [
                Head(
                    "eng-alpha/can-reclaim",
                    "eng-alpha",
                    {"cpu": 100 * CPU},
                    shortfalls=("flavor on-demand, 50000 more needed", "flavor spot, 1000 more needed"),
                ),
                Head(
                    "eng-beta/needs-to-borrow", "eng-beta", {"cpu": 1 * CPU}, flavors={"cpu": "on-demand"}, borrows=True
                ),
            ],
            id="can borrow if needs reclaim from cohort in different flavor",
        ),
    ],
)
def test_one_cycle_of_independent_heads(usage: Mapping[str, Mapping[tuple[str, str], int]], heads: list[Head]) -> None:
    book = QuotaBook(config())
    for queue, amounts in usage.items():
        book.add(queue, amounts)
    # Every head gets its flavors from the same snapshot, as in one cycle; none of these changes another's.
    for head in heads:
        assignment = assign_flavors(book, Workload(head.ref, head.cluster_queue, 0, 0, head.requests))
        if head.flavors is not None:
            assert assignment.mode == "Fit", head.ref
            assert assignment.flavors == head.flavors, head.ref
            if head.borrows is not None:
                assert assignment.borrows is head.borrows, head.ref
        else:
            assert assignment.mode != "Fit", head.ref
            for words in head.shortfalls:
                assert words in assignment.message, head.ref


# -- one cycle of several heads, on a replay ---------------------------------------------------------

HEADS_AT = 100 * SECOND
NODES = [NodeSpec("n0", cpu=10_000 * CPU, memory=1024 * GIB, pods=1000, extended={GPU: 1000, "r1": 1000, "r2": 1000})]


@dataclass(frozen=True)
class Queued:
    ref: str  # namespace/name
    local_queue: str
    requests: Mapping[str, int]
    priority: int = 0


@dataclass(frozen=True)
class Cycle:
    """The state after a cycle: admitted workloads' flavors, and the workloads still queued or set aside."""

    admitted: dict[str, dict[str, str]]
    left: dict[str, list[str]]
    inadmissible: dict[str, list[str]]
    reasons: dict[str, str] = field(default_factory=dict, compare=False)


def trace_pod(w: Queued, at: int) -> TracePod:
    namespace = w.ref.split("/", 1)[0]
    requests = dict(w.requests)
    spec = PodSpec(
        w.ref,
        cpu=requests.pop("cpu", 0),
        memory=0,
        extended=requests,
        namespace=namespace,
        labels={QUEUE_LABEL: w.local_queue},
        priority=w.priority,
        movable=False,
    )
    return TracePod(spec, at, 10_000 * SECOND)


def first_cycle_of_heads(kueue: KueueConfig, admitted_before: list[Queued], heads: list[Queued]) -> Cycle:
    """Admit `admitted_before` one per instant, then queue `heads` together: the state after their first cycle."""
    pods = [trace_pod(w, (k + 1) * SECOND) for k, w in enumerate(admitted_before)]
    pods += [trace_pod(w, HEADS_AT) for w in heads]
    replay = BatchReplay(NODES, pods, kueue=kueue, until=HEADS_AT + SECOND)
    admission = replay.admission
    assert admission is not None
    cycles: list[Cycle] = []
    cycle = admission._cycle

    def recorded_cycle() -> None:
        cycle()
        if admission.env.now() >= HEADS_AT and not cycles:
            cycles.append(
                Cycle(
                    {name: dict(run.assignment.flavors) for name, run in admission.admitted.items() if run.assignment},
                    {q: sorted(r.workload.name for r in runs) for q, runs in admission.queued.items() if runs},
                    {q: sorted(r.workload.name for r in runs) for q, runs in admission.inadmissible.items() if runs},
                    {name: run.reason for name, run in admission.runs.items()},
                )
            )

    admission._cycle = recorded_cycle  # type: ignore[method-assign]
    replay.run()
    assert cycles, "no cycle ran when the heads arrived"
    return cycles[0]


def alpha(name: str, n: int) -> Queued:
    return Queued(f"eng-alpha/{name}", "main", {"cpu": n * CPU})


def beta(name: str, n: int) -> Queued:
    return Queued(f"eng-beta/{name}", "main", {"cpu": n * CPU})


def gamma(name: str, n: int) -> Queued:
    return Queued(f"eng-gamma/{name}", "main", {"cpu": n * CPU})


@dataclass(frozen=True)
class Case:
    extra: tuple[ClusterQueue, ...]
    local_queues: Mapping[tuple[str, str], str]
    admitted_before: list[Queued]
    heads: list[Queued]
    want: Cycle
    shortfalls: Mapping[str, str] = field(default_factory=dict)  # what a workload left out is short of


CO_QUEUES = {("sales", f"lq{k}"): f"cq{k}" for k in (1, 2, 3)}

CYCLE_CASES = [
    # Upstream: sales (StrictFIFO, 50 CPUs, no cohort) already holds 40 for sales/assigned; sales/new asks 11,
    # "1 more needed", and stays at the head of sales.
    pytest.param(
        Case(
            (),
            {},
            [Queued("sales/assigned", "main", {"cpu": 40 * CPU})],
            [Queued("sales/new", "main", {"cpu": 11 * CPU})],
            Cycle({"sales/assigned": {"cpu": "default"}}, {"sales": ["sales/new"]}, {}),
            {"sales/new": "flavor default, 1000 more needed"},
        ),
        id="single clusterQueue full",
    ),
    # Upstream: lend-a lends 2 of its 3 CPUs and lend-b all its 2; lend/a holds 2 in lend-b, so lend/b's 3
    # leaves it "1 more needed" of the 4 lendable, and lend-b (BestEffortFIFO) sets it aside.
    pytest.param(
        Case(
            (),
            {},
            [Queued("lend/a", "lend-b-queue", {"cpu": 2 * CPU})],
            [Queued("lend/b", "lend-b-queue", {"cpu": 3 * CPU})],
            Cycle({"lend/a": {"cpu": "default"}}, {}, {"lend-b": ["lend/b"]}),
            {"lend/b": "flavor default, 1000 more needed"},
        ),
        id="workload exceeds lending limit when borrow in cohort",
    ),
    # Upstream: eng-alpha/new (45) fits its nominal quota and goes first; eng-beta/new (56) would borrow 6 of
    # on-demand, but only 55 of the cohort's 100 are left, so it stays queued ("no longer fits").
    pytest.param(
        Case(
            (),
            {},
            [],
            [alpha("new", 45), beta("new", 56)],
            Cycle({"eng-alpha/new": {"cpu": "on-demand"}}, {"eng-beta": ["eng-beta/new"]}, {}),
        ),
        id="cannot borrow if cohort was assigned and would result in overadmission",
    ),
    # Upstream: in cohort co (30 of r1), sales/wl1 (priority -1) and sales/wl2 (-2) both would borrow 6 of r1;
    # the higher priority goes first and the other, no longer fitting, stays queued in cq2.
    pytest.param(
        Case(
            tuple(CO),
            CO_QUEUES,
            [],
            [Queued("sales/wl1", "lq1", {"r1": 16}, priority=-1), Queued("sales/wl2", "lq2", {"r1": 16}, priority=-2)],
            Cycle({"sales/wl1": {"r1": "default"}}, {"cq2": ["sales/wl2"]}, {}),
        ),
        id=(
            "only one workload can borrow one resources from the same flavor in the same cycle"
            " if cohort quota cannot fit"
        ),
    ),
    # Upstream: eng-gamma/existing borrows 51 of on-demand (pod set 1) and uses all 100 of spot (pod set 2,
    # here a second workload). eng-beta/new (50) and eng-alpha/new-alpha (1) fit without borrowing and are
    # admitted to on-demand; eng-gamma/new-gamma (50) is short ("on-demand, 41 more needed"), has nothing to
    # preempt, and is set aside.
    pytest.param(
        Case(
            (ENG_GAMMA,),
            {("eng-gamma", "main"): "eng-gamma"},
            [gamma("existing/borrow-on-demand", 51), gamma("existing/use-all-spot", 100)],
            [beta("new", 50), alpha("new-alpha", 1), gamma("new-gamma", 50)],
            Cycle(
                {
                    "eng-gamma/existing/borrow-on-demand": {"cpu": "on-demand"},
                    "eng-gamma/existing/use-all-spot": {"cpu": "spot"},
                    "eng-beta/new": {"cpu": "on-demand"},
                    "eng-alpha/new-alpha": {"cpu": "on-demand"},
                },
                {},
                {"eng-gamma": ["eng-gamma/new-gamma"]},
            ),
            {"eng-gamma/new-gamma": "flavor on-demand, 41000 more needed"},
        ),
        id="no overadmission while borrowing",
    ),
]


@pytest.mark.parametrize("case", CYCLE_CASES)
def test_one_cycle_of_heads_in_order(case: Case) -> None:
    got = first_cycle_of_heads(config(*case.extra, local_queues=case.local_queues), case.admitted_before, case.heads)
    assert got == case.want
    for ref, words in case.shortfalls.items():
        assert words in got.reasons[ref], got.reasons[ref]
