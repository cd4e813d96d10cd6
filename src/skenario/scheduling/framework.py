"""One scheduling cycle, as kube-scheduler's framework runs it: filter, score, normalise, weigh, pick.

Mirrors `schedule_one.go`: `findNodesThatFitPod` (the nominated node first; then the filters over
nodes from a rotating start until `numFeasibleNodesToFind` pass), `prioritizeNodes` (each score
plugin's raw score, its `NormalizeScore`, times its weight, summed) and `selectHost` (the best
total; ties broken uniformly at random, from the scenario's seed). With one feasible node there is
no scoring, as upstream. The cycle only decides; the controller assumes and binds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from skenario.scheduling.attempts import Attempt, FilterVerdicts, PluginResults, PluginScores
from skenario.scheduling.objects import PodSpec
from skenario.scheduling.plugins.interface import FilterPlugin, FilterResult, ScorePlugin
from skenario.scheduling.plugins.registry import DEFAULT_WEIGHTS, IN_TREE, new_plugins
from skenario.scheduling.snapshot import ClusterSnapshot

Ints = npt.NDArray[np.int64]

_NONE: Ints = np.zeros(0, dtype=np.int64)  # no nodes (read only: an attempt's arrays are replaced, not changed)
_NONE.flags.writeable = False

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


def num_feasible_nodes_to_find(nodes: int, percentage: int) -> int:
    """How many feasible nodes a cycle looks for. Mirrors `numFeasibleNodesToFind`.

    Below 100 nodes, all; else `percentage` of them (adaptive when 0: 50 - nodes/125, at least
    5%), and never fewer than 100.
    """
    if nodes < MIN_FEASIBLE_NODES_TO_FIND or percentage >= 100:
        return nodes
    adaptive = percentage
    if adaptive <= 0:
        adaptive = max(50 - nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(nodes * adaptive // 100, MIN_FEASIBLE_NODES_TO_FIND)


def _head_length(needed: int, rate: float) -> int:
    """How many nodes to filter to find `needed` feasible ones at pass rate `rate`, with a margin."""
    return int(needed / max(rate, 1e-9) * 1.1) + 8


def _rotated_head(order: Ints, start: int, size: int) -> Ints:
    """The first `size` nodes of `order` from `start` on, wrapping round (a view when it need not wrap)."""
    end = start + size
    if end <= len(order):
        return order[start:end]
    return np.concatenate([order[start:], order[: end - len(order)]])


class _Verdicts(NamedTuple):
    """What the filters said: the plugin that turned each node away (-1: none) and its code, each
    plugin's result over the nodes it saw (positions), and the positions every filter passed."""

    first_fail: Ints
    codes: Ints
    results: list[tuple[Ints, FilterResult] | None]
    alive: Ints


@dataclass
class WeightedScore:
    plugin: ScorePlugin
    weight: int


@dataclass
class Profile:
    """A scheduler profile: filters in the order they run, weighted scores, how many nodes to score,
    and whether a pod that fits nowhere may preempt (DefaultPreemption, its only PostFilter plugin)."""

    filters: list[FilterPlugin] = field(default_factory=list)
    scores: list[WeightedScore] = field(default_factory=list)
    percentage_of_nodes_to_score: int = 0
    tie_break: str = "random"  # random (kube-scheduler's reservoir sampling) | first
    preemption: bool = True  # DefaultPreemption on; off, an unschedulable pod waits and nobody is evicted


def default_profile(
    weights: Mapping[str, int] | None = None,
    *,
    args: Mapping[str, Mapping[str, Any]] | None = None,
    spread: bool = False,
) -> Profile:
    """The default-scheduler profile's filters and scores (those skenario models), in upstream order.

    Plugins, their order and their weights come from the registry; `weights` overrides some of
    the weights (0 turns a score off) and `args` gives plugins their args. PodTopologySpread is in
    only with `spread`.
    """
    w = {**DEFAULT_WEIGHTS, **(weights or {})}
    filters, scores = new_plugins(args)
    names = [name for name in IN_TREE if spread or name != "PodTopologySpread"]
    return Profile(
        filters=[filters[name] for name in names if name in filters],
        scores=[WeightedScore(scores[name], w[name]) for name in names if name in scores and w[name] > 0],
    )


@dataclass
class FilterOutcome:
    """What the filters left, and for the nodes that failed whether preemption could help."""

    feasible: Ints
    failed: Ints
    resolvable: npt.NDArray[np.bool_]  # parallel to failed
    messages: dict[str, int]


class Framework:
    """Runs the profile's plugins for one pod at a time against a snapshot."""

    def __init__(self, profile: Profile, snapshot: ClusterSnapshot, rng: np.random.Generator) -> None:
        self.profile = profile
        self.snapshot = snapshot
        self._rng = rng
        self.next_start = 0  # `nextStartNodeIndex`
        # Which cycles keep each plugin's verdicts and scores in their Attempt (scores: only "all").
        self.record: PluginResults = "all"
        # Each plugin's PreFilter / PreScore Skip test, if it has one: a skipped filter passes every
        # node and a skipped score is 0 everywhere, so neither is run, and recorded as such.
        self._filter_skips = [getattr(plugin, "pre_filter_skips", None) for plugin in profile.filters]
        self._score_skips = [getattr(w.plugin, "pre_score_skips", None) for w in profile.scores]
        self._pass_rate = 1.0  # the share of nodes the last cycle's filters passed: how far to look

    def schedule(self, pod: PodSpec, now: int, nominated: str | None = None) -> tuple[Attempt, FilterOutcome]:
        snap = self.snapshot
        attempt = Attempt(
            pod=pod.name, at=now, candidates=len(snap.order), node_names=snap.names, examined=_NONE, feasible=_NONE
        )
        outcome = None
        if nominated is not None and nominated in snap.index:
            outcome = self._filter(pod, np.array([snap.index[nominated]], dtype=np.int64), attempt, limit=1)
        if outcome is None or not len(outcome.feasible):
            outcome = self._find_feasible(pod, attempt)
        attempt.feasible = outcome.feasible
        if not len(outcome.feasible):
            attempt.message = _unschedulable_message(attempt.candidates, outcome.messages)
            return attempt, outcome
        if len(outcome.feasible) == 1:
            attempt.selected = snap.nodes[int(outcome.feasible[0])].name
            return attempt, outcome
        total = np.zeros(len(outcome.feasible), dtype=np.int64)
        record = self.record == "all"
        for weighted, skips in zip(self.profile.scores, self._score_skips, strict=True):
            plugin = weighted.plugin
            if skips is not None and skips(pod, snap):
                if record:
                    zeros = np.zeros(len(outcome.feasible), dtype=np.int64)
                    attempt.scores.append(PluginScores(plugin.name, weighted.weight, zeros, zeros.astype(np.int16)))
                continue
            raw = np.asarray(plugin.score(pod, snap, outcome.feasible), dtype=np.int64)
            normalized = plugin.normalize(raw)
            if normalized is None:
                normalized = raw
            total += normalized if weighted.weight == 1 else normalized * weighted.weight
            if record:
                attempt.scores.append(
                    PluginScores(plugin.name, weighted.weight, raw, normalized.astype(np.int16, copy=False))
                )
        best = np.flatnonzero(total == total.max())
        pick = best[0]
        if len(best) > 1 and self.profile.tie_break == "random":
            pick = best[int(self._rng.integers(len(best)))]
        attempt.selected = snap.nodes[int(outcome.feasible[pick])].name
        return attempt, outcome

    def _find_feasible(self, pod: PodSpec, attempt: Attempt) -> FilterOutcome:
        """The filters over nodes from the rotating start until `numFeasibleNodesToFind` pass.

        Upstream stops checking nodes once enough pass; the filters here run over a head of the
        rotated order long enough to hold one feasible node more than wanted (its length guessed
        from the last cycle's pass rate, grown until it does or covers every node), so a cycle on a
        roomy cluster of 5,000 nodes filters a few hundred. The outcome is the one a pass over every
        node gives, since a filter's verdict on a node does not depend on the other nodes.
        """
        snap = self.snapshot
        order = snap.order
        n = len(order)
        if n == 0:
            empty = np.zeros(0, dtype=np.int64)
            return FilterOutcome(empty, empty, np.zeros(0, dtype=np.bool_), {})
        start = self.next_start % n
        want = num_feasible_nodes_to_find(n, self.profile.percentage_of_nodes_to_score)
        size = min(n, _head_length(want + 1, self._pass_rate))
        while True:
            head = _rotated_head(order, start, size)
            verdicts = self._run_filters(pod, head)
            passed = len(verdicts.alive)
            if passed > want or size == n:
                break
            rate = passed / size
            size = n if rate == 0 else min(n, max(2 * size, _head_length(want + 1, rate)))
        self._pass_rate = max(passed / size, 1 / n)
        outcome = self._conclude(head, verdicts, attempt, want)
        self.next_start = (start + len(attempt.examined)) % n
        return outcome

    def _filter(self, pod: PodSpec, nodes: Ints, attempt: Attempt, limit: int) -> FilterOutcome:
        """Run the filters over `nodes` in order, keeping the first `limit` that pass them all."""
        return self._conclude(nodes, self._run_filters(pod, nodes), attempt, limit)

    def _run_filters(self, pod: PodSpec, nodes: Ints) -> _Verdicts:
        """Every filter over the nodes the ones before it passed: which plugin turned each node away."""
        snap = self.snapshot
        first_fail = np.full(len(nodes), -1, dtype=np.int64)  # index of the plugin that rejected the node
        codes = np.zeros(len(nodes), dtype=np.int64)
        results: list[tuple[Ints, FilterResult] | None] = []
        alive = np.arange(len(nodes))
        alive_nodes = nodes
        record = self.record != "none"
        for k, (plugin, skips) in enumerate(zip(self.profile.filters, self._filter_skips, strict=True)):
            if not len(alive):
                results.append(None)
                continue
            if skips is not None and skips(pod, snap):  # every node passes, as the plugin would say
                results.append((alive, FilterResult(np.zeros(len(alive), dtype=np.int64))) if record else None)
                continue
            result = plugin.filter(pod, snap, alive_nodes)
            results.append((alive, result))
            # Most filters fail no node: then `alive` and its nodes stay the same arrays (no plugin
            # writes to its nodes), and `_record_verdicts` converts them once.
            if result.codes.any():
                failed = result.codes != 0
                first_fail[alive[failed]] = k
                codes[alive[failed]] = result.codes[failed]
                alive = alive[~failed]
                alive_nodes = nodes[alive]
        return _Verdicts(first_fail, codes, results, alive)

    def _conclude(self, nodes: Ints, verdicts: _Verdicts, attempt: Attempt, limit: int) -> FilterOutcome:
        """The first `limit` nodes that passed, what was examined, and for an unschedulable pod why."""
        first_fail, codes, results, alive = verdicts
        # The search stops at the `limit`-th feasible node: later nodes were never examined.
        examined_count = len(nodes) if len(alive) <= limit else int(alive[limit - 1]) + 1
        feasible_pos = alive[:limit]
        attempt.examined = nodes[:examined_count]
        failed_pos = np.flatnonzero(first_fail[:examined_count] >= 0)
        if not len(feasible_pos):  # only an unschedulable pod needs the reasons counted
            return self._diagnose(nodes, results, first_fail, codes, failed_pos, attempt, examined_count)
        if self.record == "all":
            self._record_verdicts(nodes, results, attempt, examined_count)
        return FilterOutcome(nodes[feasible_pos], nodes[failed_pos], np.ones(len(failed_pos), dtype=np.bool_), {})

    def _record_verdicts(
        self, nodes: Ints, results: list[tuple[Ints, FilterResult] | None], attempt: Attempt, examined: int
    ) -> None:
        # Most filters pass every node they see: those share one array of nodes (int32) and one of
        # zeros (int16) instead of building two per plugin; every consumer only reads them. With
        # `_filter` keeping `alive` when nothing fails, this took benchmarks/kep_scale.py's run from
        # 4.7 s to 4.2 s.
        last: Ints | None = None
        keep: npt.NDArray[np.bool_] = np.zeros(0, dtype=np.bool_)
        examined_nodes: npt.NDArray[Any] = np.zeros(0, dtype=np.int32)
        verdict_codes: npt.NDArray[Any]
        passed: npt.NDArray[Any] | None = None
        for k, entry in enumerate(results):
            if entry is None:
                continue
            alive_k, result = entry
            if alive_k is not last:
                last, passed = alive_k, None
                keep = alive_k < examined
                examined_nodes = nodes[alive_k[keep]].astype(np.int32)
            if result.codes.any():
                verdict_codes = result.codes[keep].astype(np.int16)
            else:
                if passed is None:
                    passed = np.zeros(len(examined_nodes), dtype=np.int16)
                verdict_codes = passed
            attempt.filters.append(
                FilterVerdicts(self.profile.filters[k].name, examined_nodes, verdict_codes, result.reasons)
            )

    def _diagnose(
        self,
        nodes: Ints,
        results: list[tuple[Ints, FilterResult] | None],
        first_fail: Ints,
        codes: Ints,
        failed_pos: Ints,
        attempt: Attempt,
        examined: int,
    ) -> FilterOutcome:
        """Why no node fits: how many nodes each reason turned away, and where preemption could help."""
        if self.record != "none":
            self._record_verdicts(nodes, results, attempt, examined)
        messages: dict[str, int] = {}
        resolvable = np.ones(len(failed_pos), dtype=np.bool_)
        plugin_of = first_fail[failed_pos]
        code_of = codes[failed_pos]
        for k, entry in enumerate(results):
            if entry is None:
                continue
            result = entry[1]
            mine = plugin_of == k
            if not mine.any():
                continue
            counts = np.bincount(code_of[mine])  # codes are small: counting beats np.unique's sort
            for code in np.flatnonzero(counts).tolist():
                text = result.reasons[code]
                messages[text] = messages.get(text, 0) + int(counts[code])
            if result.unresolvable:
                final = np.isin(code_of, list(result.unresolvable)) & mine
                resolvable[final] = False
        return FilterOutcome(nodes[:0], nodes[failed_pos], resolvable, messages)


def _unschedulable_message(candidates: int, messages: dict[str, int]) -> str:
    """kube-scheduler's FitError text: `0/3 nodes are available: 2 Insufficient cpu, 1 ...`."""
    parts = sorted(f"{count} {text}" for text, count in messages.items())
    head = f"0/{candidates} nodes are available"
    return f"{head}: {', '.join(parts)}." if parts else f"{head}."
