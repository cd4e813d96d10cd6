"""Pod IPs: unique among live pods, drawn from the pod network, ranked independently of age."""

from __future__ import annotations

import math

import numpy as np

from skenario.core.random import RandomStreams
from skenario.model.activator import dest
from skenario.model.addresses import PodAddresses, dotted


def test_dotted_quads() -> None:
    assert dotted((10 << 24) + (244 << 16) + (1 << 8) + 9) == "10.244.1.9"
    assert dotted(0xFFFFFFFF) == "255.255.255.255"


def test_addresses_are_unique_in_the_pod_network_and_come_back_when_released() -> None:
    addresses = PodAddresses(RandomStreams(1).generator("pod-addresses"))
    taken = [addresses.allocate() for _ in range(2000)]
    assert len(set(taken)) == 2000
    for address in taken:
        octets = [int(octet) for octet in address.split(".")]
        assert octets[0] == 10 and all(0 <= o <= 255 for o in octets) and octets[1:] not in ([0, 0, 0], [255, 255, 255])

    # A tiny network of four: every address is out, so a fifth is only found once one comes back.
    small = PodAddresses(RandomStreams(1).generator("pod-addresses"), network=(10 << 24, 6))
    four = {small.allocate() for _ in range(4)}
    assert four == {"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"}
    small.release("10.0.0.3")
    assert small.allocate() == "10.0.0.3"


def test_the_same_seed_gives_the_same_addresses() -> None:
    first = PodAddresses(RandomStreams(5).generator("pod-addresses"))
    second = PodAddresses(RandomStreams(5).generator("pod-addresses"))
    assert [first.allocate() for _ in range(20)] == [second.allocate() for _ in range(20)]


def test_a_pods_rank_by_dest_does_not_follow_its_age() -> None:
    # Spearman's rank correlation of creation order with dest order: 0 for independent ranks, with a
    # standard error of 1/sqrt(n - 1); a creation-ordered allocator would give 1.
    n = 2000
    addresses = PodAddresses(RandomStreams(2).generator("pod-addresses"))
    dests = [f"{addresses.allocate()}:8012" for _ in range(n)]
    rank = np.argsort(np.argsort(dests))
    rho = np.corrcoef(np.arange(n), rank)[0, 1]
    assert abs(rho) < 4 / math.sqrt(n - 1)


def test_dest_is_the_address_and_queue_proxys_port() -> None:
    class Pod:
        address = "10.1.2.3"

    assert dest(Pod()) == "10.1.2.3:8012"  # type: ignore[arg-type]
