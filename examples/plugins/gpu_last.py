"""A scheduler plugin of your own: keep pods that need no GPU off GPU nodes while other nodes have room.

Named in a scheduler section (see examples/scheduling/gpu-last.yaml):

    customPlugins:
      - {name: GpuLast, plugin: ../plugins/gpu_last.py:GpuLast, weight: 5}

`score(pod, node)` gets the pod's spec (skenario.scheduling.objects.PodSpec) and a NodeView (the
node's spec, allocatable, requested and pods) and returns an integer; `normalize` scales a cycle's
scores to 0..100, as kube-scheduler's NormalizeScore does. A `filter(pod, node)` returning a reason
string would reject the node instead.
"""

from __future__ import annotations

from skenario.scheduling.objects import PodSpec
from skenario.scheduling.plugins.custom import NodeView


class GpuLast:
    def __init__(self, resource: str = "alibaba.com/gpu-milli") -> None:
        self.resource = resource

    def score(self, pod: PodSpec, node: NodeView) -> int:
        wants_gpu = pod.extended.get(self.resource, 0) > 0
        has_gpu = node.allocatable.get(self.resource, 0) > 0
        return 100 if wants_gpu or not has_gpu else 0

    def normalize(self, scores: list[int]) -> list[int]:
        return scores
