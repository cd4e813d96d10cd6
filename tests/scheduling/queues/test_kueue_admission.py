"""Kueue's admission, restated from kueue's pkg/scheduler/preemption TestPreemption and worked by hand."""

import pytest

from skenario.scheduling.queues.kueue_admission import (
    QuotaBook,
    Workload,
    assign_flavors,
    preemption_targets,
)
from skenario.scheduling.queues.kueue_config import (
    ClusterQueue,
    Flavor,
    KueueConfig,
    Preemption,
    Quota,
    ResourceGroup,
)
from skenario.scheduling.taints import Taint, TaintEffect, Toleration

CPU = 1000  # millicores


def queue(
    name: str,
    nominal: int,
    cohort: str | None = None,
    *,
    borrowing: int | None = None,
    lending: int | None = None,
    preemption: Preemption | None = None,
) -> ClusterQueue:
    quota = Quota(
        nominal * CPU, None if borrowing is None else borrowing * CPU, None if lending is None else lending * CPU
    )
    group = ResourceGroup(("cpu",), (("default", {"cpu": quota}),))
    return ClusterQueue(name, (group,), cohort, preemption=preemption or Preemption())


def book_of(*queues: ClusterQueue) -> QuotaBook:
    return QuotaBook(KueueConfig({"default": Flavor("default")}, {q.name: q for q in queues}, {}))


def admitted(book: QuotaBook, cq: str, name: str, priority: int, cpus: int, at: int) -> Workload:
    w = Workload(name, cq, priority, at, {"cpu": cpus * CPU})
    w.usage = {("default", "cpu"): cpus * CPU}
    w.admitted_at = at
    book.add(cq, w.usage)
    return w


STANDALONE = queue("standalone", 6, preemption=Preemption(within_cluster_queue="LowerPriority"))


@pytest.mark.parametrize(
    ("case", "running", "incoming", "preempted"),
    [
        ("preempt lowest priority", [("low", -1, 2), ("mid", 0, 2), ("high", 1, 2)], (1, 2), ["low"]),
        ("preempt multiple", [("low", -1, 2), ("mid", 0, 2), ("high", 1, 2)], (1, 3), ["low", "mid"]),
        ("no preemption for low priority", [("low", -1, 3), ("mid", 0, 3)], (-1, 1), None),
        ("not enough low priority workloads", [("low", -1, 3), ("mid", 0, 3)], (0, 4), None),
        ("some free quota, preempt low priority", [("low", -1, 1), ("mid", 0, 1), ("high", 1, 3)], (1, 2), ["low"]),
        ("minimal set excludes low priority", [("low", -1, 1), ("mid", 0, 2), ("high", 1, 3)], (1, 2), ["mid"]),
    ],
)
def test_standalone_cluster_queue(
    case: str, running: list[tuple[str, int, int]], incoming: tuple[int, int], preempted: list[str] | None
) -> None:
    book = book_of(STANDALONE)
    workloads = [admitted(book, "standalone", n, p, c, at) for at, (n, p, c) in enumerate(running, start=1)]
    preemptor = Workload("in", "standalone", incoming[0], 100, {"cpu": incoming[1] * CPU})
    assignment = assign_flavors(book, preemptor)
    targets = preemption_targets(book, preemptor, assignment, workloads)
    assert (None if targets is None else sorted(w.name for w in targets)) == preempted, case
    assert book.usage["standalone"][("default", "cpu")] == sum(c for _, _, c in running) * CPU  # left as it was


def test_a_cohort_lends_unused_quota_and_borrowing_limits_cap_it() -> None:
    a = queue("a", 6, cohort="c", borrowing=2)
    b = queue("b", 6, cohort="c")
    book = book_of(a, b)
    assert book.available(a, ("default", "cpu")) == 8 * CPU  # own 6, and at most 2 borrowed
    assert book.available(b, ("default", "cpu")) == 12 * CPU  # no borrowing limit: all the cohort has
    book.add("b", {("default", "cpu"): 10 * CPU})
    assert book.available(a, ("default", "cpu")) == 2 * CPU  # b borrows 4 of a's 6
    fit = assign_flavors(book, Workload("w", "a", 0, 0, {"cpu": 2 * CPU}))
    assert fit.mode == "Fit" and not fit.borrows
    assert assign_flavors(book, Workload("w", "a", 0, 0, {"cpu": 3 * CPU})).mode == "NoFit"  # no preemption policy


def test_a_lending_limit_keeps_the_rest_for_the_lender() -> None:
    lender = queue("lend", 6, cohort="c", lending=2)  # keeps 4 for itself
    borrower = queue("b", 0, cohort="c")
    book = book_of(lender, borrower)
    assert book.available(borrower, ("default", "cpu")) == 2 * CPU
    book.add("b", {("default", "cpu"): 2 * CPU})
    assert book.available(lender, ("default", "cpu")) == 4 * CPU


def test_reclaim_within_cohort_takes_back_from_a_borrowing_queue() -> None:
    a = queue("a", 4, cohort="c", preemption=Preemption(reclaim_within_cohort="Any"))
    b = queue("b", 4, cohort="c")
    book = book_of(a, b)
    runs = [admitted(book, "b", f"b{k}", 0, 2, k) for k in range(4)]  # b uses 8: 4 of them a's
    preemptor = Workload("a0", "a", 0, 10, {"cpu": 3 * CPU})
    assignment = assign_flavors(book, preemptor)
    assert assignment.mode == "Preempt"
    targets = preemption_targets(book, preemptor, assignment, runs)
    assert targets is not None and [w.name for w in targets] == ["b3", "b2"]  # most recently admitted first


def test_a_flavor_with_a_taint_is_skipped_unless_tolerated() -> None:
    spot = Flavor("spot", node_taints=(Taint("spot", TaintEffect.NO_SCHEDULE, "true"),))
    group = ResourceGroup(("cpu",), (("spot", {"cpu": Quota(8 * CPU)}), ("on-demand", {"cpu": Quota(8 * CPU)})))
    cq = ClusterQueue("q", (group,))
    book = QuotaBook(KueueConfig({"spot": spot, "on-demand": Flavor("on-demand")}, {"q": cq}, {}))
    plain = assign_flavors(book, Workload("w", "q", 0, 0, {"cpu": CPU}))
    tolerant = assign_flavors(book, Workload("t", "q", 0, 0, {"cpu": CPU}, tolerations=(Toleration("spot", "Exists"),)))
    assert plain.flavors == {"cpu": "on-demand"} and tolerant.flavors == {"cpu": "spot"}
