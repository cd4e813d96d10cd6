"""The controllers behind the simulated API server: what happens to pods once objects change.

The API front (`scenario/wiring/apiserver.py`) reads manifests, admits pods and keeps every object
as it stands; these controllers act on the scheduler's world (`scheduling/controller.py`):
- the ReplicaSet controller's `manageReplicas` (a Deployment through the ReplicaSet it owns) and
  the Job controller: an `Owner` keeps `replicas` pods, a Job `parallelism` until `completions`
  have succeeded, a new pod made whenever one is gone (deleted, evicted, preempted);
- a drain (`kubectl drain`, then the node's deletion): cordoned, its pods evicted through the
  eviction API as far as the PodDisruptionBudgets allow (the disruption controller's
  `disruptionsAllowed`), a refused eviction retried each time the scheduler has settled, the node
  removed once empty;
- the volume binder's catalog of PersistentVolumes, claims and StorageClasses.

The module drives `SchedulingController`, so it sits in layer 3 beside the scheduler (the layering
test names it), though it lives with the cluster model it belongs to.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from skenario.core.clock import SettlingClock
from skenario.errors import ScenarioError
from skenario.scheduling.controller import SchedulingController
from skenario.scheduling.objects import LabelSelector, PodSpec
from skenario.scheduling.pods import Pod, PodEnd
from skenario.scheduling.volumes import VolumeCatalog

Key = tuple[str, str, str]  # kind, namespace ("" when cluster-scoped), name


@dataclass
class Owner:
    """A ReplicaSet or Job: the pods it keeps, made from its template."""

    kind: str
    namespace: str
    name: str
    template: Any  # the pod template as the API front reads it: the controllers only compare it
    labels: dict[str, str]
    annotations: dict[str, str]
    replicas: int  # pods wanted at once (a Job's parallelism)
    completions: int | None = None  # a Job's; None for a ReplicaSet
    succeeded: int = 0
    pods: dict[str, Pod] = field(default_factory=dict)
    made: int = 0
    deleted: bool = False

    def wanted(self) -> int:
        if self.deleted:
            return 0
        if self.completions is None:
            return self.replicas
        return max(min(self.replicas, self.completions - self.succeeded), 0)


@dataclass(frozen=True)
class DisruptionSpec:
    """A PodDisruptionBudget as the disruption controller reads it: whose pods, and its bound."""

    namespace: str
    selector: LabelSelector
    min_available: int | str | None
    max_unavailable: int | str | None


class ClusterControllers:
    """The owners' pods, the drains and the volume catalog; the API front says what each object is."""

    def __init__(self, clock: SettlingClock, controller: SchedulingController) -> None:
        self.clock = clock
        self.controller = controller
        self.snapshot = controller.snapshot
        self.owners: dict[Key, Owner] = {}
        self.storage_classes: dict[str, Any] = {}  # StorageClass by name, for the volume catalog
        self.draining: dict[str, None] = {}
        self.evicted: list[tuple[int, str, str]] = []  # (time, pod, node) of each eviction a drain made
        self.removed: list[tuple[int, str]] = []  # (time, node) of each node a drain removed
        controller.on_gone = self._pod_gone
        self._retry_due = False

    # -- what the API front supplies -----------------------------------------------------------------

    def _owned_pod(self, owner: Owner, name: str) -> tuple[PodSpec, int | None]:
        """The pod `owner` makes next, named `name`, as admitted, and how long it runs (None: until deleted)."""
        raise NotImplementedError

    def _pod_made(self, owner: Owner, name: str) -> None:
        """The pod an owner made is an object of the API server now."""

    def _pod_forgotten(self, pod: Pod) -> None:
        """The pod is gone from the API, however it ended."""

    def _disruption_specs(self) -> list[DisruptionSpec]:
        """The PodDisruptionBudgets now."""
        return []

    # -- owners --------------------------------------------------------------------------------------

    def add_owner(self, key: Key, owner: Owner) -> None:
        self.owners[key] = owner
        self._reconcile(owner)

    def update_owner(self, key: Key, fresh: Owner) -> None:
        """The owner's spec changed: a changed pod template replaces every pod (the Recreate strategy)."""
        owner = self.owners[key]
        template_changed = (fresh.template, fresh.labels) != (owner.template, owner.labels)
        owner.template, owner.labels, owner.annotations = fresh.template, fresh.labels, fresh.annotations
        owner.replicas, owner.completions = fresh.replicas, fresh.completions
        if template_changed:
            for pod in list(owner.pods.values()):
                self.controller.delete(pod, PodEnd.DELETED)
        self._reconcile(owner)

    def delete_owner(self, key: Key) -> None:
        owner = self.owners.pop(key)
        owner.deleted = True
        for pod in list(owner.pods.values()):
            self.controller.delete(pod, PodEnd.DELETED)

    def _reconcile(self, owner: Owner) -> None:
        """`manageReplicas`: make the missing pods, delete the extra ones, those least far along first
        (`controller.ActivePods`: unbound before bound, then the most recently bound and created)."""
        live = [p for p in owner.pods.values() if p.end is None]
        wanted = owner.wanted()
        extra = sorted(live, key=lambda p: (p.bound_at is not None, -(p.bound_at or 0), -p.created_at, p.name))
        for pod in extra[: max(len(live) - wanted, 0)]:
            self.controller.delete(pod, PodEnd.DELETED)
        for _ in range(wanted - len(live)):
            name = f"{owner.name}-{owner.made}"
            owner.made += 1
            spec, duration = self._owned_pod(owner, name)
            pod = self.controller.create(spec, duration=duration, owner=owner)
            owner.pods[pod.name] = pod
            self._pod_made(owner, name)

    def _pod_gone(self, pod: Pod) -> None:
        owner = pod.owner
        if isinstance(owner, Owner):
            owner.pods.pop(pod.name, None)
            if owner.completions is not None and pod.end is PodEnd.COMPLETED and pod.bound_at is not None:
                owner.succeeded += 1
            if not owner.deleted:
                self._reconcile(owner)
        self._pod_forgotten(pod)
        if self.draining:
            self._want_retry()

    # -- storage -------------------------------------------------------------------------------------

    def storage_changed(self, key: Key, built: Any, where: str) -> None:
        """The volume catalog with one volume, claim or class added, replaced (`built`) or removed (None).

        The catalog is made anew from what it holds now, so the bindings the scheduler has made
        (a claim bound to a volume, a volume provisioned) stay.
        """
        kind, namespace, name = key
        current = self.snapshot.volumes
        volumes = {v.name: v for v in current.volumes} if current is not None else {}
        claims = {(c.namespace, c.name): c for c in current.claims} if current is not None else {}
        if kind == "PersistentVolume":
            volumes.pop(name, None)
            if built is not None:
                volumes[name] = built
        elif kind == "PersistentVolumeClaim":
            claims.pop((namespace, name), None)
            if built is not None:
                claims[(namespace, name)] = built
        else:
            self.storage_classes.pop(name, None)
            if built is not None:
                self.storage_classes[name] = built
        try:
            self.snapshot.volumes = VolumeCatalog(volumes.values(), claims.values(), self.storage_classes.values())
        except ValueError as exc:
            raise ScenarioError(str(exc), field=where) from None
        self.controller.cluster_changed()  # a pod waiting for its claim may fit now

    # -- drains --------------------------------------------------------------------------------------

    def drain_node(self, name: str) -> None:
        """Cordon the node and evict what the budgets allow; it is removed once empty."""
        self.draining[name] = None
        node = self.snapshot.nodes[self.snapshot.index[name]]
        self.controller.update_node(replace(node, unschedulable=True))
        self._drain()

    def _want_retry(self) -> None:
        if not self._retry_due:
            self._retry_due = True
            self.clock.call_when_settled(self._retry, order=1)  # after the scheduler's pass

    def _retry(self) -> None:
        self._retry_due = False
        self._drain()

    def _drain(self) -> None:
        """Evict what the budgets allow from every draining node; remove the nodes left empty."""
        snap = self.snapshot
        budgets = self._budgets()
        for name in list(self.draining):
            i = snap.index[name]
            for spec in sorted(snap.pods_on[i].values(), key=lambda s: s.name):
                pod = self.controller.pods[spec.name]
                if pod.end is not None:
                    continue  # already on its way out
                covering = [b for b in budgets if b.covers(pod)]
                if any(b.allowed <= 0 for b in covering):
                    continue  # the eviction API answers 429: retried later
                for b in covering:
                    b.allowed -= 1
                self.evicted.append((self.clock.now(), pod.name, name))
                self.controller.delete(pod, PodEnd.EVICTED)
            if not snap.pods_on[i]:
                del self.draining[name]
                self.controller.remove_node(name)
                self.removed.append((self.clock.now(), name))

    def _budgets(self) -> list[_Budget]:
        budgets = []
        for pdb in self._disruption_specs():
            namespace, selector = pdb.namespace, pdb.selector
            matching = [
                p for p in self.controller.pods.values()
                if p.spec.namespace == namespace and selector.matches(p.spec.labels) and p.end is None
            ]  # fmt: skip
            healthy = sum(1 for p in matching if p.bound_at is not None)
            expected = max(len(matching), self._expected(namespace, selector))
            budgets.append(_Budget(namespace, selector, disruptions_allowed(pdb, healthy, expected)))
        return budgets

    def _expected(self, namespace: str, selector: LabelSelector) -> int:
        """The pods the budget expects: the replicas of the owners whose pods it selects (`getExpectedScale`)."""
        return sum(o.wanted() for o in self.owners.values() if o.namespace == namespace and selector.matches(o.labels))

    def pending_drains(self) -> list[str]:
        return list(self.draining)

    def retry_drains(self) -> None:
        """Called at each FakeTime step: evictions a budget refused are tried again."""
        if self.draining:
            self._want_retry()


@dataclass
class _Budget:
    namespace: str
    selector: LabelSelector
    allowed: int

    def covers(self, pod: Pod) -> bool:
        return pod.spec.namespace == self.namespace and self.selector.matches(pod.spec.labels)


def disruptions_allowed(pdb: DisruptionSpec, healthy: int, expected: int) -> int:
    """`disruptionsAllowed` as the disruption controller computes it (`getExpectedPodCount`)."""
    if pdb.max_unavailable is not None:
        unavailable = _scaled(pdb.max_unavailable, expected, round_up=True)
        desired = max(expected - unavailable, 0)
    elif pdb.min_available is not None:
        desired = _scaled(pdb.min_available, expected, round_up=True)
    else:
        desired = expected  # no bound given: nothing may be disrupted
    return max(healthy - desired, 0)


def _scaled(value: int | str, total: int, *, round_up: bool) -> int:
    """`intstr.GetScaledValueFromIntOrPercent`."""
    if isinstance(value, int):
        return value
    text = value.strip()
    if text.endswith("%"):
        percent = int(text[:-1])
        return -(-percent * total // 100) if round_up else percent * total // 100
    return int(text)
