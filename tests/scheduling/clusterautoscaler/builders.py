"""Small builders the cluster autoscaler's tests share: pods, nodes and node groups by their sizes."""

from __future__ import annotations

from typing import Any

from skenario.scheduling.clusterautoscaler.config import CaSettings, NodeGroup
from skenario.scheduling.objects import NodeSpec, PodSpec

GiB = 1024**3
DEFAULTS = CaSettings()


def pod(name: str, cpu: int | None = None, memory: int | None = None, **kwargs: Any) -> PodSpec:
    return PodSpec(name, cpu=cpu, memory=memory, **kwargs)


def node(name: str, cpu: int, memory: int = 8 * GiB, **kwargs: Any) -> NodeSpec:
    return NodeSpec(name, cpu=cpu, memory=memory, **kwargs)


def group(name: str, cpu: int, memory: int = 8 * GiB, *, min_size: int = 0, max_size: int = 10, **kw: Any) -> NodeGroup:
    return NodeGroup(name, node(f"{name}-template", cpu, memory, **kw), min_size, max_size)
