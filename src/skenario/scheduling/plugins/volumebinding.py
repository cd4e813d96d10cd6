"""VolumeBinding: a pod's claims must be bound to volumes the node reaches, or be bindable there.

Mirrors `pkg/scheduler/framework/plugins/volumebinding/volume_binding.go` (`PreFilter`, `Filter`)
over the binder of `skenario.scheduling.volumes` (binder.go's `GetPodVolumeClaims`,
`FindPodVolumes`). For the whole pod first, as upstream's PreFilter, every node failing alike:

- a claim that does not exist: `persistentvolumeclaim "<name>" not found` (without a catalog, in a
  scenario with no volumes, every claim is missing, as the lister finds none upstream);
- an unbound claim whose class binds at once, or is unset or unknown: "pod has unbound immediate
  PersistentVolumeClaims" (the PV controller binds those, not the scheduler).

Then per node, as `FindPodVolumes`:

- a bound claim's volume must reach the node: "node(s) had volume node affinity conflict";
- a bound claim's volume must exist: "node(s) unavailable due to one or more pvc(s) bound to
  non-existent pv(s)";
- each unbound WaitForFirstConsumer claim, smallest request first, takes the smallest matching
  Available volume the node reaches and no earlier claim took, or else its class must provision
  there (a provisioner other than `kubernetes.io/no-provisioner` whose allowed topologies admit
  the node): "node(s) didn't find available persistent volumes to bind".

Every failure is UnschedulableAndUnresolvable. Upstream lists each reason that applies; the first
(in that order: affinity conflict, bind conflict, missing volume) is reported here, as
NodeResourcesFit reports its first. The score is left out: it is behind the StorageCapacityScoring
feature gate (off by default), and prefers the nodes whose matched volumes the claims fill most.

A pod without claims passes every node at once. Otherwise the volumes are grouped by node
affinity, each group's nodes found once per snapshot version from an index of the nodes' labels
(`NodeLabelIndex`), and a claim's volume at every node is one `np.minimum.at` over the groups'
rows: with 2,000 local volumes on 1,000 nodes a claim costs 3 ms, where matching each volume at
each node would be 2 million matches. `VolumeCatalog.find_pod_volumes` is the same rule node by
node; the tests hold the two equal.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from skenario.scheduling.affinity import Requirement, Term
from skenario.scheduling.objects import PodSpec
from skenario.scheduling.plugins.interface import FilterResult, Ints
from skenario.scheduling.snapshot import Bools, ClusterSnapshot
from skenario.scheduling.volumes import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_PV_NOT_EXIST,
    PersistentVolume,
    PersistentVolumeClaim,
    VolumeCatalog,
    check_access_modes,
)

ERR_REASON_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"

NODE_CONFLICT, BIND_CONFLICT, PV_NOT_EXIST = 1, 2, 3
REASONS = ("", ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT, ERR_REASON_PV_NOT_EXIST)


def claim_not_found(name: str) -> str:
    """The claim lister's NotFound error, as `podHasPVCs` returns it."""
    return f'persistentvolumeclaim "{name}" not found'


def everywhere(n: int, reason: str) -> FilterResult:
    """Every node fails with one UnschedulableAndUnresolvable reason: a PreFilter's rejection."""
    return FilterResult(np.ones(n, dtype=np.int64), ("", reason), frozenset({1}))


class NodeLabelIndex:
    """Which nodes satisfy node selector terms, over every row of one snapshot version.

    Terms match as `volume.CheckNodeAffinity` matches them, on the labels alone (a `matchFields`
    requirement sees an empty name). A node's labels are indexed per key once (value: rows), so an
    `In` term on the hostname is a lookup, not a pass over the nodes; the masks are kept per
    distinct tuple of terms until the nodes change.
    """

    def __init__(self) -> None:
        self._version = -1
        self._rows: dict[str, dict[str, list[int]]] = {}
        self._masks: dict[tuple[Term, ...], Bools] = {}
        self._found: dict[tuple[Term, ...], Ints] = {}

    def terms(self, terms: tuple[Term, ...], snap: ClusterSnapshot) -> Bools:
        """The rows matching any of the terms (no terms: every row). Do not modify the result."""
        if snap.version != self._version:
            self._version = snap.version
            self._rows.clear()
            self._masks.clear()
            self._found.clear()
        mask = self._masks.get(terms)
        if mask is None:
            n = len(snap.nodes)
            if not terms:
                mask = np.ones(n, dtype=np.bool_)
            else:
                mask = np.zeros(n, dtype=np.bool_)
                for term in terms:
                    mask |= self._term(term, snap)
            self._masks[terms] = mask
        return mask

    def rows(self, terms: tuple[Term, ...], snap: ClusterSnapshot) -> Ints:
        """The rows matching any of the terms, as indices. Do not modify the result."""
        mask = self.terms(terms, snap)
        found = self._found.get(terms)
        if found is None:
            found = np.flatnonzero(mask).astype(np.int64)
            self._found[terms] = found
        return found

    def _term(self, term: Term, snap: ClusterSnapshot) -> Bools:
        n = len(snap.nodes)
        if not term.match_expressions and not term.match_fields:
            return np.zeros(n, dtype=np.bool_)  # an empty term matches no node
        mask = np.ones(n, dtype=np.bool_)
        for r in term.match_expressions:
            mask &= self._requirement(r, snap)
        if not all(r.matches({"metadata.name": ""}) for r in term.match_fields):
            mask[:] = False
        return mask

    def _requirement(self, r: Requirement, snap: ClusterSnapshot) -> Bools:
        n = len(snap.nodes)
        if r.operator in ("Gt", "Lt"):
            return np.fromiter((r.matches(node.labels) for node in snap.nodes), dtype=np.bool_, count=n)
        rows = self._index(r.key, snap)
        mask = np.zeros(n, dtype=np.bool_)
        values = r.values if r.operator in ("In", "NotIn") else tuple(rows)
        for value in values:
            mask[rows.get(value, [])] = True
        return mask if r.operator in ("In", "Exists") else ~mask

    def _index(self, key: str, snap: ClusterSnapshot) -> dict[str, list[int]]:
        rows = self._rows.get(key)
        if rows is None:
            rows = {}
            for i, node in enumerate(snap.nodes):
                value = node.labels.get(key)
                if value is not None:
                    rows.setdefault(value, []).append(i)
            self._rows[key] = rows
        return rows


class VolumeBinding:
    """Filter: the pod's claims are bound to volumes the node reaches, or bindable there. Mirrors `VolumeBinding`."""

    name = "VolumeBinding"

    def __init__(self) -> None:
        self._index = NodeLabelIndex()

    def pre_filter_skips(self, pod: PodSpec, snap: ClusterSnapshot) -> bool:
        return not pod.claims

    def filter(self, pod: PodSpec, snap: ClusterSnapshot, nodes: Ints) -> FilterResult:
        codes = np.zeros(len(nodes), dtype=np.int64)
        if not pod.claims:  # PreFilter: Skip
            return FilterResult(codes)
        catalog: VolumeCatalog | None = snap.volumes
        missing = pod.claims[0] if catalog is None else catalog.missing_claim(pod)
        if missing is not None:
            return everywhere(len(nodes), claim_not_found(missing))
        assert catalog is not None
        claims = catalog.pod_claims(pod)
        if claims.immediate:
            return everywhere(len(nodes), ERR_REASON_UNBOUND_IMMEDIATE)
        conflict, pv_missing = self._bound(claims.bound, catalog, snap, nodes)
        codes[pv_missing] = PV_NOT_EXIST
        codes[self._unbindable(claims.delayed, catalog, snap, nodes)] = BIND_CONFLICT
        codes[conflict] = NODE_CONFLICT
        return FilterResult(codes, REASONS, frozenset({NODE_CONFLICT, BIND_CONFLICT, PV_NOT_EXIST}))

    def _bound(
        self, claims: Sequence[PersistentVolumeClaim], catalog: VolumeCatalog, snap: ClusterSnapshot, nodes: Ints
    ) -> tuple[Bools, Bools]:
        """`checkBoundClaims`: the nodes out of a bound volume's reach, and those where a bound volume is missing.

        Upstream stops at the first claim that fails a node: a missing volume after an unreachable
        one is not noticed there, nor an unreachable one after a missing one.
        """
        conflict = np.zeros(len(nodes), dtype=np.bool_)
        undecided = np.ones(len(nodes), dtype=np.bool_)
        for claim in claims:
            pv = catalog.volume(claim.volume_name or "")
            if pv is None:
                return conflict, undecided
            reach = self._index.terms(pv.node_affinity, snap)[nodes]
            conflict |= undecided & ~reach
            undecided &= reach
        return conflict, np.zeros(len(nodes), dtype=np.bool_)

    def _unbindable(
        self, claims: Sequence[PersistentVolumeClaim], catalog: VolumeCatalog, snap: ClusterSnapshot, nodes: Ints
    ) -> Bools:
        """The nodes where some unbound delayed claim finds no volume and cannot be provisioned."""
        ok = np.ones(len(nodes), dtype=np.bool_)
        taken: dict[str, Bools] = {}  # a volume's name: the rows where an earlier claim took it
        for claim in sorted(claims, key=lambda c: c.request):
            matched = self._match(claim, catalog, snap, nodes, taken)
            sc = catalog.storage_class(claim.class_name)
            if sc is not None and sc.can_provision:
                matched = matched | self._index.terms(sc.allowed_topologies, snap)[nodes]
            ok &= matched
        return ~ok

    def _match(
        self,
        claim: PersistentVolumeClaim,
        catalog: VolumeCatalog,
        snap: ClusterSnapshot,
        nodes: Ints,
        taken: dict[str, Bools],
    ) -> Bools:
        """`FindMatchingVolume` at every node at once: where the claim gets a volume; records what it takes.

        The candidates are ranked as upstream picks (smallest, then first listed); per group of
        equal node affinity, the best candidate at a node is the first the node reaches that no
        earlier claim took there, and across groups the lowest rank wins.
        """
        candidates: list[PersistentVolume] = []
        for pv in catalog.volumes_of(claim.class_name):
            if (pv.claim_ref is not None and pv.claim_ref != claim.key) or pv.capacity < claim.request:
                continue
            if pv.claim_ref == claim.key:  # pre-bound to this claim: it, where reachable, or nothing
                return self._index.terms(pv.node_affinity, snap)[nodes]
            if check_access_modes(claim, pv):
                candidates.append(pv)
        ranked = sorted(candidates, key=lambda pv: pv.capacity)  # stable: the first listed among equals
        groups: dict[tuple[Term, ...], list[int]] = {}
        for rank, pv in enumerate(ranked):
            groups.setdefault(pv.node_affinity, []).append(rank)
        none = len(ranked)
        best = np.full(len(snap.nodes), none, dtype=np.int64)  # by row: the rank of the volume chosen there
        reached: list[Ints] = []  # rows of the groups none of whose volumes an earlier claim took
        firsts: list[int] = []
        for affinity, ranks in groups.items():
            rows = self._index.rows(affinity, snap)
            if not any(ranked[rank].name in taken for rank in ranks):
                reached.append(rows)  # its first volume, wherever the group reaches
                firsts.append(ranks[0])
                continue
            for rank in ranks:  # the first volume of the group not taken at each row
                gone = taken.get(ranked[rank].name)
                free = rows if gone is None else rows[~gone[rows]]
                best[free] = np.minimum(best[free], rank)
                rows = rows[:0] if gone is None else rows[gone[rows]]
                if not len(rows):
                    break
        if reached:
            np.minimum.at(best, np.concatenate(reached), np.repeat(firsts, [len(r) for r in reached]))
        at_nodes = best[nodes]
        matched = at_nodes < none
        for rank in np.unique(at_nodes[matched]).tolist():
            name = ranked[rank].name
            here = best == rank
            taken[name] = here if name not in taken else taken[name] | here
        return matched
