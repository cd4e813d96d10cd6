"""The resources the resource scores score: a weight in 1..100, and columns for a resource nobody has yet.

`ResourceSpec` restates the argument validation of upstream's NewFit; `scoring_columns`
(`calculateResourceAllocatableRequest`) is checked through both plugins that use it.
"""

from __future__ import annotations

import numpy as np
import pytest

from skenario.scheduling.objects import NodeSpec, PodSpec
from skenario.scheduling.plugins.balancedallocation import BalancedAllocationScore
from skenario.scheduling.plugins.noderesources import NodeResourcesFit
from skenario.scheduling.plugins.resourceallocation import ResourceSpec
from skenario.scheduling.snapshot import ClusterSnapshot
from tests.scheduling.plugins.clusters import GPU


# (least_allocated_test.go and most_allocated_test.go, TestLeast/MostAllocatedScoringStrategy)
# "resource with negative weight" (-1), "resource with zero weight" (0) and "resource weight larger than
# MaxNodeScore" (101): upstream's NewFit fails argument validation (scoringStrategy.resources[i].weight).
# Here the weight is validated when the ResourceSpec is built.
@pytest.mark.parametrize("weight", [-1, 0, 101])
def test_invalid_weights_are_rejected(weight: int) -> None:
    with pytest.raises(ValueError, match="weight"):
        ResourceSpec("memory", weight)


def test_a_scorer_configured_for_a_resource_nobody_has_yet_scores_without_crashing() -> None:
    """A profile that scores `nvidia.com/gpu` on a cluster where no node or pod has named it yet.

    Upstream bypasses an extended resource the pod does not request, so the GPU weight plays no part:
    the scores are those of cpu and memory alone. For 100m on a 1000m / 1000-byte node, LeastAllocated
    gives cpu (1000-100)*100//1000 = 90 and memory with the 200 MiB default > 1000 bytes: 0, so 45;
    BalancedAllocation on actual requests gives cpu 0.1, memory 0: 100 * (1 - 0.05) = 95.
    """
    with_gpu = (ResourceSpec("cpu"), ResourceSpec("memory"), ResourceSpec(GPU))
    pod = PodSpec("p", cpu=100)
    snap = ClusterSnapshot([NodeSpec("n", cpu=1000, memory=1000)])
    assert NodeResourcesFit("LeastAllocated", with_gpu).score(pod, snap, np.arange(1)).tolist() == [45]
    snap = ClusterSnapshot([NodeSpec("n", cpu=1000, memory=1000)])
    assert BalancedAllocationScore(with_gpu).score(pod, snap, np.arange(1)).tolist() == [95]
