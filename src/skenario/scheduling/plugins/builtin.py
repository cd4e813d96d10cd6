"""Which built-in plugins a profile turns off, merged as kube-scheduler merges a profile's plugin sets.

A profile names plugins per extension point (multiPoint, queueSort, preEnqueue, filter, postFilter,
bind, ...), each with `enabled` and `disabled` lists; `"*"` in `disabled` stands for every default.
In v1 every default plugin is listed under multiPoint alone (`getDefaultPlugins`), so a built-in
plugin B, serving the point P, is on when:

1. P's `enabled` names B: `updatePluginList` puts it in P's list, whatever P's `disabled` says;
2. otherwise, P's `disabled` names B or `"*"`: `expandMultiPointPlugins` skips it ("Skipped
   MultiPoint expansion because all plugins are disabled for extension point"), so B is off;
3. otherwise, B is on when it is still in multiPoint after `mergePluginSet`: multiPoint's
   `enabled` names it, or multiPoint's `disabled` names neither it nor `"*"`.

So `postFilter: {disabled: [{name: "*"}]}` turns DefaultPreemption off, and
`queueSort: {disabled: [{name: "*"}], enabled: [{name: PrioritySort}]}` keeps PrioritySort on.
A built-in named in `disabled` at a point it does not serve changes nothing, as upstream.
What a built-in being off means, and which may not be, is the registry's `BUILT_IN`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from skenario.scheduling.plugins.registry import BUILT_IN, cannot_disable

ALL = "*"
MULTI_POINT = "multiPoint"


@dataclass(frozen=True)
class PointSet:
    """One extension point's lists of plugin names, as a profile writes them."""

    enabled: Sequence[str] = ()
    disabled: Sequence[str] = ()


@dataclass(frozen=True)
class TurnedOff:
    """Where a built-in plugin was turned off: the extension point, and the index of the entry in its
    `disabled` list that named it (or `"*"`)."""

    point: str
    index: int
    name: str  # the entry's name: the plugin's, or "*"


def turned_off(points: Mapping[str, PointSet]) -> dict[str, TurnedOff]:
    """The built-in plugins a profile turns off (in `BUILT_IN` order), each with the entry that did it."""
    multi = points.get(MULTI_POINT, PointSet())
    off: dict[str, TurnedOff] = {}
    for name, built_in in BUILT_IN.items():
        own = points.get(built_in.point, PointSet())
        if name in own.enabled:
            continue
        where = _entry(own, built_in.point, name)
        if where is None and name not in multi.enabled:
            where = _entry(multi, MULTI_POINT, name)
        if where is not None:
            off[name] = where
    return off


def refusals(points: Mapping[str, PointSet]) -> list[tuple[TurnedOff, str]]:
    """Each required built-in plugin the profile turns off, with the entry that did it and why it may not."""
    out = []
    for name, where in turned_off(points).items():
        problem = cannot_disable(name)
        if problem is None:
            continue
        if where.name == ALL:
            own = BUILT_IN[name].point
            keep = f"{own}.enabled" if where.point == own else f"{MULTI_POINT}.enabled or {own}.enabled"
            problem += f" ({where.point}.disabled '*' turns it off unless {keep} names it)"
        out.append((where, problem))
    return out


def _entry(points: PointSet, point: str, name: str) -> TurnedOff | None:
    """The first entry of `disabled` naming `name` or `"*"`, or None."""
    for index, disabled in enumerate(points.disabled):
        if disabled in (name, ALL):
            return TurnedOff(point, index, disabled)
    return None
