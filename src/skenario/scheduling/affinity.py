"""A pod's nodeSelector and node affinity terms, matched against a node's labels and name.

Mirrors `v1.NodeSelectorRequirement`, `v1.NodeSelectorTerm`, `v1.PreferredSchedulingTerm` and the
matching of `component-helpers/scheduling/corev1/nodeaffinity` (`RequiredNodeAffinity.Match`,
`PreferredSchedulingTerms.Score`): a pod's `nodeSelector` labels must all be equal; required terms
are ORed, the expressions within a term ANDed, and an empty term matches nothing; the raw score is
the sum of the weights of the preferred terms the node matches. The NodeAffinity plugin
(`plugins.nodeaffinity`) filters and scores with these; `LabelSelector` matches pods with
`Requirement` too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str
    values: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.operator not in OPERATORS:
            raise ValueError(f"unknown operator {self.operator!r} (operators: {', '.join(OPERATORS)})")
        if self.operator in ("In", "NotIn") and not self.values:
            raise ValueError(f"operator {self.operator} needs values")
        if self.operator in ("Exists", "DoesNotExist") and self.values:
            raise ValueError(f"operator {self.operator} takes no values")
        if self.operator in ("Gt", "Lt") and (len(self.values) != 1 or not _is_int(self.values[0])):
            raise ValueError(f"operator {self.operator} needs one integer value")

    def matches(self, labels: Mapping[str, str]) -> bool:
        value = labels.get(self.key)
        op = self.operator
        if op == "In":
            return value is not None and value in self.values
        if op == "NotIn":
            return value is None or value not in self.values
        if op == "Exists":
            return value is not None
        if op == "DoesNotExist":
            return value is None
        if value is None or not _is_int(value):
            return False
        bound = int(self.values[0])
        return int(value) > bound if op == "Gt" else int(value) < bound


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class Term:
    """A node selector term: label expressions and (metadata.name only) field expressions, ANDed."""

    match_expressions: tuple[Requirement, ...] = ()
    match_fields: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        if not self.match_expressions and not self.match_fields:
            return False  # an empty term matches no node
        fields = {"metadata.name": node_name}
        return all(r.matches(labels) for r in self.match_expressions) and all(
            r.matches(fields) for r in self.match_fields
        )


@dataclass(frozen=True)
class PreferredTerm:
    weight: int  # 1..100
    term: Term


@dataclass(frozen=True)
class NodeAffinity:
    """A pod's `nodeSelector` and its node affinity (required terms ORed, preferred weighted)."""

    node_selector: Mapping[str, str] = field(default_factory=dict)
    required: tuple[Term, ...] | None = None  # None: no required affinity
    preferred: tuple[PreferredTerm, ...] = ()

    def allows(self, labels: Mapping[str, str], node_name: str) -> bool:
        """The Filter: nodeSelector and required terms both satisfied."""
        if any(labels.get(k) != v for k, v in self.node_selector.items()):
            return False
        return self.required is None or any(t.matches(labels, node_name) for t in self.required)

    def score(self, labels: Mapping[str, str], node_name: str) -> int:
        """The raw Score: the weights of the matching preferred terms."""
        return sum(p.weight for p in self.preferred if p.term.matches(labels, node_name))
