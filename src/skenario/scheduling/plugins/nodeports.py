"""NodePorts: a pod's host ports must be free on the node.

Mirrors `pkg/scheduler/framework/plugins/nodeports/node_ports.go` (`PreFilter`, `Filter`,
`fitsPorts`) and the node's used ports, `framework.HostPortInfo` (`Add`, `CheckConflict`,
`sanitize`). A host port is the triple (host IP, protocol, port); an empty IP means 0.0.0.0 and an
empty protocol TCP, and a port of 0 or less is no host port at all. Two triples conflict when
protocol and port agree and their IPs overlap: equal, or either is 0.0.0.0 (which binds them all).

A pod with no host port skips the filter (upstream's PreFilter returns Skip): every node passes,
at no cost. Otherwise the used ports of each node are gathered from the pods on it, keeping only
the port numbers the pod asks for, so a node of pods without host ports costs a glance per pod. A
conflict is `Unschedulable`, not unresolvable: evicting the pod holding the port would free it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

import numpy as np

from skenario.scheduling.objects import HostPort, PodSpec
from skenario.scheduling.plugins.interface import FilterResult, Ints
from skenario.scheduling.snapshot import ClusterSnapshot

ERR_REASON = "node(s) didn't have free ports for the requested pod ports"  # nodeports.ErrReason
BIND_ALL_HOST_IP = "0.0.0.0"  # framework.DefaultBindAllHostIP
DEFAULT_PROTOCOL = "TCP"

Triple = tuple[str, str, int]  # (host IP, protocol, port), sanitised


def sanitized(port: HostPort) -> Triple:
    """The port as `HostPortInfo.sanitize` keys it: empty IP is 0.0.0.0, empty protocol TCP."""
    return (port.host_ip or BIND_ALL_HOST_IP, port.protocol or DEFAULT_PROTOCOL, port.port)


def used_ports(ports: Iterable[HostPort]) -> set[Triple]:
    """A node's `HostPortInfo`: each host port of its pods once (`Add` ignores ports <= 0)."""
    return {sanitized(p) for p in ports if p.port > 0}


def check_conflict(used: Collection[Triple], want: HostPort) -> bool:
    """Whether `want` collides with a used port (`HostPortInfo.CheckConflict`).

    0.0.0.0 collides with the same protocol and port on any IP; another IP with the same on that
    IP or on 0.0.0.0.
    """
    if want.port <= 0:
        return False
    ip, protocol, port = sanitized(want)
    if ip == BIND_ALL_HOST_IP:
        return any(u[1] == protocol and u[2] == port for u in used)
    return (BIND_ALL_HOST_IP, protocol, port) in used or (ip, protocol, port) in used


def fits_ports(want: Sequence[HostPort], used: Collection[Triple]) -> bool:
    """No wanted port conflicts with the node's used ports (`fitsPorts`)."""
    return not any(check_conflict(used, p) for p in want)


class NodePorts:
    """Filter: the pod's host ports are free on the node. Mirrors `nodeports.NodePorts`."""

    name = "NodePorts"

    def pre_filter_skips(self, pod: PodSpec, snap: ClusterSnapshot) -> bool:
        return not any(p.port > 0 for p in pod.host_ports)

    def filter(self, pod: PodSpec, snap: ClusterSnapshot, nodes: Ints) -> FilterResult:
        want = [p for p in pod.host_ports if p.port > 0]
        codes = np.zeros(len(nodes), dtype=np.int64)
        if not want:  # PreFilter: Skip
            return FilterResult(codes)
        numbers = {p.port for p in want}
        for k, i in enumerate(nodes.tolist()):
            # Only used ports with a wanted number can conflict; the rest need not be gathered.
            used = used_ports(p for other in snap.pods_on[i].values() for p in other.host_ports if p.port in numbers)
            if used and not fits_ports(want, used):
                codes[k] = 1
        return FilterResult(codes, ("", ERR_REASON))
