"""ImageLocality: favour the nodes that already hold the pod's images, the more so the more nodes hold them.

Mirrors `pkg/scheduler/framework/plugins/imagelocality/image_locality.go` (`Score`,
`sumImageScores`, `scaledImageScore`, `calculatePriority`, `normalizedImageName`) and the image
summaries of the scheduler cache (`cacheImpl.addNodeImageStates`). A worked picture, 2 nodes, a pod
of 2 containers with images `a` (300 MB) and `b` (40 MB); node 1 holds both, node 2 only `b`:

1. each image the node holds counts its size times the share of nodes holding it:
   node 1: 300 x 1/2 + 40 x 2/2 = 190 MB; node 2: 40 MB;
2. the sum is clamped to 23 MB .. 1000 MB x the number of containers (here 2000 MB);
3. and mapped linearly onto 0..100: node 1 100 x (190 - 23) / (2000 - 23) = 8; node 2 0.

The spread factor keeps a large image on one node from drawing every pod there (upstream's "node
heating problem"). The containers counted are the init containers and the containers, as upstream
since v1.28 (`PodSpec.images` lists both); upstream's newest also counts image volumes, which a
PodSpec does not carry. A pod's image without a tag or digest gets `:latest`; the node's names are
compared as the node reports them, every name of an image being its own entry (`NodeSpec.images`).
An image's size and the number of nodes holding it are cluster-wide, from the cache: the size is
that of the first node (by row) to report the name, as the cache keeps the first it sees. The score
has no NormalizeScore.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from skenario.scheduling.objects import PodSpec
from skenario.scheduling.plugins.interface import MAX_NODE_SCORE, Ints, PerNodeCache
from skenario.scheduling.snapshot import ClusterSnapshot

MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB  # minThreshold
MAX_CONTAINER_THRESHOLD = 1000 * MB  # maxContainerThreshold, per container
DEFAULT_TAG = "latest"


@dataclass(frozen=True)
class ImageState:
    """One image name across the cluster (`framework.ImageStateSummary`)."""

    size: int
    num_nodes: int


def normalized_image_name(name: str) -> str:
    """The name with `:latest` added when it has no tag (`normalizedImageName`).

    A ':' after the last '/' is a tag (or a digest's `sha256:`); one before it is a registry port.
    """
    if name.rfind(":") <= name.rfind("/"):
        return f"{name}:{DEFAULT_TAG}"
    return name


def scaled_image_score(state: ImageState, total_num_nodes: int) -> int:
    """The image's size times the share of nodes holding it, truncated (`scaledImageScore`, in float64)."""
    spread = state.num_nodes / total_num_nodes
    return int(state.size * spread)


def sum_image_scores(
    node_images: Mapping[str, int], images: Sequence[str], states: Mapping[str, ImageState], total_num_nodes: int
) -> int:
    """The scaled scores of the pod's images the node holds, each container counted (`sumImageScores`)."""
    total = 0
    for image in images:
        name = normalized_image_name(image)
        if name in node_images:
            total += scaled_image_score(states[name], total_num_nodes)
    return total


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """The sum clamped to [23 MB, 1000 MB x containers] and mapped onto 0..100 (`calculatePriority`).

    The clamped sum is at least the minimum, so the integer division is Go's.
    """
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


def image_states(snap: ClusterSnapshot) -> dict[str, ImageState]:
    """Every image name the present nodes report: its size (first node by row) and how many nodes hold it."""
    sizes: dict[str, int] = {}
    counts: dict[str, int] = {}
    for i in np.flatnonzero(snap.present).tolist():
        for name, size in snap.nodes[i].images.items():
            sizes.setdefault(name, size)
            counts[name] = counts.get(name, 0) + 1
    return {name: ImageState(sizes[name], counts[name]) for name in sizes}


class ImageLocality:
    """Score: the pod's images already on the node, scaled by their spread. Mirrors `imagelocality.ImageLocality`.

    Scores depend on the pod's images and the nodes only, so they are kept per image list until
    the nodes change: the replicas of one Deployment cost one lookup each.
    """

    name = "ImageLocality"

    def __init__(self) -> None:
        self._scores = PerNodeCache()
        self._states: dict[str, ImageState] = {}
        self._total_num_nodes = 0
        self._states_version = -1

    def _refresh(self, snap: ClusterSnapshot) -> None:
        """The cluster-wide image states and node count, once per version of the nodes."""
        if snap.version != self._states_version:
            self._states = image_states(snap)
            # NodeInfos().List(): every node in the snapshot, not only those that passed the filters.
            self._total_num_nodes = int(snap.present.sum())
            self._states_version = snap.version

    def pre_score_skips(self, pod: PodSpec, snap: ClusterSnapshot) -> bool:
        return not pod.images

    def score(self, pod: PodSpec, snap: ClusterSnapshot, nodes: Ints) -> Ints:
        images = pod.images
        if not images:
            return np.zeros(len(nodes), dtype=np.int64)

        def compute(i: int) -> int:
            if not snap.present[i]:  # a removed node's row: never scored
                return 0
            self._refresh(snap)
            node_images = snap.nodes[i].images
            raw = sum_image_scores(node_images, images, self._states, self._total_num_nodes)
            return calculate_priority(raw, len(images))

        return self._scores.get(images, snap, compute)[nodes]

    def normalize(self, scores: Ints) -> Ints | None:
        return None
