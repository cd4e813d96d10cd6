"""TaintToleration and NodeAffinity checked against the rules of the Kubernetes API, worked by hand.

Each case states the rule it checks (v1.Toleration.ToleratesTaint; the TaintToleration filter
and score; the node-selector operators and term semantics of the NodeAffinity plugin).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skenario.scheduling.affinity import NodeAffinity, PreferredTerm, Requirement, Term, affinity_normalize
from skenario.scheduling.taints import (
    Taint,
    TaintEffect,
    Toleration,
    taints_filter,
    taints_normalize,
    taints_score,
)

NO_SCHEDULE = TaintEffect.NO_SCHEDULE
PREFER = TaintEffect.PREFER_NO_SCHEDULE
NO_EXECUTE = TaintEffect.NO_EXECUTE


@pytest.mark.parametrize(
    ("toleration", "taint", "tolerated"),
    [
        (Toleration("gpu", "Equal", "true", "NoSchedule"), Taint("gpu", NO_SCHEDULE, "true"), True),
        (Toleration("gpu", "Equal", "false", "NoSchedule"), Taint("gpu", NO_SCHEDULE, "true"), False),  # value
        (Toleration("gpu", "Exists", "", "NoSchedule"), Taint("gpu", NO_SCHEDULE, "anything"), True),
        (Toleration("gpu", "Exists", "", "NoExecute"), Taint("gpu", NO_SCHEDULE), False),  # effect differs
        (Toleration("gpu", "Exists"), Taint("gpu", NO_EXECUTE), True),  # empty effect: every effect
        (Toleration("", "Exists"), Taint("whatever", PREFER, "x"), True),  # empty key + Exists: all taints
        (Toleration("other", "Exists"), Taint("gpu", NO_SCHEDULE), False),  # key differs
        (Toleration("gpu", "", "v"), Taint("gpu", NO_SCHEDULE, "v"), True),  # empty operator means Equal
        (Toleration("gpu", "Bogus", "v"), Taint("gpu", NO_SCHEDULE, "v"), False),  # unknown operator
    ],
)
def test_a_toleration_tolerates_a_taint_as_the_api_says(toleration: Toleration, taint: Taint, tolerated: bool) -> None:
    assert toleration.tolerates(taint) is tolerated


def test_the_filter_blocks_only_untolerated_noschedule_and_noexecute_taints() -> None:
    taints = [Taint("a", PREFER), Taint("b", NO_SCHEDULE), Taint("c", NO_EXECUTE)]
    assert taints_filter(taints, []) == Taint("b", NO_SCHEDULE)
    assert taints_filter(taints, [Toleration("b", "Exists")]) == Taint("c", NO_EXECUTE)
    assert taints_filter(taints, [Toleration("b", "Exists"), Toleration("c", "Exists")]) is None
    assert taints_filter([Taint("a", PREFER)], []) is None  # PreferNoSchedule never blocks


def test_the_score_counts_untolerated_prefer_no_schedule_taints_and_normalises_in_reverse() -> None:
    # Three nodes: no taint; one PreferNoSchedule taint the pod tolerates; two it does not.
    tolerations = [Toleration("foo", "Equal", "bar", "PreferNoSchedule")]
    nodes = [
        [],
        [Taint("foo", PREFER, "bar")],
        [Taint("cpu-type", PREFER, "arm64"), Taint("disk-type", PREFER, "ssd")],
    ]
    raw = [taints_score(n, tolerations) for n in nodes]
    assert raw == [0, 0, 2]
    # DefaultNormalizeScore(100, reverse): 100 - 100 * s // max.
    assert taints_normalize(raw) == [100, 100, 0]
    # A toleration with a NoSchedule effect does not count for PreferNoSchedule taints.
    assert taints_score([Taint("foo", PREFER, "bar")], [Toleration("foo", "Equal", "bar", "NoSchedule")]) == 1
    assert taints_normalize([0, 0]) == [100, 100]  # all clean: all best


LABELS = {"zone": "us-east-1a", "disktype": "ssd", "cores": "16", "gpu": "nvidia"}


@pytest.mark.parametrize(
    ("requirement", "matches"),
    [
        (Requirement("zone", "In", ("us-east-1a", "us-east-1b")), True),
        (Requirement("zone", "In", ("eu-west-1a",)), False),
        (Requirement("zone", "NotIn", ("eu-west-1a",)), True),
        (Requirement("rack", "NotIn", ("r1",)), True),  # NotIn holds when the label is absent
        (Requirement("gpu", "Exists"), True),
        (Requirement("rack", "Exists"), False),
        (Requirement("rack", "DoesNotExist"), True),
        (Requirement("cores", "Gt", ("8",)), True),
        (Requirement("cores", "Gt", ("16",)), False),  # strictly greater
        (Requirement("cores", "Lt", ("32",)), True),
        (Requirement("zone", "Gt", ("1",)), False),  # a label that is not an integer never compares
        (Requirement("rack", "Lt", ("1",)), False),  # nor does a missing one
    ],
)
def test_node_selector_operators(requirement: Requirement, matches: bool) -> None:
    assert requirement.matches(LABELS) is matches


@pytest.mark.parametrize(
    ("operator", "values"),
    [("In", ()), ("Exists", ("x",)), ("Gt", ("a",)), ("Gt", ("1", "2")), ("Near", ("x",))],
)
def test_invalid_requirements_are_refused(operator: str, values: tuple[str, ...]) -> None:
    with pytest.raises(ValueError):
        Requirement("k", operator, values)


def test_terms_are_ored_and_expressions_anded() -> None:
    ssd_in_a = Term((Requirement("disktype", "In", ("ssd",)), Requirement("zone", "In", ("us-east-1a",))))
    hdd = Term((Requirement("disktype", "In", ("hdd",)),))
    assert NodeAffinity(required=(hdd, ssd_in_a)).allows(LABELS, "node-1")
    assert not NodeAffinity(required=(hdd,)).allows(LABELS, "node-1")
    assert not NodeAffinity(required=(Term(),)).allows(LABELS, "node-1")  # an empty term matches nothing
    assert not NodeAffinity(required=()).allows(LABELS, "node-1")  # no term can match
    assert NodeAffinity().allows(LABELS, "node-1")  # no affinity at all: every node


def test_match_fields_name_the_node() -> None:
    by_name = Term(match_fields=(Requirement("metadata.name", "In", ("node-2",)),))
    assert NodeAffinity(required=(by_name,)).allows(LABELS, "node-2")
    assert not NodeAffinity(required=(by_name,)).allows(LABELS, "node-1")


def test_node_selector_and_affinity_must_both_hold() -> None:
    ssd = (Term((Requirement("disktype", "In", ("ssd",)),)),)
    assert NodeAffinity({"gpu": "nvidia"}, ssd).allows(LABELS, "n")
    assert not NodeAffinity({"gpu": "amd"}, ssd).allows(LABELS, "n")


def test_preferred_terms_add_their_weights_and_normalise_to_100() -> None:
    affinity = NodeAffinity(
        preferred=(
            PreferredTerm(20, Term((Requirement("zone", "In", ("us-east-1a",)),))),
            PreferredTerm(60, Term((Requirement("disktype", "In", ("ssd",)),))),
        )
    )
    nodes = [LABELS, {"zone": "us-east-1a"}, {"zone": "elsewhere"}]
    raw = [affinity.score(labels, "n") for labels in nodes]
    assert raw == [80, 20, 0]
    assert affinity_normalize(raw) == [100, 25, 0]  # 100 * s // max
    assert affinity_normalize([0, 0]) == [0, 0]


@given(st.lists(st.integers(0, 10_000), min_size=1, max_size=20), st.booleans())
def test_normalised_scores_stay_within_0_and_100(scores: list[int], reverse: bool) -> None:
    normalised = taints_normalize(scores) if reverse else affinity_normalize(scores)
    assert all(0 <= s <= 100 for s in normalised)
    top = max(scores)
    for raw, score in zip(scores, normalised, strict=True):
        # Scaled against the maximum: 100 * s // max, subtracted from 100 when reversed.
        if top == 0:
            assert score == (100 if reverse else 0)
        elif raw == top:
            assert score == (0 if reverse else 100)
        elif raw == 0 and reverse:
            assert score == 100
