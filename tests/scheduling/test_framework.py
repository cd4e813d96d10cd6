"""One scheduling cycle (`Framework.schedule`) checked against kube-scheduler's `schedule_one.go`.

The rules restated here come from the reference note kube-scheduler-and-yarn-sls.md §2.1-2.2:
`numFeasibleNodesToFind`, the rotating `nextStartNodeIndex` that advances by the nodes examined,
no scoring when one node is feasible, `selectHost`'s uniform choice among the best, the FitError
text (`"0/%v nodes are available: %v."` over the sorted `"<count> <reason>"` strings, as
`FitError.Error` builds it with `sort.Strings`), and the result maps of kube-scheduler-simulator
(filter `{node: {plugin: "passed" | reason}}`, score `{node: {plugin: {raw, normalized, final}}}`
with final = normalized x weight).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.scheduling.attempts import Attempt
from skenario.scheduling.framework import (
    Framework,
    Profile,
    default_profile,
    num_feasible_nodes_to_find,
)
from skenario.scheduling.objects import NodeSpec, PodSpec
from skenario.scheduling.plugins.registry import DEFAULT_WEIGHTS, FILTERS
from skenario.scheduling.snapshot import ClusterSnapshot
from skenario.scheduling.taints import Taint, TaintEffect

# -- numFeasibleNodesToFind -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("nodes", "percentage", "expected"),
    [
        (50, 0, 50),  # fewer than 100 nodes: all of them
        (99, 0, 99),
        (99, 10, 99),  # below 100 the percentage plays no part
        (100, 0, 100),  # pct = 50 - 100//125 = 50 -> 50, raised to the minimum of 100
        (1523, 0, 578),  # pct = 50 - 1523//125 = 38 -> 1523*38//100 = 578
        (5000, 0, 500),  # pct = max(50 - 40, 5) = 10 -> 500
        (10000, 0, 500),  # pct = max(50 - 80, 5) = 5 -> 500
        (1000, 100, 1000),  # percentage 100: all
        (5000, 100, 5000),
        (1000, 30, 300),  # an explicit percentage
        (1000, 5, 100),  # 50 found, raised to the minimum of 100
        (200, 50, 100),
    ],
)
def test_num_feasible_nodes_to_find_follows_the_upstream_formula(nodes: int, percentage: int, expected: int) -> None:
    assert num_feasible_nodes_to_find(nodes, percentage) == expected


def _identical(n: int, cpu: int = 4000, memory: int = 8 * 1024**3) -> list[NodeSpec]:
    return [NodeSpec(f"n{i:03d}", cpu=cpu, memory=memory) for i in range(n)]


def _framework(nodes: list[NodeSpec], profile: Profile | None = None, seed: int = 0) -> Framework:
    return Framework(profile or default_profile(), ClusterSnapshot(nodes), np.random.default_rng(seed))


# -- the rotating start ----------------------------------------------------------------------------


def test_the_search_starts_where_the_last_one_stopped_and_examines_just_enough_nodes() -> None:
    """200 identical nodes, percentageOfNodesToScore 50: 100 to find, and every node fits.

    So each cycle examines exactly 100 nodes, and nextStartNodeIndex = (start + examined) % 200 goes
    0 -> 100 -> 0; the first cycle looks at the first 100 nodes by name, the second at the others.
    """
    profile = default_profile()
    profile.percentage_of_nodes_to_score = 50
    fw = _framework(_identical(200), profile)
    names = [f"n{i:03d}" for i in range(200)]
    pod = PodSpec("p", cpu=100, memory=100)
    starts = [fw.next_start]
    examined = []
    for _ in range(4):
        attempt, outcome = fw.schedule(pod, now=1)
        assert len(attempt.examined) == 100
        assert len(outcome.feasible) == 100
        examined.append([attempt.node_names[i] for i in attempt.examined])
        starts.append(fw.next_start)
    assert starts == [0, 100, 0, 100, 0]
    assert examined[0] == names[:100]
    assert examined[1] == names[100:]
    assert examined[2] == names[:100]


def test_the_start_advances_past_rejected_nodes_too() -> None:
    """Examined = feasible + rejected: with every other node tainted, finding 100 takes 199 nodes."""
    nodes = []
    for i in range(300):
        taints = (Taint("bad", TaintEffect.NO_SCHEDULE),) if i % 2 else ()
        nodes.append(NodeSpec(f"n{i:03d}", cpu=4000, memory=1024**3, taints=taints))
    profile = default_profile()
    profile.percentage_of_nodes_to_score = 10  # 30, raised to 100
    fw = _framework(nodes, profile)
    attempt, outcome = fw.schedule(PodSpec("p", cpu=1), now=1)
    assert len(outcome.feasible) == 100
    assert len(attempt.examined) == 199  # n000..n198: the 100th untainted one is n198
    assert fw.next_start == 199


# -- one feasible node, ties -----------------------------------------------------------------------


def test_a_single_feasible_node_is_chosen_without_scoring() -> None:
    nodes = [
        NodeSpec("a", cpu=1000, memory=1000, taints=(Taint("k", TaintEffect.NO_SCHEDULE, "v"),)),
        NodeSpec("b", cpu=1000, memory=1000),
        NodeSpec("c", cpu=100, memory=1000),
    ]
    attempt, _ = _framework(nodes).schedule(PodSpec("p", cpu=500), now=1)
    assert attempt.selected == "b"
    assert attempt.filtered_nodes == ["b"]
    assert attempt.scores == []
    assert attempt.score_results() == {}


def test_ties_are_broken_uniformly_at_random() -> None:
    """selectHost's reservoir sampling picks each of k tied nodes with probability 1/k.

    Four identical empty nodes (nothing is assumed, so they stay identical), 4000 cycles: the
    chi-square statistic of the counts against 1000 each stays under 16.27, the 0.1% critical value
    with 3 degrees of freedom.
    """
    fw = _framework(_identical(4), seed=2024)
    pod = PodSpec("p", cpu=100, memory=100)
    counts: dict[str, int] = {}
    for _ in range(4000):
        attempt, _ = fw.schedule(pod, now=1)
        assert attempt.selected is not None
        counts[attempt.selected] = counts.get(attempt.selected, 0) + 1
    assert sorted(counts) == ["n000", "n001", "n002", "n003"]
    chi2 = sum((c - 1000) ** 2 / 1000 for c in counts.values())
    assert chi2 < 16.27


def test_tie_break_first_takes_the_first_node_in_name_order() -> None:
    nodes = [NodeSpec(name, cpu=1000, memory=1000) for name in ("n-c", "n-a", "n-d", "n-b")]
    profile = default_profile()
    profile.tie_break = "first"
    fw = _framework(nodes, profile, seed=7)
    for _ in range(50):
        attempt, _ = fw.schedule(PodSpec("p", cpu=100, memory=100), now=1)
        assert attempt.selected == "n-a"


# -- the FitError message and the result maps ----------------------------------------------------


def _three_nodes_none_fit() -> Framework:
    nodes = [
        NodeSpec("cpu-1", cpu=1000, memory=10_000),
        NodeSpec("cpu-2", cpu=1000, memory=10_000),
        NodeSpec("tainted", cpu=8000, memory=10_000, taints=(Taint("k", TaintEffect.NO_SCHEDULE, "v"),)),
    ]
    fw = _framework(nodes)
    fw.snapshot.assume(PodSpec("busy-1", cpu=800, memory=0), 0)
    fw.snapshot.assume(PodSpec("busy-2", cpu=800, memory=0), 1)
    return fw


def test_the_fit_error_counts_each_reason_and_sorts_the_parts() -> None:
    """Two nodes short of cpu, one with an untolerated taint {k: v}.

    Upstream formats "<count> <reason>" per reason and sorts the strings, so "1 node(s)..." comes
    before "2 Insufficient cpu".
    """
    attempt, outcome = _three_nodes_none_fit().schedule(PodSpec("p", cpu=500), now=1)
    assert attempt.selected is None
    assert len(outcome.feasible) == 0
    assert attempt.message == "0/3 nodes are available: 1 node(s) had untolerated taint {k: v}, 2 Insufficient cpu."
    assert outcome.messages == {"Insufficient cpu": 2, "node(s) had untolerated taint {k: v}": 1}


def test_filter_results_stop_at_the_first_failing_plugin() -> None:
    attempt, _ = _three_nodes_none_fit().schedule(PodSpec("p", cpu=500), now=1)
    results = attempt.filter_results()
    assert results["tainted"] == {
        "NodeUnschedulable": "passed",
        "TaintToleration": "node(s) had untolerated taint {k: v}",
    }
    for node in ("cpu-1", "cpu-2"):
        assert results[node] == {
            "NodeUnschedulable": "passed",
            "TaintToleration": "passed",
            "NodeAffinity": "passed",
            "NodePorts": "passed",
            "NodeResourcesFit": "Insufficient cpu",
        }
    assert attempt.score_results() == {}


def test_score_results_give_raw_normalized_and_final_equal_to_normalized_times_weight() -> None:
    nodes = [
        NodeSpec("a", cpu=4000, memory=4000, taints=(Taint("soft", TaintEffect.PREFER_NO_SCHEDULE),)),
        NodeSpec("b", cpu=2000, memory=8000),
        NodeSpec("c", cpu=1000, memory=1000),
        NodeSpec("d", cpu=100, memory=1000),  # too small: filtered out
    ]
    attempt, _ = _framework(nodes).schedule(PodSpec("p", cpu=500, memory=500), now=1)
    filters = attempt.filter_results()
    assert set(filters) == {"a", "b", "c", "d"}
    for node in ("a", "b", "c"):
        assert set(filters[node].values()) == {"passed"}
        assert list(filters[node]) == [f for f in FILTERS if f != "PodTopologySpread"]  # the registry's order
    assert filters["d"]["NodeResourcesFit"] == "Insufficient cpu"

    scores = attempt.score_results()
    assert set(scores) == {"a", "b", "c"}  # only the feasible nodes are scored
    weights = {
        "TaintToleration": 3,
        "NodeAffinity": 2,
        "NodeResourcesFit": 1,
        "InterPodAffinity": 2,
        "NodeResourcesBalancedAllocation": 1,
        "ImageLocality": 1,
    }
    assert {k: DEFAULT_WEIGHTS[k] for k in weights} == weights  # §2.1
    totals = attempt.total_scores()
    for node, per_plugin in scores.items():
        assert set(per_plugin) == set(weights)
        for plugin, s in per_plugin.items():
            assert s["final"] == s["normalized"] * weights[plugin]
            assert 0 <= s["normalized"] <= 100
        assert totals[node] == sum(s["final"] for s in per_plugin.values())
    # TaintToleration: "a" has one untolerated PreferNoSchedule taint, the others none: reversed, 0 and 100.
    assert [scores[n]["TaintToleration"]["raw"] for n in "abc"] == [1, 0, 0]
    assert [scores[n]["TaintToleration"]["normalized"] for n in "abc"] == [0, 100, 100]
    # No NormalizeScore for the resource scores: normalized == raw.
    for n in "abc":
        for plugin in ("NodeResourcesFit", "NodeResourcesBalancedAllocation"):
            assert scores[n][plugin]["normalized"] == scores[n][plugin]["raw"]
    # By hand: TaintToleration 0/300/300; NodeAffinity, InterPodAffinity (no terms) and ImageLocality (no
    # images) 0; LeastAllocated a (87+87)//2 = 87, b (75+93)//2 = 84, c 50; BalancedAllocation a 100,
    # b int(100*(1-|0.25-0.0625|/2)) = 90, c 100.
    assert totals == {"a": 187, "b": 474, "c": 450}
    assert attempt.selected == "b"


def test_final_scores_stay_normalized_times_weight_for_a_large_weight() -> None:
    """The Python API takes any positive weight (upstream only guards the int64 total): 100 x 400 = 40000.

    TaintToleration normalises both untainted nodes to 100; with weight 400 each gets 40000, and a
    node's total is the sum of its finals in every view of the attempt.
    """
    profile = default_profile(weights={"TaintToleration": 400})
    nodes = [NodeSpec("a", cpu=1000, memory=1000), NodeSpec("b", cpu=2000, memory=1000)]
    attempt, _ = _framework(nodes, profile).schedule(PodSpec("p", cpu=100, memory=100), now=1)
    scores = attempt.score_results()
    taint = next(s for s in attempt.scores if s.plugin == "TaintToleration")
    assert taint.final.tolist() == [40_000, 40_000]
    totals = attempt.total_scores()
    for node in ("a", "b"):
        assert scores[node]["TaintToleration"]["final"] == 40_000
        assert totals[node] == sum(s["final"] for s in scores[node].values())


# -- the README's worked example (kube-scheduler-simulator §1.1) ---------------------------------


def test_readme_example_taint_toleration_raw_0_final_300_and_fit_raw_equals_final() -> None:
    """A pod with no tolerations and no spread constraints on nodes without taints.

    TaintToleration: every raw score is 0, reverse-normalised to 100, times weight 3 = 300.
    NodeResourcesFit (LeastAllocated, weight 1, no NormalizeScore): final = raw. By hand (§2.4):
    a node of 4000m / 10000 bytes and a pod of 3000m / 5000 bytes leave cpu (4000-3000)*100//4000 = 25
    and memory (10000-5000)*100//10000 = 50, so (25 + 50) // 2 = 37. The second node, 8000m / 10000,
    gives cpu 62 and memory 50: (62 + 50) // 2 = 56. BalancedAllocation (weight 1) likewise keeps raw.
    """
    nodes = [NodeSpec("n1", cpu=4000, memory=10_000), NodeSpec("n2", cpu=8000, memory=10_000)]
    snap = ClusterSnapshot(nodes)
    fw = Framework(default_profile(), snap, np.random.default_rng(0))
    attempt, _ = fw.schedule(PodSpec("p", cpu=3000, memory=5000), now=1)
    scores = attempt.score_results()
    for node in ("n1", "n2"):
        taint = scores[node]["TaintToleration"]
        assert (taint["raw"], taint["normalized"], taint["final"]) == (0, 100, 300)
        balanced = scores[node]["NodeResourcesBalancedAllocation"]
        assert balanced["final"] == balanced["raw"]
    fit = {node: scores[node]["NodeResourcesFit"] for node in ("n1", "n2")}
    assert (fit["n1"]["raw"], fit["n1"]["final"]) == (37, 37)
    assert (fit["n2"]["raw"], fit["n2"]["final"]) == (56, 56)
    assert attempt.selected == "n2"


# -- the search over a head of the node order --------------------------------------------------------


def _verdicts(attempt: Attempt) -> list[tuple[str, list[int], list[int]]]:
    return [(v.plugin, v.nodes.tolist(), v.codes.tolist()) for v in attempt.filters]


@settings(max_examples=40, deadline=None)
@given(
    st.integers(100, 320),
    st.sampled_from((0, 5, 20)),
    st.lists(st.tuples(st.integers(1, 16), st.booleans()), min_size=1, max_size=25),
    st.integers(0, 2**16),
)
def test_filtering_a_head_of_the_node_order_finds_what_a_pass_over_every_node_finds(
    n: int, percentage: int, pods: list[tuple[int, bool]], seed: int
) -> None:
    """`_find_feasible` filters only as many nodes, from the rotating start, as it guesses will hold one
    feasible node more than `numFeasibleNodesToFind`; upstream's rule is a pass over every node from
    there that stops at that many. On clusters filled at random (some nodes full, some tainted), each
    cycle's examined nodes, feasible and rejected nodes, FitError counts and recorded verdicts must be
    those of `_filter` over the whole rotated order, and the next start the same."""
    rng = np.random.default_rng(seed)
    nodes = [
        NodeSpec(
            f"n{i:03d}",
            cpu=int(rng.integers(1, 9)) * 1000,
            memory=8 * 1024**3,
            taints=(Taint("t", TaintEffect.NO_SCHEDULE),) if rng.random() < 0.2 else (),
        )
        for i in range(n)
    ]
    profile = default_profile()
    profile.percentage_of_nodes_to_score = percentage
    head, full = _framework(nodes, profile, seed), _framework(nodes, profile, seed)
    for k, (size, bind) in enumerate(pods):
        pod = PodSpec(f"p{k}", cpu=size * 500, memory=1024**2)
        start = full.next_start % n
        order = full.snapshot.order
        rotated = np.concatenate([order[start:], order[:start]])
        expected_attempt = Attempt(pod.name, 1, n, full.snapshot.names, rotated[:0], rotated[:0])
        want = num_feasible_nodes_to_find(n, percentage)
        expected = full._filter(pod, rotated, expected_attempt, limit=want)
        full.next_start = (start + len(expected_attempt.examined)) % n
        attempt = Attempt(pod.name, 1, n, head.snapshot.names, rotated[:0], rotated[:0])
        got = head._find_feasible(pod, attempt)
        assert attempt.examined.tolist() == expected_attempt.examined.tolist()
        assert got.feasible.tolist() == expected.feasible.tolist()
        assert got.failed.tolist() == expected.failed.tolist()
        assert got.resolvable.tolist() == expected.resolvable.tolist()
        assert got.messages == expected.messages
        assert _verdicts(attempt) == _verdicts(expected_attempt)
        assert head.next_start == full.next_start
        if bind and len(got.feasible):  # fill the cluster as cycles go, in both snapshots alike
            i = int(got.feasible[0])
            head.snapshot.assume(pod, i)
            full.snapshot.assume(pod, i)


def test_a_head_holding_exactly_the_nodes_wanted_is_not_enough() -> None:
    """200 nodes, 100 to find: the first head is 119 nodes (10% and 8 over the 101 it looks for at a
    pass rate of 1). Make its first 100 nodes fit and the next 19 tainted: the head then holds exactly
    the 100 wanted, which cannot say whether a 101st exists; the search must look further, and, like a
    pass over every node, stop its examined nodes at the 100th feasible one."""
    nodes = [
        NodeSpec(
            f"n{i:03d}",
            cpu=4000,
            memory=1024**3,
            taints=(Taint("t", TaintEffect.NO_SCHEDULE),) if 100 <= i < 119 else (),
        )
        for i in range(200)
    ]
    profile = default_profile()
    profile.percentage_of_nodes_to_score = 50
    attempt, outcome = _framework(nodes, profile).schedule(PodSpec("p", cpu=1), now=1)
    assert len(outcome.feasible) == 100
    assert len(attempt.examined) == 100
