"""The Capacity Scheduler's allocation, restated from YARN's TestLeafQueue and worked by hand."""

from pathlib import Path

import pytest

from skenario.scheduling.queues.applications import Application, Node
from skenario.scheduling.queues.capacity import CapacityScheduler
from skenario.scheduling.queues.capacity_config import CapacityConfig, QueueConfig, read_capacity_config
from skenario.scheduling.queues.resources import Resource, ResourceCalculator

GB = 1024


def leaf_a(**settings: object) -> CapacityScheduler:
    """TestLeafQueue's queue a: 8.5% of two 8 GB nodes, maximum 100%, MULP 50, ULF 2 (b takes the rest)."""
    a = QueueConfig("root.a", capacity=8.5, absolute_capacity=0.085, minimum_user_limit_percent=50, user_limit_factor=2)
    b = QueueConfig("root.b", capacity=91.5, absolute_capacity=0.915)
    config = CapacityConfig(QueueConfig("root", children=(a, b)), ResourceCalculator(), **settings)  # type: ignore[arg-type]
    return CapacityScheduler(config, [Node("n0", Resource(8 * GB, 16)), Node("n1", Resource(8 * GB, 16))])


def app(id: str, user: str, queue: str = "root.a", am: int = GB, unmanaged: bool = True) -> Application:
    return Application(id, user, queue, 0, Resource(am, 1), unmanaged_am=unmanaged)


def beats(cs: CapacityScheduler, nodes: list[str]) -> list[tuple[int, int, int]]:
    """Queue a's, app_0's and app_1's used MB after each heartbeat of `nodes` (one container each)."""
    out = []
    apps = {a.id: a for a in cs.leaves["root.a"].active}
    for name in nodes:
        cs.node_update(cs.nodes[name], 0)
        out.append((cs.leaves["root.a"].used.memory, apps["app_0"].used.memory, apps["app_1"].used.memory))
    return out


def test_user_limits() -> None:
    """testUserLimits: user_0 asks 2 x 3 GB, user_1 2 x 1 GB; the second container goes to user_1."""
    cs = leaf_a()
    app_0, app_1 = app("app_0", "user_0"), app("app_1", "user_1")
    cs.submit(app_0)
    cs.submit(app_1)
    cs.ask(app_0, 1, Resource(3 * GB, 1), 2)
    cs.ask(app_1, 1, Resource(GB, 1), 2)
    assert beats(cs, ["n0", "n0", "n1"]) == [(3 * GB, 3 * GB, 0), (4 * GB, 3 * GB, GB), (7 * GB, 6 * GB, GB)]
    leaf = cs.leaves["root.a"]
    assert sum(1 for u in leaf.users.values() if u.asking_apps > 0) == 1  # only user_1 still asks


def test_user_specific_user_limits() -> None:
    """testUserSpecificUserLimits: user_0 weighs 1.5; app_0 asks 3 x 4 GB, app_1 2 x 1 GB."""
    cs = leaf_a()
    cs.leaves["root.a"].user("user_0").weight = 1.5
    app_0, app_1 = app("app_0", "user_0"), app("app_1", "user_1")
    cs.submit(app_0)
    cs.submit(app_1)
    cs.ask(app_0, 1, Resource(4 * GB, 1), 3)
    cs.ask(app_1, 1, Resource(GB, 1), 2)
    assert beats(cs, ["n0", "n0", "n1"]) == [(4 * GB, 4 * GB, 0), (8 * GB, 8 * GB, 0), (9 * GB, 8 * GB, GB)]
    assert app_0.outstanding() == 1 and app_1.outstanding() == 1  # 4 GB and 1 GB still pending


def test_one_container_per_heartbeat_by_default_and_more_when_configured() -> None:
    cs = leaf_a()
    a = app("app_0", "user_0")
    cs.submit(a)
    cs.ask(a, 1, Resource(GB, 1), 4)
    assert len(cs.node_update(cs.nodes["n0"], 0)) == 1  # maximum-offswitch-assignments 1
    more = leaf_a(maximum_offswitch_assignments=100)
    b = app("app_0", "user_0")
    more.submit(b)
    more.ask(b, 1, Resource(GB, 1), 4)
    # ULF 2 caps user_0 at roundUp(min(...), 1 GB): it may take containers while at or below its limit.
    got = more.node_update(more.nodes["n0"], 0)
    assert 1 < len(got) <= 4


def test_am_resource_limit_keeps_the_second_application_pending() -> None:
    """The queue's AM limit is normalizeUp(guarantee x 10%): 1 GB here; the first AM starts regardless."""
    cs = leaf_a()
    first, second = app("app_0", "user_0", unmanaged=False), app("app_1", "user_1", unmanaged=False)
    cs.submit(first)
    cs.submit(second)
    leaf = cs.leaves["root.a"]
    assert leaf.active == [first] and leaf.pending == [second]
    cs.finish(first)
    assert leaf.active == [second] and leaf.pending == []


def test_queue_maximum_capacity_stops_allocation() -> None:
    a = QueueConfig("root.a", capacity=50, maximum_capacity=50, absolute_capacity=0.5, absolute_maximum_capacity=0.5)
    b = QueueConfig("root.b", capacity=50, absolute_capacity=0.5)
    root = QueueConfig("root", children=(a, b))
    config = CapacityConfig(root, ResourceCalculator(), maximum_offswitch_assignments=100)
    cs = CapacityScheduler(config, [Node("n0", Resource(16 * GB, 16))])
    big = Application("app_0", "u", "root.a", 0, Resource(GB, 1), unmanaged_am=True)
    cs.submit(big)
    cs.leaves["root.a"].config = QueueConfig(**{**a.__dict__, "user_limit_factor": -1})
    cs.ask(big, 1, Resource(GB, 1), 16)
    cs.node_update(cs.nodes["n0"], 0)
    assert cs.leaves["root.a"].used.memory == 8 * GB  # 50% of 16 GB, though the node has room


def test_utilization_ordering_serves_the_less_used_queue_first() -> None:
    a = QueueConfig("root.a", capacity=50, absolute_capacity=0.5)
    b = QueueConfig("root.b", capacity=50, absolute_capacity=0.5)
    config = CapacityConfig(QueueConfig("root", children=(a, b)), ResourceCalculator())
    cs = CapacityScheduler(config, [Node("n0", Resource(8 * GB, 8)), Node("n1", Resource(8 * GB, 8))])
    in_a = Application("app_a", "u", "root.a", 0, Resource(GB, 1), unmanaged_am=True)
    in_b = Application("app_b", "v", "root.b", 0, Resource(GB, 1), unmanaged_am=True)
    for x in (in_a, in_b):
        cs.submit(x)
        cs.ask(x, 1, Resource(GB, 1), 4)
    order = [cs.node_update(cs.nodes["n0"], 0)[0].app.id for _ in range(4)]
    # Both start at 0% of their guarantee: a first (configured first), then whichever uses less.
    assert order == ["app_a", "app_b", "app_a", "app_b"]


def test_a_container_too_big_for_the_free_room_reserves_the_node_until_it_fits() -> None:
    config = CapacityConfig(
        QueueConfig("root", children=(QueueConfig("root.a", capacity=100, user_limit_factor=-1),)),
        ResourceCalculator(),
    )
    node = Node("n0", Resource(8 * GB, 8))
    cs = CapacityScheduler(config, [node, Node("n1", Resource(8 * GB, 8))])  # the queue has room; n0 has not
    small = Application("small", "u", "root.a", 0, Resource(GB, 1), unmanaged_am=True)
    big = Application("big", "u", "root.a", 0, Resource(GB, 1), unmanaged_am=True)
    cs.submit(small)
    cs.submit(big)
    cs.ask(small, 1, Resource(6 * GB, 1), 1)
    held = cs.node_update(node, 0)
    cs.ask(big, 1, Resource(4 * GB, 1), 1)
    assert cs.node_update(node, 1) == []  # 2 GB free: big reserves the node
    assert node.reservation is not None and big.used.memory == 4 * GB  # a reservation counts as used
    cs.release(held[0])
    got = cs.node_update(node, 2)
    assert [c.app.id for c in got] == ["big"] and node.reservation is None and big.used.memory == 4 * GB


@pytest.mark.parametrize(
    ("a_gb", "b_gb", "first"),
    [(0, 1, "root.a"), (2, 2, "root.b"), (3, 4, "root.b"), (3, 8, "root.a")],
)
def test_single_level_queues_ordering(a_gb: int, b_gb: int, first: str) -> None:
    """TestParentQueue.testSingleLevelQueues: a (30%) and b (70%) of two 10 GB nodes, 6 GB and 14 GB
    guaranteed; the root offers a node first to the queue that uses less of its guarantee."""
    a = QueueConfig("root.a", capacity=30, absolute_capacity=0.3)
    b = QueueConfig("root.b", capacity=70, absolute_capacity=0.7)
    cs = CapacityScheduler(
        CapacityConfig(QueueConfig("root", children=(a, b)), ResourceCalculator()),
        [Node("n0", Resource(10 * GB, 16)), Node("n1", Resource(10 * GB, 16))],
    )
    cs.leaves["root.a"].used = Resource(a_gb * GB, a_gb)
    cs.leaves["root.b"].used = Resource(b_gb * GB, b_gb)
    assert cs.children_in_order(cs.root)[0].path == first


MULTI_LEVEL = {
    "root.queues": "a,b,c,d",
    "root.a.capacity": "10",
    "root.b.capacity": "50",
    "root.c.capacity": "20",
    "root.d.capacity": "20",
    "root.a.queues": "a1,a2",
    "root.a.a1.capacity": "50",
    "root.a.a2.capacity": "50",
    "root.b.queues": "b1,b2,b3",
    "root.b.b1.capacity": "10",
    "root.b.b2.capacity": "20",
    "root.b.b3.capacity": "70",
    "root.c.queues": "c1",
    "root.c.c1.capacity": "100",
    "root.c.c1.queues": "c11",
    "root.c.c1.c11.capacity": "100",
    "root.c.c1.c11.queues": "c111",
    "root.c.c1.c11.c111.capacity": "100",
    "root.c.c1.c11.c111.queues": "c1111",
    "root.c.c1.c11.c111.c1111.capacity": "100",
}
"""TestParentQueue.setupMultiLevelQueues: four queues under the root, a and b with children, c four deep."""


def multi_level(tmp_path: Path, **more: str) -> CapacityScheduler:
    """The multi-level tree on three 10 GB nodes, every queue's applications unlimited by user (ULF -1),
    and no cap on containers a heartbeat places off-switch (the test predates that cap)."""
    properties = {f"yarn.scheduler.capacity.{key}": value for key, value in (MULTI_LEVEL | more).items()}
    properties["yarn.scheduler.capacity.per-node-heartbeat.maximum-offswitch-assignments"] = "100"
    for leaf in ("a.a1", "a.a2", "b.b1", "b.b2", "b.b3", "c.c1.c11.c111.c1111", "d"):
        properties[f"yarn.scheduler.capacity.root.{leaf}.user-limit-factor"] = "-1"
    xml = "".join(f"<property><name>{k}</name><value>{v}</value></property>" for k, v in properties.items())
    (tmp_path / "capacity-scheduler.xml").write_text(f"<configuration>{xml}</configuration>")
    config = read_capacity_config(tmp_path / "capacity-scheduler.xml")
    return CapacityScheduler(config, [Node(f"host_{k}", Resource(10 * GB, 16)) for k in range(3)])


def charged(cs: CapacityScheduler, usage: dict[str, int]) -> dict[str, Application]:
    """An application in each leaf of `usage`, charged its GB as if it held containers."""
    apps = {}
    for leaf, gb in usage.items():
        apps[leaf] = app(f"app_{leaf}", "user", cs.leaves[leaf].path)
        cs.submit(apps[leaf])
        cs._charge(apps[leaf], Resource(gb * GB, gb))
    return apps


def test_multi_level_queues_are_offered_a_node_by_their_use_of_their_guarantee(tmp_path: Path) -> None:
    """testMultiLevelQueues: with A = 0/3 GB, B = 4/15, C = 1/6 and D = 0/6 used, the root offers the
    node to A before C before B; with A = 1/3, B = 6/15, C = 3/6, to A (and D) before B before C."""
    cs = multi_level(tmp_path)
    charged(cs, {"root.b.b2": 4, "root.c.c1.c11.c111.c1111": 1})
    order = [q.path for q in cs.children_in_order(cs.root)]
    assert order.index("root.a") < order.index("root.c") < order.index("root.b")
    charged(cs, {"root.a.a1": 1, "root.b.b3": 2, "root.c.c1.c11.c111.c1111": 2})
    order = [q.path for q in cs.children_in_order(cs.root)]
    assert order.index("root.a") < order.index("root.b") < order.index("root.c")


def test_multi_level_maximum_capacity_holds_a_child_back(tmp_path: Path) -> None:
    """testMultiLevelQueues, last step: A capped at 10% (3 of 30 GB) with 1 GB used in a1; on one
    heartbeat a2 (less used than a1) gets its 2 GB first, which takes A to its cap, so a1's 1 GB is
    refused, while b3, b1 and c get theirs: A = 3, B = 8, C = 4 GB."""
    cs = multi_level(tmp_path, **{"root.a.maximum-capacity": "10"})
    held = charged(cs, {"root.a.a1": 1, "root.b.b2": 4, "root.b.b3": 2, "root.c.c1.c11.c111.c1111": 3})
    asks = {"root.a.a1": 1, "root.a.a2": 2, "root.b.b3": 1, "root.b.b1": 1, "root.c.c1.c11.c111.c1111": 1}
    for leaf, gb in asks.items():
        asker = held.get(leaf) or charged(cs, {leaf: 0})[leaf]
        cs.ask(asker, 1, Resource(gb * GB, 1), 1)
    cs.node_update(cs.nodes["host_2"], 0)
    used = {q.path: q.used.memory // GB for q in cs.root.children if q.path != "root.d"}  # type: ignore[attr-defined]
    assert used == {"root.a": 3, "root.b": 8, "root.c": 4}
    assert cs.leaves["root.a.a1"].used.memory == 1 * GB and cs.leaves["root.a.a2"].used.memory == 2 * GB
