"""The scenario's cluster: nodes, node groups and the cluster autoscaler, and the pods' scheduling fields.

Field names follow `v1.Node`, `v1.PodSpec` and the cluster autoscaler's flags, camelCased:

```yaml
spec:
  cluster:
    nodes:
      - {name: worker, count: 3, cpu: 4, memory: 16Gi, labels: {topology.kubernetes.io/zone: a}}
    nodeGroups:
      - {name: burst, minSize: 0, maxSize: 10, startup: 90s, node: {cpu: 4, memory: 16Gi}}
    autoscaler: {scaleDownUnneededTime: 10m}
  workload:
    pod:
      priority: 100
      tolerations: [{key: dedicated, operator: Exists}]
      topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone}]
```
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from skenario.core.time import MINUTE, SECOND
from skenario.model.cpu.node import WeightRule
from skenario.scenario.format.base import Spec as _Spec
from skenario.scenario.format.units import ByteQuantity, CpuQuantity, Duration, Ratio
from skenario.scheduling.affinity import (
    NodeAffinity,
    PreferredTerm,
    Requirement,
    Term,
    label_key_problem,
    label_value_problem,
)
from skenario.scheduling.clusterautoscaler.config import CaSettings, NodeGroup
from skenario.scheduling.objects import (
    LabelSelector,
    NodeSpec,
    PodAffinity,
    PodAffinityTerm,
    PodSpec,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from skenario.scheduling.taints import Taint, TaintEffect, Toleration

Operator = Literal["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]

# Nodes one `nodes` entry may name: far past the pre-flight's 15,000, small enough to check at once.
MAX_NODES_PER_ENTRY = 100_000


def _label_key(key: str) -> str:
    if (problem := label_key_problem(key)) is not None:
        raise ValueError(problem)
    return key


def _label_value(value: str) -> str:
    if (problem := label_value_problem(value)) is not None:
        raise ValueError(problem)
    return value


LabelMap = dict[Annotated[str, AfterValidator(_label_key)], Annotated[str, AfterValidator(_label_value)]]
"""Labels to match, checked as the API server's `ValidateLabels` checks a pod's `nodeSelector`
(`ValidatePodSpec`): each key and value as a label selector's (`labels.NewRequirement`), so a
mistake is an error naming the key, never a selector that silently matches no node."""


class TaintSpec(_Spec):
    key: str = Field(min_length=1)
    value: str = ""
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]

    def build(self) -> Taint:
        return Taint(self.key, TaintEffect(self.effect), self.value)


class TolerationSpec(_Spec):
    key: str = ""
    operator: Literal["Equal", "Exists"] = "Equal"
    value: str = ""
    effect: Literal["", "NoSchedule", "PreferNoSchedule", "NoExecute"] = ""
    toleration_seconds: int | None = Field(
        None,
        description="How long a NoExecute taint is tolerated; read, not modelled: the taint is tolerated "
        "for the run (every real pod carries 300 s for not-ready and unreachable).",
    )

    @model_validator(mode="after")
    def _rules(self) -> TolerationSpec:
        if self.operator == "Exists" and self.value:
            raise ValueError("a toleration with operator Exists takes no value")
        if not self.key and self.operator != "Exists":
            raise ValueError("a toleration with an empty key needs operator Exists")
        return self

    def build(self) -> Toleration:
        return Toleration(self.key, self.operator, self.value, self.effect)


class RequirementSpec(_Spec):
    key: str = Field(min_length=1)
    operator: Operator
    values: list[str] = Field(default_factory=list)

    def build(self) -> Requirement:
        return Requirement(self.key, self.operator, tuple(self.values))

    @model_validator(mode="after")
    def _valid(self) -> RequirementSpec:
        self.build()  # its rules: values for In/NotIn, none for Exists, one integer for Gt/Lt
        return self


class TermSpec(_Spec):
    match_expressions: list[RequirementSpec] = Field(default_factory=list)
    match_fields: list[RequirementSpec] = Field(default_factory=list)

    @model_validator(mode="after")
    def _fields(self) -> TermSpec:
        for requirement in self.match_fields:
            if requirement.key != "metadata.name":
                raise ValueError(f"matchFields supports only metadata.name, not {requirement.key!r}")
        return self

    def build(self) -> Term:
        return Term(tuple(r.build() for r in self.match_expressions), tuple(r.build() for r in self.match_fields))


class NodeSelectorSpec(_Spec):
    node_selector_terms: list[TermSpec] = Field(min_length=1)


class PreferredSpec(_Spec):
    weight: int = Field(ge=1, le=100)
    preference: TermSpec


class NodeAffinitySpec(_Spec):
    required_during_scheduling_ignored_during_execution: NodeSelectorSpec | None = None
    preferred_during_scheduling_ignored_during_execution: list[PreferredSpec] = Field(default_factory=list)


class LabelSelectorSpec(_Spec):
    match_labels: dict[str, str] = Field(default_factory=dict)
    match_expressions: list[RequirementSpec] = Field(default_factory=list)

    @model_validator(mode="after")
    def _valid(self) -> LabelSelectorSpec:
        for key, value in self.match_labels.items():  # as `metav1validation.ValidateLabelSelector`
            problem = label_key_problem(key) or label_value_problem(value)
            if problem is not None:
                raise ValueError(f"matchLabels: {problem}")
        return self

    def build(self) -> LabelSelector:
        return LabelSelector(dict(self.match_labels), tuple(r.build() for r in self.match_expressions))


class PodAffinityTermSpec(_Spec):
    """`v1.PodAffinityTerm`; `matchLabelKeys` and `mismatchLabelKeys` join the selector with the
    incoming pod's own values, as the API server merges them."""

    topology_key: str = Field(min_length=1)
    label_selector: LabelSelectorSpec | None = None
    namespaces: list[str] = Field(default_factory=list)
    namespace_selector: LabelSelectorSpec | None = None
    match_label_keys: list[str] = Field(default_factory=list)
    mismatch_label_keys: list[str] = Field(default_factory=list)

    def build(self, labels: Mapping[str, str]) -> PodAffinityTerm:
        selector = self.label_selector.build() if self.label_selector is not None else None
        extra = tuple(Requirement(k, "In", (labels[k],)) for k in self.match_label_keys if k in labels) + tuple(
            Requirement(k, "NotIn", (labels[k],)) for k in self.mismatch_label_keys if k in labels
        )
        if selector is not None and extra:
            selector = LabelSelector(selector.match_labels, selector.match_expressions + extra)
        return PodAffinityTerm(
            self.topology_key,
            selector,
            tuple(self.namespaces),
            self.namespace_selector.build() if self.namespace_selector is not None else None,
        )


class WeightedPodAffinityTermSpec(_Spec):
    weight: int = Field(ge=1, le=100)
    pod_affinity_term: PodAffinityTermSpec


class PodAffinitySpec(_Spec):
    """`v1.PodAffinity` or `v1.PodAntiAffinity`."""

    required_during_scheduling_ignored_during_execution: list[PodAffinityTermSpec] = Field(default_factory=list)
    preferred_during_scheduling_ignored_during_execution: list[WeightedPodAffinityTermSpec] = Field(
        default_factory=list
    )

    def build(self, labels: Mapping[str, str]) -> PodAffinity:
        return PodAffinity(
            tuple(t.build(labels) for t in self.required_during_scheduling_ignored_during_execution),
            tuple(
                WeightedPodAffinityTerm(w.weight, w.pod_affinity_term.build(labels))
                for w in self.preferred_during_scheduling_ignored_during_execution
            ),
        )


class AffinitySpec(_Spec):
    node_affinity: NodeAffinitySpec | None = None
    pod_affinity: PodAffinitySpec | None = None
    pod_anti_affinity: PodAffinitySpec | None = None

    def build_node(self, node_selector: Mapping[str, str]) -> NodeAffinity:
        """The pod's `nodeSelector` with its node affinity."""
        node = self.node_affinity
        required = None
        preferred: tuple[PreferredTerm, ...] = ()
        if node is not None:
            if node.required_during_scheduling_ignored_during_execution is not None:
                terms = node.required_during_scheduling_ignored_during_execution.node_selector_terms
                required = tuple(t.build() for t in terms)
            preferred = tuple(
                PreferredTerm(p.weight, p.preference.build())
                for p in node.preferred_during_scheduling_ignored_during_execution
            )
        return NodeAffinity(dict(node_selector), required, preferred)

    def build_pods(self, labels: Mapping[str, str]) -> tuple[PodAffinity, PodAffinity]:
        """The pod's pod affinity and pod anti-affinity."""
        none = PodAffinity()
        return (
            self.pod_affinity.build(labels) if self.pod_affinity is not None else none,
            self.pod_anti_affinity.build(labels) if self.pod_anti_affinity is not None else none,
        )


class SpreadSpec(_Spec):
    max_skew: int = Field(ge=1)
    topology_key: str = Field(min_length=1)
    when_unsatisfiable: Literal["DoNotSchedule", "ScheduleAnyway"] = "DoNotSchedule"
    label_selector: LabelSelectorSpec | None = Field(None, description="Pods that count; absent: the pod's labels.")
    min_domains: int | None = Field(None, ge=1)
    node_affinity_policy: Literal["Honor", "Ignore"] = "Honor"
    node_taints_policy: Literal["Honor", "Ignore"] = "Ignore"
    match_label_keys: list[str] = Field(
        default_factory=list, description="Pod label keys whose values join the selector (spreads per revision)."
    )

    @model_validator(mode="after")
    def _keys_need_a_selector(self) -> SpreadSpec:
        # ValidateTopologySpreadConstraints: matchLabelKeys is refused without labelSelector. A key
        # may be in the selector too: since 1.33 the API server merges the keys into it
        # (MatchLabelKeysInPodTopologySpreadSelectorMerge), and the same requirement twice is one.
        if self.match_label_keys and self.label_selector is None:
            raise ValueError("matchLabelKeys needs a labelSelector")
        return self

    def build(self, labels: dict[str, str]) -> TopologySpreadConstraint:
        """The constraint, `matchLabelKeys` merged into its selector with the pod's own values (`key In
        (value)`, a key the pod has not ignored), as the API server merges them."""
        selector = self.label_selector.build() if self.label_selector is not None else LabelSelector(dict(labels))
        extra = tuple(Requirement(k, "In", (labels[k],)) for k in self.match_label_keys if k in labels)
        if extra:
            selector = LabelSelector(selector.match_labels, selector.match_expressions + extra)
        return TopologySpreadConstraint(
            self.max_skew,
            self.topology_key,
            self.when_unsatisfiable,
            selector,
            self.min_domains,
            self.node_affinity_policy,
            self.node_taints_policy,
        )


class PodSchedulingSpec(_Spec):
    """What the scheduler reads of the workload's pods (besides CPU, from `resources`)."""

    priority: int = Field(0, description="The pod's priority (what its PriorityClass gives it).")
    preemption_policy: Literal["PreemptLowerPriority", "Never"] = "PreemptLowerPriority"
    labels: dict[str, str] = Field(default_factory=dict, description="Default: app: <scenario name>.")
    node_selector: LabelMap = Field(default_factory=dict)
    affinity: AffinitySpec | None = None
    tolerations: list[TolerationSpec] = Field(default_factory=list)
    topology_spread_constraints: list[SpreadSpec] = Field(default_factory=list)
    extended: dict[str, int] = Field(
        default_factory=dict, description="Extended resources each pod requests, such as nvidia.com/gpu: 1."
    )

    def build(self, name: str, cpu: int | None, memory: int | None, app: str) -> PodSpec:
        labels = dict(self.labels) or {"app": app}
        affinity = self.affinity or AffinitySpec()
        pod_affinity, pod_anti_affinity = affinity.build_pods(labels)
        return PodSpec(
            name=name,
            cpu=cpu,
            memory=memory,
            extended=dict(self.extended),
            priority=self.priority,
            preemption_policy=self.preemption_policy,
            labels=labels,
            tolerations=tuple(t.build() for t in self.tolerations),
            affinity=affinity.build_node(self.node_selector),
            spread=tuple(c.build(labels) for c in self.topology_spread_constraints),
            controlled=True,
            pod_affinity=pod_affinity,
            pod_anti_affinity=pod_anti_affinity,
        )


class NodeShape(_Spec):
    """A node's allocatable resources, labels and taints."""

    cpu: CpuQuantity = Field(gt=0, description="Allocatable CPU: cores (4) or millicores ('3500m').")
    memory: ByteQuantity = Field(gt=0, description="Allocatable memory: '16Gi'.")
    pods: int = Field(110, ge=1, description="Most pods the node takes (the kubelet's maxPods).")
    extended: dict[str, int] = Field(default_factory=dict, description="Extended resources, such as nvidia.com/gpu.")
    labels: dict[str, str] = Field(default_factory=dict)
    taints: list[TaintSpec] = Field(default_factory=list)
    unschedulable: bool = False

    def build(self, name: str) -> NodeSpec:
        return NodeSpec(
            name=name,
            cpu=self.cpu,
            memory=self.memory,
            pods=self.pods,
            extended=dict(self.extended),
            labels=dict(self.labels),
            taints=tuple(t.build() for t in self.taints),
            unschedulable=self.unschedulable,
        )


class NodesSpec(NodeShape):
    """`count` nodes of one shape, named `<name>-0`, `<name>-1`, ... (just `<name>` when count is 1)."""

    name: str = Field(min_length=1)
    count: int = Field(
        1, ge=1, le=MAX_NODES_PER_ENTRY, description="At most 100,000; `run` refuses more than 15,000 nodes."
    )

    def names(self) -> list[str]:
        if self.count == 1:
            return [self.name]
        return [f"{self.name}-{i}" for i in range(self.count)]

    def build_all(self) -> list[NodeSpec]:
        return [self.build(name) for name in self.names()]


class NodeGroupSpec(_Spec):
    """A node group the cluster autoscaler may grow and shrink (a cloud instance group)."""

    name: str = Field(min_length=1)
    min_size: int = Field(0, ge=0)
    max_size: int = Field(ge=1)
    initial_size: int | None = Field(None, ge=0, description="Nodes at the start; default minSize.")
    startup: Duration = Field(
        60 * SECOND, ge=0, description="From the scale-up decision to the node being Ready and schedulable."
    )
    node: NodeShape

    @model_validator(mode="after")
    def _sizes(self) -> NodeGroupSpec:
        if self.min_size > self.max_size:
            raise ValueError(f"minSize ({self.min_size}) is more than maxSize ({self.max_size})")
        initial = self.initial_size
        if initial is not None and not self.min_size <= initial <= self.max_size:
            raise ValueError(f"initialSize ({initial}) is outside minSize..maxSize")
        return self

    def build(self) -> NodeGroup:
        return NodeGroup(self.name, self.node.build(self.name), self.min_size, self.max_size, self.startup)

    @property
    def start_size(self) -> int:
        return self.min_size if self.initial_size is None else self.initial_size


class ClusterAutoscalerSpec(_Spec):
    """The cluster autoscaler's flags (defaults from `cluster-autoscaler/config/flags`)."""

    scan_interval: Duration = Field(10 * SECOND, gt=0)
    scale_down_enabled: bool = True
    scale_down_utilization_threshold: Ratio = Field(0.5, ge=0, le=1)
    scale_down_unneeded_time: Duration = Field(10 * MINUTE, ge=0)
    scale_down_delay_after_add: Duration = Field(10 * MINUTE, ge=0)
    scale_down_delay_after_delete: Duration = Field(0, ge=0)
    scale_down_delay_after_failure: Duration = Field(3 * MINUTE, ge=0)
    max_node_provision_time: Duration = Field(15 * MINUTE, gt=0)
    expander: str = Field(
        "least-waste", description="random, most-pods, least-waste, least-nodes, priority, or a chain a,b."
    )
    priorities: dict[int, list[str]] = Field(
        default_factory=dict,
        description="The priority expander's ConfigMap: {priority: [regular expressions of node group names]}; "
        "the highest priority matching a group is its own.",
    )
    max_nodes_total: int = Field(0, ge=0, description="0: no limit.")

    def build(self) -> CaSettings:
        try:
            return CaSettings(
                scan_interval=self.scan_interval,
                scale_down_utilization_threshold=self.scale_down_utilization_threshold,
                scale_down_unneeded_time=self.scale_down_unneeded_time,
                scale_down_delay_after_add=self.scale_down_delay_after_add,
                scale_down_delay_after_delete=self.scale_down_delay_after_delete,
                scale_down_delay_after_failure=self.scale_down_delay_after_failure,
                max_node_provision_time=self.max_node_provision_time,
                expander=self.expander,
                priorities=tuple((p, tuple(patterns)) for p, patterns in sorted(self.priorities.items())),
                max_nodes_total=self.max_nodes_total,
                scale_down_enabled=self.scale_down_enabled,
            )
        except ValueError as exc:
            raise ValueError(str(exc)) from None

    @model_validator(mode="after")
    def _valid(self) -> ClusterAutoscalerSpec:
        self.build()
        return self


class Cluster(_Spec):
    """Nodes for the workload's pods; with it set, a replica starts only once bound to a node."""

    nodes: list[NodesSpec] = Field(default_factory=list)
    node_groups: list[NodeGroupSpec] = Field(default_factory=list)
    autoscaler: ClusterAutoscalerSpec | None = Field(
        None, description="The cluster autoscaler, growing and shrinking nodeGroups; null: groups keep their size."
    )
    cpu_weights: WeightRule = Field(
        WeightRule.SHARES,
        description="How CPU requests weigh on a contended node: shares (cgroup v1, proportional to requests), "
        "cgroupV2Linear (runc before 1.3.2) or cgroupV2 (runc 1.3.2+, crun 1.23+: a log curve).",
    )

    @model_validator(mode="after")
    def _names(self) -> Cluster:
        if not self.nodes and not self.node_groups:
            raise ValueError("a cluster needs nodes or nodeGroups")
        names = Counter(name for spec in self.nodes for name in spec.names())
        groups = Counter(g.name for g in self.node_groups)
        duplicates = sorted({n for n, k in names.items() if k > 1} | {g for g, k in groups.items() if k > 1})
        if duplicates:
            raise ValueError(f"names must be unique: {', '.join(duplicates)}")
        return self

    def static_nodes(self) -> list[NodeSpec]:
        return [node for spec in self.nodes for node in spec.build_all()]
