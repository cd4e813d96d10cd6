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

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")

# apimachinery's util/validation: `IsValidLabelValue` and `IsQualifiedName` (a DNS-1123 subdomain prefix).
LABEL_VALUE_MAX = 63
_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def label_value_problem(value: str) -> str | None:
    """Why `value` is not a valid label value (`validation.IsValidLabelValue`), or None: at most 63
    characters, empty or alphanumeric at both ends with `-`, `_` and `.` between."""
    if len(value) > LABEL_VALUE_MAX:
        return f"label value {value!r} is longer than {LABEL_VALUE_MAX} characters"
    if value and not _NAME.match(value):
        return (
            f"label value {value!r} is not valid: alphanumeric characters, '-', '_' or '.', "
            "starting and ending with an alphanumeric character"
        )
    return None


def label_key_problem(key: str) -> str | None:
    """Why `key` is not a valid label key (`validation.IsQualifiedName`), or None: an optional DNS
    subdomain prefix of at most 253 characters and `/`, then a name of at most 63 characters."""
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        return f"label key {key!r} has an invalid prefix: it must be a lowercase DNS subdomain"
    if not name or len(name) > LABEL_VALUE_MAX or not _NAME.match(name):
        return (
            f"label key {key!r} is not valid: a name of at most 63 alphanumeric characters, '-', '_' or '.', "
            "starting and ending with an alphanumeric character, with an optional DNS subdomain prefix and '/'"
        )
    return None


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
        # As `labels.NewRequirement`: an invalid key or value is an error, never a silent non-match.
        problem = label_key_problem(self.key)
        for value in self.values:
            problem = problem or label_value_problem(value)
        if problem is not None:
            raise ValueError(problem)

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
