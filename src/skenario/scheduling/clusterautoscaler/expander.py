"""Which scale-up option to take: the expanders, each keeping its best options for the next.

Mirrors cluster-autoscaler's `expander/`: `expander.Option` (expander.go), the chaining of
`expander/factory`, and the strategies least-waste (`expander/waste`), most-pods
(`expander/mostpods`), least-nodes (`expander/leastnodes`), priority (`expander/priority`) and
random (`expander/random`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from skenario.scheduling.clusterautoscaler.config import CaSettings, NodeGroup
from skenario.scheduling.objects import PodSpec


@dataclass(frozen=True)
class ScaleUpOption:
    """One way to scale up (`expander.Option`): `nodes` new nodes of `group` would run `pods`."""

    group: NodeGroup
    nodes: int
    pods: tuple[PodSpec, ...]


def _waste(option: ScaleUpOption) -> float:
    """Least-waste's score: unused CPU share plus unused memory share over the added nodes."""
    template = option.group.template
    wasted = 0.0
    for capacity, requested in (
        (template.cpu, sum(p.cpu_request for p in option.pods)),
        (template.memory, sum(p.memory_request for p in option.pods)),
    ):
        available = capacity * option.nodes
        if available > 0:
            wasted += (available - requested) / available
    return wasted


def _keep_best(options: list[ScaleUpOption], key: Callable[[ScaleUpOption], float]) -> list[ScaleUpOption]:
    best = min(key(o) for o in options)
    return [o for o in options if key(o) == best]


def keep_highest_priority(
    options: list[ScaleUpOption], priorities: Sequence[tuple[int, Sequence[str]]]
) -> list[ScaleUpOption]:
    """The options whose group has the highest priority; all of them if no group has one.

    Mirrors `priority.BestOptions`: a group's priority is the highest whose regular expressions
    match its name anywhere (Go's `FindStringIndex`, here `re.search`); a group no expression
    matches is not used, and if none matches the options pass unchanged.
    """
    best: list[ScaleUpOption] = []
    top = -1
    for option in options:
        matching = [p for p, patterns in priorities if any(re.search(x, option.group.name) for x in patterns)]
        if not matching:
            continue
        priority = max(matching)
        if priority > top:
            top, best = priority, []
        if priority == top:
            best.append(option)
    return best or options


def best_option(
    options: Sequence[ScaleUpOption], settings: CaSettings, rng: np.random.Generator | None = None
) -> ScaleUpOption | None:
    """The option the expander chain picks.

    Mirrors `expander/factory` chaining: each expander keeps its best options and hands them on.
    least-waste (`expander/waste`) keeps the smallest (unused CPU)/(CPU of the added nodes) plus
    the same for memory (upstream reads the template's capacity; here its allocatable); most-pods
    (`expander/mostpods`) the most pods helped; least-nodes (`expander/leastnodes`) the fewest
    nodes; priority (`keep_highest_priority`) the groups of the highest priority; random
    (`expander/random`) one at random. Ties left at the end are broken at random upstream, here
    with `rng`, or by group name without one. A "random" expander needs `rng`.
    """
    remaining = list(options)
    if not remaining:
        return None
    for name in settings.expanders:
        if len(remaining) == 1:
            break
        if name == "least-waste":
            remaining = _keep_best(remaining, _waste)
        elif name == "most-pods":
            remaining = _keep_best(remaining, lambda o: -len(o.pods))
        elif name == "least-nodes":
            remaining = _keep_best(remaining, lambda o: o.nodes)
        elif name == "priority":
            remaining = keep_highest_priority(remaining, settings.priorities)
        else:
            if rng is None:
                raise ValueError("the random expander needs an rng")
            remaining = [remaining[int(rng.integers(len(remaining)))]]
    if len(remaining) == 1:
        return remaining[0]
    if rng is not None:
        return remaining[int(rng.integers(len(remaining)))]
    return min(remaining, key=lambda o: o.group.name)
