"""KEP-140's record of one scheduling attempt: what every filter and score plugin said about each node.

Kept as compact arrays (one row per node the attempt examined) and turned into the KEP's maps
only when asked, so recording every attempt of a large trace stays cheap. The maps have the
shapes of kube-scheduler-simulator's result annotations: `filter` is
`{node: {plugin: "passed" | reason}}`, `score` is `{node: {plugin: {raw, normalized, final}}}`
where `final` is the normalised score times the plugin's weight.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt

Ints = npt.NDArray[np.int64]

PASSED = "passed"

# Which attempts keep every plugin's verdicts and scores: all of them, only those that found no node
# (what a user debugging a pending pod asks for), or none (the attempt is counted, not recorded).
PluginResults = Literal["all", "unschedulable", "none"]
PLUGIN_RESULTS: tuple[PluginResults, ...] = ("all", "unschedulable", "none")


def name_matcher(patterns: Sequence[str]) -> Callable[[str], bool] | None:
    """Whether a pod's name matches any of the shell-style patterns (`web-*`, `job-1?`); None for none."""
    if not patterns:
        return None
    exact = {p for p in patterns if not any(c in p for c in "*?[")}
    globs = re.compile("|".join(fnmatch.translate(p) for p in patterns if p not in exact) or r"(?!)")
    return lambda name: name in exact or globs.match(name) is not None


@dataclass(frozen=True, slots=True)
class PluginScores:
    """One score plugin's scores over the feasible nodes of an attempt."""

    plugin: str
    weight: int
    raw: Ints
    normalized: Ints

    @property
    def final(self) -> Ints:
        return self.normalized.astype(np.int64) * self.weight


@dataclass(frozen=True, slots=True)
class FilterVerdicts:
    """One filter plugin's verdicts over the nodes it examined (those that passed the plugins before it)."""

    plugin: str
    nodes: Ints
    codes: Ints  # 0 passed, else an index into reasons
    reasons: Sequence[str]


@dataclass(slots=True)
class Attempt:
    """One scheduling cycle for one pod (the KEP's `ScheduleResult`)."""

    pod: str
    at: int  # ns
    candidates: int  # nodes in the cluster when the cycle ran (`AllCandidateNodes`, counted)
    node_names: Sequence[str]  # the snapshot's node names, indexed by the arrays below
    examined: Ints  # the nodes the filters ran on, in the order they were examined
    feasible: Ints  # the nodes left after filtering (`AllFilteredNodes`)
    filters: list[FilterVerdicts] = field(default_factory=list)
    scores: list[PluginScores] = field(default_factory=list)
    selected: str | None = None
    nominated: str | None = None  # where preemption made room, if it did
    message: str = ""

    @property
    def filtered_nodes(self) -> list[str]:
        return [self.node_names[i] for i in self.feasible]

    def filter_results(self) -> dict[str, dict[str, str]]:
        """`{node: {plugin: "passed" | reason}}`; a node stops at the first plugin that rejects it."""
        out: dict[str, dict[str, str]] = {}
        for verdicts in self.filters:
            for node, code in zip(verdicts.nodes.tolist(), verdicts.codes.tolist(), strict=True):
                out.setdefault(self.node_names[node], {})[verdicts.plugin] = (
                    PASSED if code == 0 else verdicts.reasons[code]
                )
        return out

    def score_results(self) -> dict[str, dict[str, dict[str, int]]]:
        """`{node: {plugin: {"raw", "normalized", "final"}}}` over the feasible nodes."""
        out: dict[str, dict[str, dict[str, int]]] = {}
        names = [self.node_names[i] for i in self.feasible]
        for s in self.scores:
            for name, raw, norm in zip(names, s.raw.tolist(), s.normalized.tolist(), strict=True):
                out.setdefault(name, {})[s.plugin] = {"raw": raw, "normalized": norm, "final": norm * s.weight}
        return out

    def total_scores(self) -> dict[str, int]:
        names = [self.node_names[i] for i in self.feasible]
        if not self.scores:
            return dict.fromkeys(names, 0)
        total = sum((s.final for s in self.scores), start=np.zeros(len(names), dtype=np.int64))
        return dict(zip(names, total.tolist(), strict=True))

    def to_dict(self, plugin_results: bool = True) -> dict[str, object]:
        """The KEP-140 `ScheduleResult` as plain JSON-ready data; without `plugin_results`, the attempt
        of a pod whose verdicts were not kept: `allFilteredNodes` and `pluginResults` null, the nodes
        that passed counted (`feasibleNodes`)."""
        if not plugin_results:
            return {
                "pod": self.pod,
                "at": self.at,
                "allCandidateNodes": self.candidates,
                "allFilteredNodes": None,
                "feasibleNodes": len(self.feasible),
                "selectedNode": self.selected,
                "nominatedNode": self.nominated,
                "message": self.message,
                "pluginResults": None,
            }
        return {
            "pod": self.pod,
            "at": self.at,
            "allCandidateNodes": self.candidates,
            "allFilteredNodes": self.filtered_nodes,
            "selectedNode": self.selected,
            "nominatedNode": self.nominated,
            "message": self.message,
            "pluginResults": {"filter": self.filter_results(), "score": self.score_results()},
        }
