"""The Fair Scheduler's allocation, worked by hand from FairShareComparator and its limits."""

from pathlib import Path

from skenario.scheduling.queues.applications import Application, Node
from skenario.scheduling.queues.fair import FairScheduler
from skenario.scheduling.queues.fair_config import read_fair_config
from skenario.scheduling.queues.resources import Resource

GB = 1024


def scheduler(tmp_path: Path, queues: str, nodes: int = 1, node_gb: int = 64, multiple: bool = True) -> FairScheduler:
    path = tmp_path / "fair-scheduler.xml"
    path.write_text(f"<allocations>{queues}</allocations>", encoding="utf-8")
    config = read_fair_config(path)
    if multiple:
        config = type(config)(**{**config.__dict__, "assign_multiple": True})
    return FairScheduler(config, [Node(f"n{i}", Resource(node_gb * GB, 64)) for i in range(nodes)])


def asking(fs: FairScheduler, id: str, queue: str, count: int, user: str = "u", size_gb: int = 1) -> Application:
    app = Application(id, user, queue, 0, Resource(GB, 1), unmanaged_am=True)
    fs.submit(app)
    fs.ask(app, 1, Resource(size_gb * GB, 1), count)
    return app


def order(fs: FairScheduler, beats: int) -> list[str]:
    """Which queue each of `beats` single-container heartbeats serves."""
    out = []
    for _ in range(beats):
        config = fs.config
        fs.config = type(config)(**{**config.__dict__, "assign_multiple": False})
        (container,) = fs.node_update(fs.nodes["n0"], 0)
        fs.config = config
        out.append(container.app.queue.rsplit(".", 1)[-1])
    return out


def test_usage_over_weight_decides_and_ties_go_by_name(tmp_path: Path) -> None:
    """Weights 1 and 3, both asking: a and b start tied (0 over each weight; name a first), then
    whichever has the smaller usage over weight: a b b b a b b b ..."""
    fs = scheduler(tmp_path, '<queue name="a"/><queue name="b"><weight>3</weight></queue>')
    asking(fs, "x", "root.a", 20)
    asking(fs, "y", "root.b", 20)
    assert order(fs, 8) == ["a", "b", "b", "b", "a", "b", "b", "b"]


def test_a_queue_below_its_minimum_share_comes_first(tmp_path: Path) -> None:
    queues = (
        '<queue name="a"><minResources>3072 mb, 3 vcores</minResources></queue>'
        '<queue name="b"><weight>10</weight></queue>'
    )
    fs = scheduler(tmp_path, queues)
    asking(fs, "x", "root.a", 20)
    asking(fs, "y", "root.b", 20)
    # a is needy (usage under min(3 GB, demand)) for its first three containers; b's weight 10 then wins
    # until 1/10 of b's usage passes 3 GB over a's weight 1: the 31st b container, after 30 of b's.
    assert order(fs, 6) == ["a", "a", "a", "b", "b", "b"]


def test_max_resources_caps_a_queue_even_on_an_idle_cluster(tmp_path: Path) -> None:
    fs = scheduler(tmp_path, '<queue name="a"><maxResources>2048 mb, 64 vcores</maxResources></queue><queue name="b"/>')
    app = asking(fs, "x", "root.a", 10)
    fs.node_update(fs.nodes["n0"], 0)
    assert app.used == Resource(2 * GB, 2) and app.asked == 8


def test_max_running_apps_keeps_later_applications_waiting_until_one_ends(tmp_path: Path) -> None:
    fs = scheduler(tmp_path, '<queue name="a"><maxRunningApps>1</maxRunningApps></queue><queue name="b"/>')
    first, second = asking(fs, "x", "root.a", 1), asking(fs, "y", "root.a", 1)
    leaf = fs.leaves["root.a"]
    assert leaf.active == [first] and leaf.pending == [second]
    fs.finish(first)
    assert leaf.active == [second] and leaf.pending == []


def test_user_max_running_apps(tmp_path: Path) -> None:
    fs = scheduler(tmp_path, '<queue name="a"/><user name="alice"><maxRunningApps>1</maxRunningApps></user>')
    asking(fs, "x", "root.a", 1, user="alice")
    asking(fs, "y", "root.a", 1, user="alice")
    asking(fs, "z", "root.a", 1, user="bob")
    assert [a.id for a in fs.leaves["root.a"].active] == ["x", "z"]


def test_max_am_share_of_the_fair_share_limits_how_many_ams_start(tmp_path: Path) -> None:
    """One active queue on a 4 GB node has a 4 GB fair share; maxAMShare 0.5 lets 2 GB of AMs run."""
    fs = scheduler(tmp_path, '<queue name="a"><maxAMShare>0.5</maxAMShare></queue><queue name="b"/>', node_gb=4)
    apps = [Application(f"app{k}", "u", "root.a", 0, Resource(GB, 1)) for k in range(3)]
    for app in apps:
        fs.submit(app)
    given = fs.node_update(fs.nodes["n0"], 0)
    assert [c.app.id for c in given if c.is_am] == ["app0", "app1"]
    assert fs.leaves["root.a"].am_used == Resource(2 * GB, 2)


def test_a_container_that_does_not_fit_reserves_the_node(tmp_path: Path) -> None:
    fs = scheduler(tmp_path, '<queue name="a"/><queue name="b"/>', node_gb=4, multiple=False)
    asking(fs, "x", "root.a", 1, size_gb=3)
    (held,) = fs.node_update(fs.nodes["n0"], 0)
    big = asking(fs, "y", "root.b", 1, size_gb=2)
    assert fs.node_update(fs.nodes["n0"], 1) == [] and fs.nodes["n0"].reservation is not None
    fs.release(held)
    (got,) = fs.node_update(fs.nodes["n0"], 2)
    assert got.app is big and fs.nodes["n0"].reservation is None


def test_why_a_non_runnable_application_waits(tmp_path: Path) -> None:
    fs = scheduler(tmp_path, '<queue name="a"><maxRunningApps>1</maxRunningApps></queue><queue name="b"/>')
    asking(fs, "x", "root.a", 1)
    second = asking(fs, "y", "root.a", 1)
    assert fs.why_waiting(second) == "non-runnable: queue root.a runs 1 applications (maxRunningApps)"
