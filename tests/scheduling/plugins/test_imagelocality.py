"""ImageLocality: upstream's unit tests restated as data, hand-worked cases, and the cache.

Upstream cases, kubernetes/kubernetes
`pkg/scheduler/framework/plugins/imagelocality/image_locality_test.go` (the version with
`maxContainerThreshold` per container and init containers counted, v1.28 on):
`TestImageLocalityPriority` (each case's nodes, their `status.images`, the pod's images and the
scores upstream expects, in the case's own comments worked out in MB) and `TestNormalizedImageName`.
A node's `status.images` entry lists several names for one size; here each name is its own key of
`NodeSpec.images`. A pod's images list init containers first.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from skenario.scheduling.objects import NodeSpec, PodSpec
from skenario.scheduling.plugins.imagelocality import (
    ImageLocality,
    calculate_priority,
    normalized_image_name,
)
from skenario.scheduling.snapshot import ClusterSnapshot

MB = 1024 * 1024


def images(*entries: tuple[tuple[str, ...], int]) -> dict[str, int]:
    """A node's `status.images` (names, size in MB) as NodeSpec.images: every name its own key."""
    return {name: size * MB for names, size in entries for name in names}


NODE_40_300_2000 = images(
    (("gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"), 40),
    (("gcr.io/300:latest", "gcr.io/300:v1"), 300),
    (("gcr.io/2000:latest",), 2000),
)
NODE_250_10 = images((("gcr.io/250:latest",), 250), (("gcr.io/10:latest", "gcr.io/10:v1"), 10))
NODE_600_40_900 = images((("gcr.io/600:latest",), 600), (("gcr.io/40:latest",), 40), (("gcr.io/900:latest",), 900))
NODE_300_600_900 = images((("gcr.io/300:latest",), 300), (("gcr.io/600:latest",), 600), (("gcr.io/900:latest",), 900))
NODE_4000_30 = images((("gcr.io/4000:latest",), 4000), (("gcr.io/30:latest",), 30))
NODE_20_30_40 = images((("gcr.io/20:latest",), 20), (("gcr.io/30:latest",), 30), (("gcr.io/40:latest",), 40))
NODE_WITH_NO_IMAGES: dict[str, int] = {}

# TestImageLocalityPriority: (case name, the pod's images, the nodes' images, the scores expected)
PRIORITY_CASES = [
    (
        "two images spread on two nodes, prefer the larger image one",
        ("gcr.io/40", "gcr.io/250"),
        [NODE_40_300_2000, NODE_250_10],
        [0, 5],
    ),
    ("two images on one node, prefer this node", ("gcr.io/40", "gcr.io/300"), [NODE_40_300_2000, NODE_250_10], [7, 0]),
    ("if exceed limit, use limit", ("gcr.io/10", "gcr.io/4000"), [NODE_4000_30, NODE_250_10], [100, 0]),
    (
        "if exceed limit, use limit (with node which has no images present)",
        ("gcr.io/10", "gcr.io/4000"),
        [NODE_4000_30, NODE_250_10, NODE_WITH_NO_IMAGES],
        [66, 0, 0],
    ),
    (
        "pod with multiple large images, node2 is preferred",
        ("gcr.io/300", "gcr.io/600", "gcr.io/900"),
        [NODE_600_40_900, NODE_300_600_900, NODE_WITH_NO_IMAGES],
        [32, 36, 0],
    ),
    ("pod with multiple small images", ("gcr.io/30", "gcr.io/40"), [NODE_20_30_40, NODE_4000_30], [1, 0]),
    (
        "include InitContainers: two images spread on two nodes, prefer the larger image one",
        ("gcr.io/300", "gcr.io/30"),  # init container gcr.io/300, container gcr.io/30
        [NODE_40_300_2000, NODE_20_30_40],
        [6, 0],
    ),
]


def _snapshot(node_images: list[dict[str, int]]) -> ClusterSnapshot:
    return ClusterSnapshot(
        [NodeSpec(f"node{i + 1}", cpu=1000, memory=1000, images=im) for i, im in enumerate(node_images)]
    )


@pytest.mark.parametrize(
    ("name", "pod_images", "nodes", "expected"), PRIORITY_CASES, ids=[c[0] for c in PRIORITY_CASES]
)
def test_image_locality_priority_upstream_cases(
    name: str, pod_images: tuple[str, ...], nodes: list[dict[str, int]], expected: list[int]
) -> None:
    snap = _snapshot(nodes)
    plugin = ImageLocality()
    assert plugin.score(PodSpec("p", images=pod_images), snap, np.arange(len(nodes))).tolist() == expected
    assert plugin.normalize(np.array(expected, dtype=np.int64)) is None  # no NormalizeScore


def _digest(content: str) -> str:
    return "sha256:" + hashlib.sha256(content.encode()).hexdigest()


# TestNormalizedImageName
@pytest.mark.parametrize(
    ("name", "given", "expected"),
    [
        ("add :latest postfix 1", "root", "root:latest"),
        ("add :latest postfix 2", "gcr.io:5000/root", "gcr.io:5000/root:latest"),
        ("keep it as is 1", "root:tag", "root:tag"),
        ("keep it as is 2", "root@" + _digest("root"), "root@" + _digest("root")),
    ],
)
def test_normalized_image_name_upstream_cases(name: str, given: str, expected: str) -> None:
    assert normalized_image_name(given) == expected


def test_calculate_priority_clamps_to_the_thresholds() -> None:
    # Hand-worked: below 23 MB is 0; at or above 1000 MB x containers is 100; in between linear, truncated.
    assert calculate_priority(0, 1) == 0
    assert calculate_priority(23 * MB, 1) == 0
    assert calculate_priority(1000 * MB, 1) == 100
    assert calculate_priority(5000 * MB, 2) == 100
    assert calculate_priority(500 * MB, 1) == 100 * (500 - 23) // (1000 - 23)  # 48
    assert calculate_priority(500 * MB, 2) == 100 * (500 - 23) // (2000 - 23)  # 24
    assert calculate_priority(0, 0) == 0  # no containers: the clamped sum is the minimum, 0


def test_the_module_docstrings_worked_picture() -> None:
    # Image a, 300 MB, on node 1 only; b, 40 MB, on both. 2 containers, so the top is 2000 MB:
    # node 1 (300 / 2 + 40 - 23) * 100 // 1977 = 8; node 2 (40 - 23) * 100 // 1977 = 0.
    snap = _snapshot([{"a:latest": 300 * MB, "b:latest": 40 * MB}, {"b:latest": 40 * MB}])
    assert ImageLocality().score(PodSpec("p", images=("a", "b")), snap, np.arange(2)).tolist() == [8, 0]


def test_an_image_in_two_containers_counts_twice() -> None:
    # sumImageScores walks init containers and containers: 300 MB twice on the only node,
    # (600 - 23) * 100 // (2000 - 23) = 29.
    snap = _snapshot([{"gcr.io/300:latest": 300 * MB}])
    assert ImageLocality().score(PodSpec("p", images=("gcr.io/300", "gcr.io/300")), snap, np.arange(1)).tolist() == [29]


def test_node_names_are_compared_as_reported() -> None:
    # Upstream normalises only the pod's names: a node reporting "gcr.io/big" without a tag is missed
    # (the TODO of normalizedImageName). A tagged pod image matches exactly.
    snap = _snapshot([{"gcr.io/big": 1000 * MB}, {"gcr.io/big:v2": 1000 * MB}])
    plugin = ImageLocality()
    assert plugin.score(PodSpec("p", images=("gcr.io/big",)), snap, np.arange(2)).tolist() == [0, 0]
    # v2 on 1 node of 2: 500 MB of 1000 MB, (500 - 23) * 100 // 977 = 48.
    assert plugin.score(PodSpec("q", images=("gcr.io/big:v2",)), snap, np.arange(2)).tolist() == [0, 48]


def test_only_the_nodes_asked_are_scored_but_every_node_counts_in_the_spread() -> None:
    snap = _snapshot([{"img:latest": 1000 * MB}, {}, {}, {}])
    # 1000 MB on 1 node of 4: 250 MB, (250 - 23) * 100 // 977 = 23, for node 0 alone.
    assert ImageLocality().score(PodSpec("p", images=("img",)), snap, np.array([0])).tolist() == [23]


def test_a_pod_without_images_scores_zero_everywhere() -> None:
    snap = _snapshot([{"img:latest": 1000 * MB}])
    assert ImageLocality().score(PodSpec("p"), snap, np.arange(1)).tolist() == [0]


def test_scores_follow_the_nodes_as_they_come_and_go() -> None:
    snap = _snapshot([{"img:latest": 1000 * MB}, {}])
    plugin = ImageLocality()
    pod = PodSpec("p", images=("img",))
    # 1 node of 2: 500 MB -> 48; asked again (a second replica), the same.
    assert plugin.score(pod, snap, np.arange(2)).tolist() == [48, 0]
    assert plugin.score(PodSpec("p2", images=("img",)), snap, np.arange(2)).tolist() == [48, 0]
    # A third node without the image: 1000 / 3 = 333.3 MB, (333.3 - 23) * 100 / 977 = 31.8 -> 31.
    snap.add_node(NodeSpec("node3", cpu=1000, memory=1000))
    assert plugin.score(pod, snap, np.arange(3)).tolist() == [31, 0, 0]
    # The same node with the image: 2 of 3 hold it, 666.7 MB, (666.7 - 23) * 100 / 977 = 65.9 -> 65.
    snap.update_node(NodeSpec("node3", cpu=1000, memory=1000, images={"img:latest": 1000 * MB}))
    assert plugin.score(pod, snap, np.arange(3)).tolist() == [65, 0, 65]
    # node2 gone: 2 of 2 hold it, 1000 MB -> 100 on the nodes that remain.
    snap.remove_node("node2")
    assert plugin.score(pod, snap, np.array([0, 2])).tolist() == [100, 100]


def test_the_first_reported_size_of_a_name_holds_cluster_wide() -> None:
    # The cache keeps the size from the first node to report a name: 800 MB, on 2 nodes of 2, on both nodes.
    # (800 - 23) * 100 // 977 = 79.
    snap = _snapshot([{"img:latest": 800 * MB}, {"img:latest": 100 * MB}])
    assert ImageLocality().score(PodSpec("p", images=("img",)), snap, np.arange(2)).tolist() == [79, 79]
