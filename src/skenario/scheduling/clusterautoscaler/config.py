"""The cluster autoscaler's configuration: its node groups, and its flags with their upstream defaults.

Mirrors cluster-autoscaler's `cloudprovider.NodeGroup` (cloudprovider/cloud_provider.go; a group's
min and max size as `--nodes=min:max:name` gives them, config/dynamic/node_group_spec.go) and
`config.AutoscalingOptions` (config/autoscaling_options.go) with the defaults of
config/flags/flags.go and config/const.go.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from skenario.core.time import MINUTE, SECOND
from skenario.scheduling.objects import HOSTNAME_LABEL, NodeSpec

EXPANDERS = ("random", "most-pods", "least-waste", "least-nodes", "priority")
# `nvidia.com/gpu` is upstream's GPU resource; `alibaba.com/gpu-milli` is the pooled GPU of the openb traces.
DEFAULT_GPU_RESOURCES = ("nvidia.com/gpu", "alibaba.com/gpu-milli")


@dataclass(frozen=True)
class NodeGroup:
    """A node group (`cloudprovider.NodeGroup`): identical nodes made from one template.

    `startup` is how long (ns) a new node takes from the scale-up decision to Ready; the scenario
    sets it, upstream it is the cloud provider's business.
    """

    name: str
    template: NodeSpec
    min_size: int
    max_size: int
    startup: int = 0

    def __post_init__(self) -> None:
        if self.min_size < 0:
            raise ValueError(f"node group {self.name}: min_size must be >= 0, got {self.min_size}")
        if self.max_size < 1:
            raise ValueError(f"node group {self.name}: max_size must be >= 1, got {self.max_size}")
        if self.min_size > self.max_size:
            raise ValueError(f"node group {self.name}: min_size {self.min_size} exceeds max_size {self.max_size}")
        if self.startup < 0:
            raise ValueError(f"node group {self.name}: startup must be >= 0, got {self.startup}")

    def new_node(self, index: int) -> NodeSpec:
        """The template as node `<group>-<index>`, with its own hostname label."""
        name = f"{self.name}-{index}"
        labels = {k: v for k, v in self.template.labels.items() if k != HOSTNAME_LABEL}
        return replace(self.template, name=name, labels=labels)


@dataclass(frozen=True)
class CaSettings:
    """The autoscaler's flags with their upstream defaults (cluster-autoscaler `config/flags/flags.go`,
    whose defaults live in `config/const.go`; the FAQ's parameter table lists the same values).

    - `scan_interval` 10 s: `--scan-interval`, `config.DefaultScanInterval`.
    - `scale_down_utilization_threshold` 0.5: `--scale-down-utilization-threshold`,
      `config.DefaultScaleDownUtilizationThreshold`; `scale_down_gpu_utilization_threshold` 0.5:
      `--scale-down-gpu-utilization-threshold`, `config.DefaultScaleDownGpuUtilizationThreshold`.
    - `scale_down_unneeded_time` 10 min: `--scale-down-unneeded-time`, `config.DefaultScaleDownUnneededTime`.
    - `scale_down_delay_after_add` 10 min: `--scale-down-delay-after-add`.
    - `scale_down_delay_after_delete` 0: `--scale-down-delay-after-delete`. Old releases defaulted it
      to the scan interval; at tick granularity the two act the same, as a delay of one scan
      interval has passed by the next tick.
    - `scale_down_delay_after_failure` 3 min: `--scale-down-delay-after-failure`,
      `config.DefaultScaleDownDelayAfterFailure`.
    - `max_node_provision_time` 15 min: `--max-node-provision-time` (for the controller: an upcoming
      node not Ready by then stops counting as upcoming).
    - `expander` "least-waste": `--expander`; a comma-separated chain, each expander narrowing the
      options of the one before, as upstream. Implemented: random, most-pods, least-waste,
      least-nodes, priority.
    - `priorities`: the priority expander's configuration (the `priorities` key of the
      `cluster-autoscaler-priority-expander` ConfigMap): pairs of a priority and the regular
      expressions of the group names it covers. Required with the priority expander.
    - `max_nodes_total` 0 (no limit): `--max-nodes-total`; `max_nodes_per_scale_up` 1000:
      `--max-nodes-per-scaleup`.
    - `scale_down_enabled` True: `--scale-down-enabled`.
    - `max_scale_down_parallelism` 10: `--max-scale-down-parallelism`; `max_drain_parallelism` 1:
      `--max-drain-parallelism` (at most one non-empty node drained at a time).
    - `max_empty_bulk_delete`: `--max-empty-bulk-delete` (default 10), deprecated in CA 1.32 for
      `--max-scale-down-parallelism`. None means unset; when set it replaces the parallelism, as
      CA 1.28+ copies one flag to the other when only one is given (kubernetes/autoscaler#5890).
    - `gpu_resources`: extended resources that make a node a GPU node for utilisation (upstream asks
      the cloud provider, `GetNodeGpuConfig`).
    """

    scan_interval: int = 10 * SECOND
    scale_down_utilization_threshold: float = 0.5
    scale_down_gpu_utilization_threshold: float = 0.5
    scale_down_unneeded_time: int = 10 * MINUTE
    scale_down_delay_after_add: int = 10 * MINUTE
    scale_down_delay_after_delete: int = 0
    scale_down_delay_after_failure: int = 3 * MINUTE
    max_node_provision_time: int = 15 * MINUTE
    expander: str = "least-waste"
    max_nodes_total: int = 0
    max_nodes_per_scale_up: int = 1000
    scale_down_enabled: bool = True
    max_scale_down_parallelism: int = 10
    max_drain_parallelism: int = 1
    max_empty_bulk_delete: int | None = None
    gpu_resources: tuple[str, ...] = field(default=DEFAULT_GPU_RESOURCES)
    priorities: tuple[tuple[int, tuple[str, ...]], ...] = ()

    def __post_init__(self) -> None:
        if self.scan_interval <= 0:
            raise ValueError(f"scan_interval must be > 0, got {self.scan_interval}")
        for name in ("scale_down_utilization_threshold", "scale_down_gpu_utilization_threshold"):
            value = getattr(self, name)
            if not 0 <= value <= 1:
                raise ValueError(f"{name} must be in [0, 1], got {value}")
        for name in (
            "scale_down_unneeded_time",
            "scale_down_delay_after_add",
            "scale_down_delay_after_delete",
            "scale_down_delay_after_failure",
            "max_node_provision_time",
            "max_nodes_total",
            "max_scale_down_parallelism",
            "max_drain_parallelism",
        ):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.max_nodes_per_scale_up < 1:
            raise ValueError(f"max_nodes_per_scale_up must be >= 1, got {self.max_nodes_per_scale_up}")
        if self.max_empty_bulk_delete is not None and self.max_empty_bulk_delete < 0:
            raise ValueError(f"max_empty_bulk_delete must be >= 0, got {self.max_empty_bulk_delete}")
        names = self.expanders
        unknown = [n for n in names if n not in EXPANDERS]
        if not names or unknown:
            raise ValueError(f"expander must name expanders among {', '.join(EXPANDERS)}, got {self.expander!r}")
        if len(set(names)) != len(names):
            raise ValueError(f"expander may list an expander once only, got {self.expander!r}")
        if "priority" in names and not self.priorities:
            raise ValueError("the priority expander needs priorities: {priority: [group name regex, ...]}")
        for priority, patterns in self.priorities:
            for pattern in patterns:
                try:
                    re.compile(pattern)
                except re.error as exc:
                    raise ValueError(f"priorities {priority}: {pattern!r} is not a regular expression: {exc}") from None

    @property
    def expanders(self) -> tuple[str, ...]:
        """The expander chain, parsed from the comma-separated flag value."""
        return tuple(n.strip() for n in self.expander.split(",") if n.strip())

    @property
    def scale_down_parallelism(self) -> int:
        """The node-deletion budget: `max_scale_down_parallelism`, or the deprecated flag if set."""
        if self.max_empty_bulk_delete is None:
            return self.max_scale_down_parallelism
        return self.max_empty_bulk_delete
