"""Persistent volumes, their claims and storage classes, and what the scheduler's volume binder does with them.

A worked picture. A StatefulSet pod `web-0` in `default` uses the claim `data-web-0`: 10 GiB of
class `local`, WaitForFirstConsumer, provisioner `kubernetes.io/no-provisioner`. Of nodes `a`, `b`
and `c`, `a` holds two Available local PVs of class `local`, 20 GiB and 50 GiB (node affinity
`kubernetes.io/hostname In [a]`), `b` one of 100 GiB, `c` none.

1. The VolumeBinding filter (`plugins.volumebinding`) passes `a` and `b`, which reach a PV big
   enough, and fails `c`: no PV there, and the class cannot provision ("node(s) didn't find
   available persistent volumes to bind").
2. The scheduler picks `a`; `VolumeCatalog.assume` binds the claim to the smallest PV `a` reaches,
   the 20 GiB one (its `claim_ref` becomes `default/data-web-0`, the claim's `volume_name` its name).
3. The next pod's claim finds the 50 GiB PV on `a` and the 100 GiB one on `b`; once bound, a claim
   ties its pod to where its PV is.

Mirrors `pkg/scheduler/framework/plugins/volumebinding/binder.go` (`GetPodVolumeClaims`,
`FindPodVolumes`, `checkBoundClaims`, `findMatchingVolumes`, `checkVolumeProvisions`,
`AssumePodVolumes`) and the helpers of `k8s.io/component-helpers/storage/volume`
(`FindMatchingVolume`, `CheckNodeAffinity`, `CheckAccessModes`, `IsDelayBindingMode`,
`GetPersistentVolumeClaimClass`) and `v1helper.MatchTopologySelectorTerms`. The invariant: a claim
is bound when it names its volume (`volume_name`), and a volume is taken when it names a claim
(`claim_ref`); `assume` sets both at once, where upstream the PV controller completes what the
binder starts (`BindPodVolumes`), and a dynamically provisioned PV appears at once, bound.

Not modelled: volume modes (every volume is a Filesystem), volume attributes classes, a claim's
label selector, PV phases other than Available and Bound (a PV is Available when it names no
claim), a claim whose `volume_name` is set before the PV controller confirms it (such a claim is
bound here, where upstream it is "prebound" and waits as an unbound immediate claim), storage
capacity tracking (`CSIStorageCapacity`), and the PV controller's own work: an Immediate claim
stays unbound unless the scenario binds it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from skenario.scheduling.affinity import Requirement, Term
from skenario.scheduling.objects import ZONE_LABEL, NodeSpec, PodSpec

IMMEDIATE = "Immediate"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
BINDING_MODES = (IMMEDIATE, WAIT_FOR_FIRST_CONSUMER)
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"  # volume.NotSupportedProvisioner

# The in-tree provisioners whose volumes CSI migration hands to a CSI driver (csi-translation-lib):
# a volume they make counts against that driver's limit on a node.
IN_TREE_TO_CSI: Mapping[str, str] = {
    "kubernetes.io/aws-ebs": "ebs.csi.aws.com",
    "kubernetes.io/gce-pd": "pd.csi.storage.gke.io",
    "kubernetes.io/azure-disk": "disk.csi.azure.com",
    "kubernetes.io/cinder": "cinder.csi.openstack.org",
}

# binder.go's ConflictReasons, in the order FindPodVolumes appends them.
ERR_REASON_NODE_CONFLICT = "node(s) had volume node affinity conflict"
ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"

# Catalog versions are unique across catalogs, so a cache keyed on one never takes another's facts.
_VERSIONS = itertools.count(1)


@dataclass(frozen=True)
class PersistentVolume:
    """A `v1.PersistentVolume`: its size in bytes, class, access modes, where it can be used, and its claim.

    `node_affinity` is the required `nodeSelectorTerms` (ORed; none: any node); `labels` are the
    object's, of which VolumeZone reads the legacy zone and region ones; `csi_driver` the CSI driver
    that attaches it (an in-tree volume migrated to CSI names its driver), None for other volumes;
    `claim_ref` the claim it is bound or pre-bound to, "namespace/name".
    """

    name: str
    capacity: int
    storage_class: str = ""
    access_modes: tuple[str, ...] = ()
    node_affinity: tuple[Term, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    csi_driver: str | None = None
    claim_ref: str | None = None


@dataclass(frozen=True)
class PersistentVolumeClaim:
    """A `v1.PersistentVolumeClaim`: its class (None: unset), the storage it requests, and its volume once bound."""

    namespace: str
    name: str
    storage_class: str | None = None
    request: int = 0
    access_modes: tuple[str, ...] = ()
    volume_name: str | None = None

    @property
    def key(self) -> str:
        """The claim as a PV's `claimRef` names it: "namespace/name"."""
        return f"{self.namespace}/{self.name}"

    @property
    def class_name(self) -> str:
        """The class the claim asks for, "" for none (`GetPersistentVolumeClaimClass`)."""
        return self.storage_class or ""


@dataclass(frozen=True)
class StorageClass:
    """A `storage.k8s.io/v1` StorageClass: who provisions its volumes, when, and on which nodes.

    `allowed_topologies` are its `allowedTopologies` terms (ORed; none: every node), each a `Term`
    of `In` requirements.
    """

    name: str
    provisioner: str
    volume_binding_mode: str = IMMEDIATE
    allowed_topologies: tuple[Term, ...] = ()

    def __post_init__(self) -> None:
        if self.volume_binding_mode not in BINDING_MODES:
            raise ValueError(
                f"unknown volumeBindingMode {self.volume_binding_mode!r} (modes: {', '.join(BINDING_MODES)})"
            )

    @property
    def can_provision(self) -> bool:
        """Whether a claim of this class may be provisioned at all (`checkVolumeProvisions`)."""
        return self.provisioner not in ("", NOT_SUPPORTED_PROVISIONER)


# -- the helpers of component-helpers/storage/volume -------------------------------------------


def check_node_affinity(pv: PersistentVolume, labels: Mapping[str, str]) -> bool:
    """Whether a node with these labels may use the volume (`volume.CheckNodeAffinity`).

    Upstream matches the terms against a node made of the labels alone, so a `matchFields`
    requirement on `metadata.name` sees an empty name: it is kept here.
    """
    return not pv.node_affinity or any(t.matches(labels, "") for t in pv.node_affinity)


def match_topology(terms: Sequence[Term], labels: Mapping[str, str]) -> bool:
    """Whether the labels satisfy a class's allowed topologies (`v1helper.MatchTopologySelectorTerms`).

    No term matches every node; an empty term matches none.
    """
    return not terms or any(t.matches(labels, "") for t in terms)


def check_access_modes(claim: PersistentVolumeClaim, pv: PersistentVolume) -> bool:
    """The volume offers every access mode the claim asks for (`volume.CheckAccessModes`)."""
    return set(claim.access_modes) <= set(pv.access_modes)


def is_prebound(pv: PersistentVolume, claim: PersistentVolumeClaim) -> bool:
    """The volume names this claim (`volume.IsVolumeBoundToClaim`)."""
    return pv.claim_ref == claim.key


def find_matching_volume(
    claim: PersistentVolumeClaim,
    volumes: Iterable[PersistentVolume],
    labels: Mapping[str, str],
    excluded: Iterable[str] = (),
) -> PersistentVolume | None:
    """The volume the scheduler would bind the claim to on a node with these labels, or None.

    Mirrors `volume.FindMatchingVolume` on the scheduler's path (a node given, delay binding): a
    volume pre-bound to the claim wins if the node reaches it and none does otherwise; else the
    smallest Available volume of the claim's class, large enough, offering the claim's access modes
    and reachable from the node, the first listed among equals. `excluded` are the volumes earlier
    claims of the same pod took.
    """
    skip = set(excluded)
    smallest: PersistentVolume | None = None
    for pv in volumes:
        if pv.name in skip or (pv.claim_ref is not None and not is_prebound(pv, claim)):
            continue
        if pv.capacity < claim.request:
            continue
        reachable = check_node_affinity(pv, labels)
        if is_prebound(pv, claim):
            return pv if reachable else None
        if pv.storage_class != claim.class_name or not reachable or not check_access_modes(claim, pv):
            continue
        if smallest is None or smallest.capacity > pv.capacity:
            smallest = pv
    return smallest


def csi_driver_of(provisioner: str) -> str:
    """The CSI driver whose limit a volume of this provisioner counts against (an in-tree one's migration target)."""
    return IN_TREE_TO_CSI.get(provisioner, provisioner)


def provisioned_csi_driver(provisioner: str) -> str | None:
    """The CSI driver of a volume this provisioner makes: a migrated in-tree one's target, none for the
    other in-tree provisioners, else the provisioner itself (a CSI driver provisions under its own name)."""
    if provisioner in IN_TREE_TO_CSI:
        return IN_TREE_TO_CSI[provisioner]
    return None if provisioner.startswith("kubernetes.io/") else provisioner


def provisioned_topology(storage_class: StorageClass, labels: Mapping[str, str]) -> tuple[Term, ...]:
    """The node affinity a volume provisioned for a node with these labels gets.

    A CSI provisioner gives the volume the topology its driver reports for the node; skenario takes
    the keys of the class's allowed topologies, or else the zone, with the node's values: a zonal
    volume, as cloud block storage makes. A node without those labels gets a volume usable anywhere.
    """
    keys = [r.key for t in storage_class.allowed_topologies for r in t.match_expressions] or [ZONE_LABEL]
    requirements = tuple(Requirement(k, "In", (labels[k],)) for k in dict.fromkeys(keys) if k in labels)
    return (Term(requirements),) if requirements else ()


# -- the catalog ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class PodVolumeClaims:
    """A pod's claims as `GetPodVolumeClaims` sorts them: bound, unbound with delayed binding, unbound immediate."""

    bound: tuple[PersistentVolumeClaim, ...] = ()
    delayed: tuple[PersistentVolumeClaim, ...] = ()
    immediate: tuple[PersistentVolumeClaim, ...] = ()


@dataclass(frozen=True)
class PodVolumes:
    """What `FindPodVolumes` decides for a pod on one node: the static bindings, the claims to
    provision, and the reasons the node does not do (none: it does)."""

    bindings: tuple[tuple[PersistentVolumeClaim, PersistentVolume], ...] = ()
    provisions: tuple[PersistentVolumeClaim, ...] = ()
    reasons: tuple[str, ...] = ()


class VolumeCatalog:
    """The cluster's PersistentVolumes (by name), claims (by "namespace/name") and StorageClasses (by name).

    `version` is renewed whenever `assume` binds or provisions, so caches of what the volumes allow
    may key on it. A claim that names its volume makes the volume name it back, as the PV controller
    completes a binding the claim starts.
    """

    def __init__(
        self,
        volumes: Iterable[PersistentVolume] = (),
        claims: Iterable[PersistentVolumeClaim] = (),
        classes: Iterable[StorageClass] = (),
    ) -> None:
        self._volumes: dict[str, PersistentVolume] = {}
        self._by_class: dict[str, list[str]] = {}  # class name: its volumes' names, in the order added
        self._claims: dict[str, PersistentVolumeClaim] = {}
        self._classes: dict[str, StorageClass] = {}
        for pv in volumes:
            if pv.name in self._volumes:
                raise ValueError(f"PersistentVolume {pv.name!r} is defined twice")
            self._put_volume(pv)
        for claim in claims:
            if claim.key in self._claims:
                raise ValueError(f"PersistentVolumeClaim {claim.key!r} is defined twice")
            self._claims[claim.key] = claim
        for sc in classes:
            if sc.name in self._classes:
                raise ValueError(f"StorageClass {sc.name!r} is defined twice")
            self._classes[sc.name] = sc
        for claim in self._claims.values():
            named = self._volumes.get(claim.volume_name or "")
            if named is not None and named.claim_ref is None:
                self._volumes[named.name] = replace(named, claim_ref=claim.key)
        self.version = next(_VERSIONS)

    # -- lookups ---------------------------------------------------------------------------------

    def volume(self, name: str) -> PersistentVolume | None:
        return self._volumes.get(name)

    def claim(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self._claims.get(f"{namespace}/{name}")

    def storage_class(self, name: str) -> StorageClass | None:
        return self._classes.get(name)

    def volumes_of(self, class_name: str) -> list[PersistentVolume]:
        """The volumes of a class, in the order they were added (the PV cache's `ListPVs`)."""
        return [self._volumes[name] for name in self._by_class.get(class_name, ())]

    @property
    def volumes(self) -> list[PersistentVolume]:
        return list(self._volumes.values())

    @property
    def claims(self) -> list[PersistentVolumeClaim]:
        return list(self._claims.values())

    def missing_claim(self, pod: PodSpec) -> str | None:
        """The first of the pod's claims that does not exist (`podHasPVCs`), or None."""
        return next((name for name in pod.claims if self.claim(pod.namespace, name) is None), None)

    def is_delay_binding(self, claim: PersistentVolumeClaim) -> bool:
        """The claim's class exists and waits for the first consumer (`volume.IsDelayBindingMode`)."""
        sc = self._classes.get(claim.class_name) if claim.class_name else None
        return sc is not None and sc.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER

    def pod_claims(self, pod: PodSpec) -> PodVolumeClaims:
        """The pod's existing claims, sorted as `GetPodVolumeClaims` sorts them (missing ones left out)."""
        bound, delayed, immediate = [], [], []
        for name in pod.claims:
            claim = self.claim(pod.namespace, name)
            if claim is None:
                continue
            if claim.volume_name:
                bound.append(claim)
            elif self.is_delay_binding(claim):
                delayed.append(claim)
            else:
                immediate.append(claim)
        return PodVolumeClaims(tuple(bound), tuple(delayed), tuple(immediate))

    # -- the binder ------------------------------------------------------------------------------

    def find_pod_volumes(self, pod: PodSpec, node: NodeSpec) -> PodVolumes:
        """Whether the pod's volumes allow the node, and how they would be bound there.

        Mirrors `volumeBinder.FindPodVolumes` after PreFilter (missing claims and unbound immediate
        ones are left out here; the plugin refuses such a pod first): bound claims' volumes must
        reach the node (`checkBoundClaims`, stopping at the first volume missing or out of reach);
        delayed claims, smallest request first, each take the smallest matching volume left
        (`findMatchingVolumes`), and those left without one must be provisionable there
        (`checkVolumeProvisions`: a class with a provisioner whose allowed topologies admit the node).
        """
        claims = self.pod_claims(pod)
        node_conflict = bound_missing = bind_conflict = False
        for claim in claims.bound:
            pv = self._volumes.get(claim.volume_name or "")
            if pv is None:
                bound_missing = True
                break
            if not check_node_affinity(pv, node.labels):
                node_conflict = True
                break
        bindings: list[tuple[PersistentVolumeClaim, PersistentVolume]] = []
        provisions: list[PersistentVolumeClaim] = []
        chosen: list[str] = []
        # Go's sort.Sort is an insertion sort below 13 elements, stable as Python's sorted.
        for claim in sorted(claims.delayed, key=lambda c: c.request):
            pv = find_matching_volume(claim, self.volumes_of(claim.class_name), node.labels, chosen)
            if pv is not None:
                chosen.append(pv.name)
                bindings.append((claim, pv))
                continue
            sc = self._classes[claim.class_name]
            if sc.can_provision and match_topology(sc.allowed_topologies, node.labels):
                provisions.append(claim)
            else:
                bind_conflict = True
        reasons = [
            reason
            for reason, failed in (
                (ERR_REASON_NODE_CONFLICT, node_conflict),
                (ERR_REASON_BIND_CONFLICT, bind_conflict),
                (ERR_REASON_PV_NOT_EXIST, bound_missing),
            )
            if failed
        ]
        return PodVolumes(tuple(bindings), tuple(provisions), tuple(reasons))

    def assume(self, pod: PodSpec, node: NodeSpec) -> None:
        """Bind the pod's unbound WaitForFirstConsumer claims for the node it was bound to.

        Mirrors `AssumePodVolumes` and `BindPodVolumes` with the PV controller's and the
        provisioner's work done at once: each claim is bound to the volume `find_pod_volumes`
        matched, or to a new volume provisioned for it on the node's topology (`provisioned_topology`),
        as big as the claim asks. A claim that can be neither is left unbound: the filter would
        have refused the node.
        """
        found = self.find_pod_volumes(pod, node)
        if not found.bindings and not found.provisions:
            return
        for claim, pv in found.bindings:
            self._volumes[pv.name] = replace(pv, claim_ref=claim.key)
            self._claims[claim.key] = replace(claim, volume_name=pv.name)
        for claim in found.provisions:
            sc = self._classes[claim.class_name]
            pv = PersistentVolume(
                name=self._new_volume_name(claim),
                capacity=claim.request,
                storage_class=sc.name,
                access_modes=claim.access_modes,
                node_affinity=provisioned_topology(sc, node.labels),
                csi_driver=provisioned_csi_driver(sc.provisioner),
                claim_ref=claim.key,
            )
            self._put_volume(pv)
            self._claims[claim.key] = replace(claim, volume_name=pv.name)
        self.version = next(_VERSIONS)

    # -- internals -------------------------------------------------------------------------------

    def _put_volume(self, pv: PersistentVolume) -> None:
        self._volumes[pv.name] = pv
        self._by_class.setdefault(pv.storage_class, []).append(pv.name)

    def _new_volume_name(self, claim: PersistentVolumeClaim) -> str:
        """A name for a provisioned volume (upstream's is `pvc-<claim uid>`), unique in the catalog."""
        base = f"pvc-{claim.namespace}-{claim.name}"
        name, n = base, 1
        while name in self._volumes:
            n += 1
            name = f"{base}-{n}"
        return name
