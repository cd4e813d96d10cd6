"""The snapshot's pod groups: counts kept as pods come and go equal counts taken afresh.

The groups are checked on the module's worked example, against a recount written here from
`pods_on` (terms compared by equality, not by the module's keys) after random assumes and releases,
through a fork, and through InterPodAffinity: after pods leave, the plugin filters and scores as on
a snapshot that only ever held the pods that stayed.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.scheduling.affinity import Requirement
from skenario.scheduling.objects import (
    LabelSelector,
    NodeSpec,
    PodAffinity,
    PodAffinityTerm,
    PodSpec,
    WeightedPodAffinityTerm,
)
from skenario.scheduling.plugins.interpodaffinity import InterPodAffinityPlugin
from skenario.scheduling.podgroups import PodGroups, frozen, group_key
from skenario.scheduling.snapshot import ClusterSnapshot

KINDS = ("required_affinity", "required_anti", "preferred_affinity", "preferred_anti")


def zone_term(app: str, key: str = "zone", namespaces: tuple[str, ...] = ()) -> PodAffinityTerm:
    return PodAffinityTerm(key, LabelSelector(match_labels={"app": app}), namespaces=namespaces)


def test_the_worked_example() -> None:
    """Three web replicas, two on row 0 and one on row 3, each shunning app=web by zone with weight 50."""
    shun = PodAffinity(preferred=(WeightedPodAffinityTerm(50, zone_term("web")),))
    groups = PodGroups()
    for name, row in (("a", 0), ("b", 0), ("c", 3)):
        groups.add(PodSpec(name, labels={"app": "web"}, pod_anti_affinity=shun), row)
    assert {k: g.rows for k, g in groups.pods.items()} == {("default", (("app", "web"),)): {0: 2, 3: 1}}
    (entry,) = groups.preferred_anti.values()
    assert (entry.term, entry.owner_namespace, entry.weight, entry.rows) == (
        zone_term("web"),
        "default",
        50,
        {0: 2, 3: 1},
    )
    assert not groups.required_affinity and not groups.required_anti and not groups.preferred_affinity
    # The pods leave one by one; the last takes its groups with it.
    groups.remove(PodSpec("a", labels={"app": "web"}, pod_anti_affinity=shun), 0)
    assert entry.rows == {0: 1, 3: 1}
    groups.remove(PodSpec("b", labels={"app": "web"}, pod_anti_affinity=shun), 0)
    groups.remove(PodSpec("c", labels={"app": "web"}, pod_anti_affinity=shun), 3)
    assert not groups.pods and not groups.preferred_anti


def test_a_term_key_sees_every_field_and_no_order() -> None:
    base = zone_term("web")
    same = PodAffinityTerm("zone", LabelSelector(match_labels=dict(reversed({"app": "web", "x": "1"}.items()))))
    assert frozen(same) == frozen(PodAffinityTerm("zone", LabelSelector(match_labels={"app": "web", "x": "1"})))
    others = [
        replace(base, topology_key="rack"),
        replace(base, label_selector=LabelSelector(match_labels={"app": "db"})),
        replace(base, label_selector=LabelSelector({"app": "web"}, (Requirement("tier", "Exists"),))),
        replace(base, label_selector=None),
        replace(base, namespaces=("other",)),
        replace(base, namespace_selector=LabelSelector()),
    ]
    keys = [frozen(t) for t in [base, *others]]
    assert len(set(keys)) == len(keys)


# -- against a recount -----------------------------------------------------------------------------

APPS = ("a", "b")
NAMESPACES = ("default", "other")
terms = st.builds(
    lambda app, key, listed: zone_term(app, key, ("other",) if listed else ()),
    st.sampled_from(APPS),
    st.sampled_from(("zone", "rack")),
    st.booleans(),
)
preferred = st.lists(st.builds(WeightedPodAffinityTerm, st.sampled_from((1, 50)), terms), max_size=2).map(tuple)
required = st.lists(terms, max_size=2).map(tuple)
specs = st.builds(
    lambda labels, namespace, r, p, ra, pa: PodSpec(
        "p",
        namespace=namespace,
        labels=labels,
        pod_affinity=PodAffinity(r, p),
        pod_anti_affinity=PodAffinity(ra, pa),
    ),
    st.fixed_dictionaries({}, optional={"app": st.sampled_from(APPS), "tier": st.sampled_from(("1", "2"))}),
    st.sampled_from(NAMESPACES),
    required,
    preferred,
    required,
    preferred,
)


def recount(snap: ClusterSnapshot) -> tuple[dict, list[tuple[tuple, dict[int, int]]]]:
    """The groups taken afresh from `pods_on`: pods by namespace and sorted labels, terms by equality."""
    pods: dict = {}
    found: list[tuple[tuple, dict[int, int]]] = []
    for row, on in enumerate(snap.pods_on):
        for p in on.values():
            rows = pods.setdefault((p.namespace, tuple(sorted(p.labels.items()))), {})
            rows[row] = rows.get(row, 0) + 1
            written = (
                [("required_affinity", 1, t) for t in p.pod_affinity.required]
                + [("required_anti", 1, t) for t in p.pod_anti_affinity.required]
                + [("preferred_affinity", w.weight, w.term) for w in p.pod_affinity.preferred]
                + [("preferred_anti", w.weight, w.term) for w in p.pod_anti_affinity.preferred]
            )
            for kind, weight, t in written:
                key = (kind, p.namespace, weight, t)
                for seen, counts in found:
                    if seen == key:
                        counts[row] = counts.get(row, 0) + 1
                        break
                else:
                    found.append((key, {row: 1}))
    return pods, found


def assert_recounted(snap: ClusterSnapshot) -> None:
    pods, found = recount(snap)
    groups = snap.groups
    assert {k: g.rows for k, g in groups.pods.items()} == pods
    for key, g in groups.pods.items():
        assert group_key(g.pod) == key
    kept = [
        ((kind, g.owner_namespace, g.weight, g.term), g.rows) for kind in KINDS for g in getattr(groups, kind).values()
    ]
    assert len(kept) == len(found)  # one entry per distinct term, none left over
    for key, rows in kept:
        assert (key, rows) in found
    assert all(n > 0 for _, rows in kept for n in rows.values())


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_kept_counts_equal_a_recount(data: st.DataObject) -> None:
    snap = ClusterSnapshot([NodeSpec(f"n{i}", cpu=1000, memory=1000) for i in range(3)])
    placed: list[tuple[PodSpec, int]] = []
    for step in range(data.draw(st.integers(0, 25))):
        if placed and data.draw(st.booleans()):
            spec, row = placed.pop(data.draw(st.integers(0, len(placed) - 1)))
            snap.release(spec, row)
        else:
            spec = replace(data.draw(specs), name=f"pod-{step}")
            row = data.draw(st.integers(0, 2))
            snap.assume(spec, row)
            placed.append((spec, row))
        assert_recounted(snap)
    forked = snap.fork()
    before = recount(snap)
    for spec, row in placed:
        forked.release(spec, row)
    assert not forked.groups.pods and recount(snap) == before
    assert_recounted(snap)


def test_a_removed_node_takes_its_pods_out_of_the_groups() -> None:
    snap = ClusterSnapshot([NodeSpec("n0", cpu=1000, memory=1000), NodeSpec("n1", cpu=1000, memory=1000)])
    snap.assume(PodSpec("a", labels={"app": "web"}, pod_anti_affinity=PodAffinity((zone_term("web"),))), 0)
    snap.assume(PodSpec("b", labels={"app": "web"}), 1)
    snap.remove_node("n0")
    assert {k: g.rows for k, g in snap.groups.pods.items()} == {("default", (("app", "web"),)): {1: 1}}
    assert not snap.groups.required_anti


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.fixed_dictionaries({}, optional={"zone": st.sampled_from(("z1", "z2"))}), min_size=1, max_size=4),
    st.lists(st.tuples(specs, st.integers(0, 3), st.booleans()), max_size=8),
    specs,
)
def test_interpodaffinity_after_pods_leave_is_as_if_they_never_came(
    labels: list[dict[str, str]], pods: list[tuple[PodSpec, int, bool]], incoming: PodSpec
) -> None:
    nodes = [NodeSpec(f"n{i}", cpu=1000, memory=1000, labels=ls) for i, ls in enumerate(labels)]
    churned, fresh = ClusterSnapshot(nodes), ClusterSnapshot(nodes)
    placed = [(replace(spec, name=f"pod-{k}"), row % len(nodes), stays) for k, (spec, row, stays) in enumerate(pods)]
    for spec, row, stays in placed:
        churned.assume(spec, row)
        if stays:
            fresh.assume(spec, row)
    for spec, row, stays in placed:
        if not stays:
            churned.release(spec, row)
    plugin, every = InterPodAffinityPlugin(), np.arange(len(nodes), dtype=np.int64)
    assert (
        plugin.filter(incoming, churned, every).codes.tolist() == plugin.filter(incoming, fresh, every).codes.tolist()
    )
    assert plugin.score(incoming, churned, every).tolist() == plugin.score(incoming, fresh, every).tolist()
