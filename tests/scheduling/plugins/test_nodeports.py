"""NodePorts: upstream's unit tests restated as data, then the plugin over whole clusters.

Upstream cases, kubernetes/kubernetes:
- `pkg/scheduler/framework/plugins/nodeports/node_ports_test.go`, `TestNodePorts`: a pod's host
  ports against those of one pod already on the node (`newPod("m1", "PROTOCOL/IP/PORT", ...)`);
- `pkg/scheduler/framework/types_test.go`, `TestHostPortInfo_Check`: one (protocol, IP, port)
  checked against those added to a `HostPortInfo`, where "" means the default (TCP, 0.0.0.0).
The random clusters at the end compare the plugin with the rule stated independently: two host
ports collide when their ports (> 0) and protocols agree and their IPs are equal or either is 0.0.0.0.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.scheduling.objects import HostPort, NodeSpec, PodSpec
from skenario.scheduling.plugins.nodeports import ERR_REASON, NodePorts, check_conflict, fits_ports, used_ports
from skenario.scheduling.snapshot import ClusterSnapshot


def ports(*specs: str) -> tuple[HostPort, ...]:
    """Upstream's "PROTOCOL/IP/PORT" strings as host ports."""
    out = []
    for spec in specs:
        protocol, ip, port = spec.split("/")
        out.append(HostPort(int(port), protocol, ip))
    return tuple(out)


# TestNodePorts: (case name, the incoming pod's ports, the ports of the pod on the node, conflict?)
NODE_PORTS_CASES = [
    ("skip filter", (), (), False),
    ("other port", ports("UDP/127.0.0.1/8080"), ports("UDP/127.0.0.1/9090"), False),
    ("same udp port", ports("UDP/127.0.0.1/8080"), ports("UDP/127.0.0.1/8080"), True),
    ("same tcp port", ports("TCP/127.0.0.1/8080"), ports("TCP/127.0.0.1/8080"), True),
    ("different host ip", ports("TCP/127.0.0.1/8080"), ports("TCP/127.0.0.2/8080"), False),
    ("different protocol", ports("UDP/127.0.0.1/8080"), ports("TCP/127.0.0.1/8080"), False),
    ("second udp port conflict", ports("UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"), ports("UDP/127.0.0.1/8080"), True),
    (
        "first tcp port conflict",
        ports("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
        ports("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"),
        True,
    ),
    ("first tcp port conflict due to 0.0.0.0 hostIP", ports("TCP/0.0.0.0/8001"), ports("TCP/127.0.0.1/8001"), True),
    (
        "TCP hostPort conflict due to 0.0.0.0 hostIP",
        ports("TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
        ports("TCP/127.0.0.1/8001"),
        True,
    ),
    ("second tcp port conflict to 0.0.0.0 hostIP", ports("TCP/127.0.0.1/8001"), ports("TCP/0.0.0.0/8001"), True),
    ("second different protocol", ports("UDP/127.0.0.1/8001"), ports("TCP/0.0.0.0/8001"), False),
    (
        "UDP hostPort conflict due to 0.0.0.0 hostIP",
        ports("UDP/127.0.0.1/8001"),
        ports("TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"),
        True,
    ),
]


@pytest.mark.parametrize(("name", "want", "used", "conflict"), NODE_PORTS_CASES, ids=[c[0] for c in NODE_PORTS_CASES])
def test_node_ports_upstream_cases(
    name: str, want: tuple[HostPort, ...], used: tuple[HostPort, ...], conflict: bool
) -> None:
    snap = ClusterSnapshot([NodeSpec("m1", cpu=1000, memory=1000)])
    snap.assume(PodSpec("existing", host_ports=used), 0)
    result = NodePorts().filter(PodSpec("incoming", host_ports=want), snap, np.array([0], dtype=np.int64))
    code = int(result.codes[0])
    assert (code != 0) == conflict
    if conflict:
        assert result.reasons[code] == ERR_REASON
        assert code not in result.unresolvable  # Unschedulable: preemption may free the port
    assert fits_ports(want, used_ports(used)) == (not conflict)


# TestHostPortInfo_Check: (case name, added as (protocol, ip, port), checked, conflict?)
CHECK_CASES = [
    ("empty check should check 0.0.0.0 and TCP", [("TCP", "127.0.0.1", 80)], ("", "", 81), False),
    ("empty check should check 0.0.0.0 and TCP (conflicted)", [("TCP", "127.0.0.1", 80)], ("", "", 80), True),
    ("empty port check should pass", [("TCP", "127.0.0.1", 80)], ("", "", 0), False),
    ("0.0.0.0 should check all registered IPs", [("TCP", "127.0.0.1", 80)], ("TCP", "0.0.0.0", 80), True),
    ("0.0.0.0 with different protocol should be allowed", [("UDP", "127.0.0.1", 80)], ("TCP", "0.0.0.0", 80), False),
    (
        "0.0.0.0 with different port should be allowed",
        [("TCP", "127.0.0.1", 79), ("TCP", "127.0.0.1", 81), ("TCP", "127.0.0.1", 82)],
        ("TCP", "0.0.0.0", 80),
        False,
    ),
    ("normal ip should check all registered 0.0.0.0", [("TCP", "0.0.0.0", 80)], ("TCP", "127.0.0.1", 80), True),
    (
        "normal ip with different port/protocol should be allowed (0.0.0.0)",
        [("TCP", "0.0.0.0", 79), ("UDP", "0.0.0.0", 80), ("TCP", "0.0.0.0", 81), ("TCP", "0.0.0.0", 82)],
        ("TCP", "127.0.0.1", 80),
        False,
    ),
    (
        "normal ip with different port/protocol should be allowed",
        [("TCP", "127.0.0.1", 79), ("UDP", "127.0.0.1", 80), ("TCP", "127.0.0.1", 81), ("TCP", "127.0.0.1", 82)],
        ("TCP", "127.0.0.1", 80),
        False,
    ),
]


@pytest.mark.parametrize(("name", "added", "check", "conflict"), CHECK_CASES, ids=[c[0] for c in CHECK_CASES])
def test_host_port_info_check_upstream_cases(
    name: str, added: list[tuple[str, str, int]], check: tuple[str, str, int], conflict: bool
) -> None:
    used = used_ports(HostPort(port, protocol, ip) for protocol, ip, port in added)
    protocol, ip, port = check
    assert check_conflict(used, HostPort(port, protocol, ip)) == conflict


def test_a_port_of_zero_is_no_host_port_on_either_side() -> None:
    # HostPortInfo.Add ignores port <= 0, and getContainerPorts keeps only HostPort > 0.
    assert used_ports([HostPort(0), HostPort(-1)]) == set()
    snap = ClusterSnapshot([NodeSpec("n", cpu=1000, memory=1000)])
    snap.assume(PodSpec("existing", host_ports=(HostPort(0),)), 0)
    result = NodePorts().filter(PodSpec("incoming", host_ports=(HostPort(0),)), snap, np.array([0], dtype=np.int64))
    assert result.codes.tolist() == [0]


def test_the_filter_runs_over_many_nodes_and_a_released_port_is_free_again() -> None:
    snap = ClusterSnapshot([NodeSpec(f"n{i}", cpu=1000, memory=1000) for i in range(4)])
    holder = PodSpec("holder", host_ports=(HostPort(8080),))  # TCP on 0.0.0.0
    snap.assume(holder, 1)
    snap.assume(PodSpec("other-ip", host_ports=(HostPort(8080, "TCP", "10.0.0.1"),)), 2)
    snap.assume(PodSpec("udp", host_ports=(HostPort(8080, "UDP"),)), 3)
    snap.assume(PodSpec("plain"), 0)
    plugin = NodePorts()
    incoming = PodSpec("incoming", host_ports=(HostPort(8080, "TCP", "10.0.0.2"),))
    nodes = np.array([3, 2, 1, 0], dtype=np.int64)
    result = plugin.filter(incoming, snap, nodes)
    # n3: UDP only -> free; n2: another IP -> free; n1: 0.0.0.0 holds every IP -> taken; n0: no host port.
    assert [result.reasons[c] for c in result.codes.tolist()] == ["", "", ERR_REASON, ""]
    assert not result.unresolvable
    snap.release(holder, 1)
    assert plugin.filter(incoming, snap, nodes).codes.tolist() == [0, 0, 0, 0]


def test_a_pod_without_host_ports_passes_everywhere() -> None:
    snap = ClusterSnapshot([NodeSpec("n", cpu=1000, memory=1000)])
    snap.assume(PodSpec("existing", host_ports=(HostPort(80),)), 0)
    assert NodePorts().filter(PodSpec("incoming"), snap, np.array([0], dtype=np.int64)).codes.tolist() == [0]


# -- random clusters against the rule stated directly ------------------------------------------------

host_ports = st.builds(
    HostPort,
    st.integers(0, 3),
    st.sampled_from(("TCP", "UDP", "")),
    st.sampled_from(("0.0.0.0", "", "10.0.0.1", "10.0.0.2")),
)


def _collide(a: HostPort, b: HostPort) -> bool:
    if a.port <= 0 or b.port <= 0 or a.port != b.port or (a.protocol or "TCP") != (b.protocol or "TCP"):
        return False
    ip_a, ip_b = a.host_ip or "0.0.0.0", b.host_ip or "0.0.0.0"
    return ip_a == ip_b or "0.0.0.0" in (ip_a, ip_b)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(st.lists(host_ports, max_size=3), max_size=3), min_size=1, max_size=4),
    st.lists(host_ports, max_size=3),
)
def test_the_filter_refuses_exactly_the_nodes_with_a_colliding_port(
    on_nodes: list[list[list[HostPort]]], want: list[HostPort]
) -> None:
    snap = ClusterSnapshot([NodeSpec(f"n{i}", cpu=1000, memory=1000) for i in range(len(on_nodes))])
    for i, pods in enumerate(on_nodes):
        for k, pod_ports in enumerate(pods):
            snap.assume(PodSpec(f"p{i}-{k}", host_ports=tuple(pod_ports)), i)
    result = NodePorts().filter(PodSpec("incoming", host_ports=tuple(want)), snap, np.arange(len(on_nodes)))
    expected = [any(_collide(w, u) for w in want for pod_ports in pods for u in pod_ports) for pods in on_nodes]
    assert (result.codes != 0).tolist() == expected
