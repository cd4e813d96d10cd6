"""Node selector terms checked against the rules of the Kubernetes API, worked by hand.

Each case states the rule it checks (the node-selector operators, and the term semantics of
component-helpers' nodeaffinity: required terms ORed, expressions ANDed, preferred weights summed).
"""

from __future__ import annotations

import pytest

from skenario.scheduling.affinity import NodeAffinity, PreferredTerm, Requirement, Term
from skenario.scheduling.plugins.nodeaffinity import affinity_normalize

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
