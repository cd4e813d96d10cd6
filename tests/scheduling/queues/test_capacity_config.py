"""capacity-scheduler.xml: the queue tree, absolute capacities, and one clear line per mistake."""

from pathlib import Path

import pytest

from skenario.scheduling.queues.capacity_config import CapacityConfigError, read_capacity_config
from skenario.scheduling.queues.resources import DominantResourceCalculator

P = "yarn.scheduler.capacity."


def write(tmp_path: Path, properties: dict[str, str]) -> Path:
    body = "".join(f"<property><name>{k}</name><value>{v}</value></property>" for k, v in properties.items())
    path = tmp_path / "capacity-scheduler.xml"
    path.write_text(f'<?xml version="1.0"?><configuration>{body}</configuration>', encoding="utf-8")
    return path


TREE = {
    P + "root.queues": "a, b",
    P + "root.a.capacity": "40",
    P + "root.a.queues": "a1,a2",
    P + "root.a.a1.capacity": "25",
    P + "root.a.a1.maximum-capacity": "50",
    P + "root.a.a2.capacity": "75",
    P + "root.b.capacity": "60",
    P + "root.b.user-limit-factor": "2",
    P + "root.b.ordering-policy": "fair",
    P + "root.b.user-settings.alice.weight": "1.5",
}


def test_absolute_capacities_multiply_along_the_path(tmp_path: Path) -> None:
    config = read_capacity_config(write(tmp_path, TREE))
    queues = {q.path: q for q in config.root.walk()}
    assert [q.path for q in config.leaves()] == ["root.a.a1", "root.a.a2", "root.b"]
    assert queues["root.a.a1"].absolute_capacity == pytest.approx(0.4 * 0.25)
    assert queues["root.a.a1"].absolute_maximum_capacity == pytest.approx(1.0 * 0.5)
    assert queues["root.b"].user_limit_factor == 2 and queues["root.b"].ordering_policy == "fair"
    assert queues["root.b"].user_weights == {"alice": 1.5}
    # maximum-applications per queue: the system's 10,000 times the queue's absolute capacity.
    assert queues["root.a.a2"].maximum_applications == int(10_000 * 0.4 * 0.75)
    assert config.leaf("a1").path == "root.a.a1" and config.leaf("root.b").path == "root.b"


def test_weights_share_among_siblings(tmp_path: Path) -> None:
    props = {P + "root.queues": "x,y", P + "root.x.capacity": "1w", P + "root.y.capacity": "3w"}
    props[P + "resource-calculator"] = "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator"
    config = read_capacity_config(write(tmp_path, props))
    assert [q.absolute_capacity for q in config.leaves()] == [0.25, 0.75]
    assert isinstance(config.calculator, DominantResourceCalculator)


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({P + "root.a.capacity": "50"}, P + "root.a.capacity", "sum to 110, not 100"),
        ({P + "root.b.capacity": ""}, P + "root.b.capacity", "needs a capacity"),
        ({P + "root.a.a1.maximum-capacity": "10"}, P + "root.a.a1.maximum-capacity", "below the queue's capacity"),
        ({P + "root.b.user-limit-factor": "lots"}, P + "root.b.user-limit-factor", "not a number"),
        ({P + "root.b.ordering-policy": "lifo"}, P + "root.b.ordering-policy", "fifo or fair"),
        ({P + "resource-calculator": "Magic"}, P + "resource-calculator", "Magic"),
        ({P + "root.a.capacity": "[memory=1024,vcores=1]"}, P + "root.a.capacity", "absolute resource vector"),
    ],
)
def test_a_mistake_names_the_file_the_property_and_the_value(
    tmp_path: Path, change: dict[str, str], field: str, words: str
) -> None:
    path = write(tmp_path, TREE | change)
    with pytest.raises(CapacityConfigError) as caught:
        read_capacity_config(path)
    assert caught.value.file == str(path) and caught.value.field == field
    assert words in str(caught.value)


def test_a_job_naming_no_leaf_queue_is_told_which_exist(tmp_path: Path) -> None:
    config = read_capacity_config(write(tmp_path, TREE))
    with pytest.raises(KeyError, match=r"leaf queues: root\.a\.a1, root\.a\.a2, root\.b"):
        config.leaf("nope")
    with pytest.raises(KeyError, match="parent queue"):
        config.leaf("a")


def test_not_xml_and_no_queues_are_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.xml"
    bad.write_text("<configuration><property>", encoding="utf-8")
    with pytest.raises(CapacityConfigError, match="not well-formed"):
        read_capacity_config(bad)
    with pytest.raises(CapacityConfigError, match="defines no queues"):
        read_capacity_config(write(tmp_path, {P + "maximum-applications": "5"}))


def test_the_preemption_monitor_is_off_unless_enabled_and_disable_preemption_is_inherited(tmp_path: Path) -> None:
    assert read_capacity_config(write(tmp_path, TREE)).preemption is None
    monitor = "yarn.resourcemanager.monitor.capacity.preemption."
    props = TREE | {
        "yarn.resourcemanager.scheduler.monitor.enable": "true",
        monitor + "max_wait_before_kill": "10000",
        monitor + "natural_termination_factor": "0.5",
        P + "root.a.disable_preemption": "true",
    }
    config = read_capacity_config(write(tmp_path, props))
    assert config.preemption is not None
    assert config.preemption.max_wait_before_kill_ms == 10_000 and config.preemption.monitoring_interval_ms == 3000
    assert config.preemption.natural_termination_factor == 0.5
    queues = {q.path: q.preemption_disabled for q in config.root.walk()}
    assert queues == {"root": False, "root.a": True, "root.a.a1": True, "root.a.a2": True, "root.b": False}
    bad = props | {monitor + "natural_termination_factor": "2"}
    with pytest.raises(CapacityConfigError, match="not between 0 and 1"):
        read_capacity_config(write(tmp_path, bad))
