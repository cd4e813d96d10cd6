"""Pod IPs: what Knative's activator orders its pods by.

A pod gets its IP when its sandbox is created, from the node's slice of the cluster's pod network
(the CNI plugin's IPAM). Nothing in skenario routes by address; the activator's throttler sorts its
pod trackers by `dest`, the string "IP:port" (`revisionThrottler.updateCapacity`,
knative/serving pkg/activator/net/throttler.go), and its first-available policy loads them in that
order. So the order of addresses, not creation order, decides which pods are loaded most.

Each pod here gets an address drawn at random from `NETWORK` (stream `pod-addresses`), unique
among the workload's live pods: its rank among the others is then a random one, independent of
its age. (A host-local IPAM hands out a node's addresses in turn, which the string sort scrambles:
"10.0.1.10" sorts before "10.0.1.9".)
"""

from __future__ import annotations

import numpy as np

NETWORK = (10 << 24, 1 << 24)
"""The pod network 10.0.0.0/8: its first address and its size."""
QUEUE_PROXY_PORT = 8012
"""queue-proxy's port (`networking.BackendHTTPPort`): the port of every activator `dest`."""


def dotted(address: int) -> str:
    """An IPv4 address as "a.b.c.d"."""
    return ".".join(str(address >> shift & 255) for shift in (24, 16, 8, 0))


class PodAddresses:
    """Hands out pod IPs at random from `network` (its first address and size, neither end given out);
    `release` returns one when its pod is gone."""

    __slots__ = ("_live", "_network", "_rng")

    def __init__(self, rng: np.random.Generator, network: tuple[int, int] = NETWORK) -> None:
        self._rng = rng
        self._network = network
        self._live: set[str] = set()

    def allocate(self) -> str:
        first, size = self._network
        if len(self._live) >= size - 2:
            raise RuntimeError(f"all {size - 2} addresses of the pod network are taken")
        while True:  # a clash is rare: hundreds of live pods in 16 million addresses
            address = dotted(first + 1 + int(self._rng.integers(size - 2)))
            if address not in self._live:
                self._live.add(address)
                return address

    def release(self, address: str) -> None:
        self._live.discard(address)
