"""fair-scheduler.xml: nested queues, resources in every written form, and one clear line per mistake."""

from pathlib import Path

import pytest

from skenario.scheduling.queues.fair_config import (
    UNBOUNDED,
    FairConfigError,
    FairPreemption,
    Starvation,
    read_fair_config,
    with_site,
)
from skenario.scheduling.queues.resources import Resource

ROOT = Path(__file__).resolve().parents[3]


def write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "fair-scheduler.xml"
    path.write_text(f'<?xml version="1.0"?><allocations>{body}</allocations>', encoding="utf-8")
    return path


TREE = """
<queue name="prod"><weight>3</weight><minResources>10000 mb, 10 vcores</minResources>
  <queue name="etl"><maxResources>memory-mb=50%, vcores=25%</maxResources>
    <schedulingPolicy>fifo</schedulingPolicy></queue>
  <queue name="web"><maxRunningApps>4</maxRunningApps></queue>
</queue>
<pool name="dev"><maxResources>memory-mb=8192, vcores=8</maxResources><maxAMShare>-1</maxAMShare></pool>
<user name="alice"><maxRunningApps>2</maxRunningApps></user>
<userMaxAppsDefault>5</userMaxAppsDefault>
<queueMaxAMShareDefault>0.3</queueMaxAMShareDefault>
"""


def test_the_tree_and_its_settings(tmp_path: Path) -> None:
    config = read_fair_config(write(tmp_path, TREE))
    queues = {q.path: q for q in config.root.walk()}
    assert [q.path for q in config.leaves()] == ["root.prod.etl", "root.prod.web", "root.dev"]
    assert queues["root.prod"].weight == 3
    assert queues["root.prod"].min_resources.resolve(Resource(0, 0)) == Resource(10000, 10)
    assert queues["root.prod.etl"].max_resources.resolve(Resource(64000, 40)) == Resource(32000, 10)
    assert queues["root.prod.etl"].policy == "fifo" and queues["root.prod.web"].policy == "fair"
    assert queues["root.prod.web"].max_running_apps == 4 and queues["root.dev"].max_running_apps == UNBOUNDED
    assert queues["root.dev"].max_am_share == -1 and queues["root.prod.web"].max_am_share == 0.3
    assert config.user_max_apps == {"alice": 2} and config.user_max_apps_default == 5
    assert config.leaf("web").path == "root.prod.web" and config.leaf("dev").path == "root.dev"
    assert config.leaf("prod.etl").path == "root.prod.etl"


def test_the_bundled_example_reads() -> None:
    config = read_fair_config(ROOT / "examples" / "traces" / "sls" / "fair-scheduler.xml")
    assert [q.name for q in config.leaves()] == ["sls_queue_1", "sls_queue_2", "sls_queue_3"]


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ('<queue name="a"><weight>heavy</weight></queue>', "queue root.a/weight", "not a number"),
        ('<queue name="a"><minResources>lots</minResources></queue>', "queue root.a/minResources", "10000 mb"),
        ('<queue name="a"><schedulingPolicy>lifo</schedulingPolicy></queue>', "queue root.a/schedulingPolicy", "lifo"),
        (
            '<queue name="a"><schedulingPolicy>fifo</schedulingPolicy><queue name="b"/></queue>',
            "queue root.a/schedulingPolicy",
            "fifo is for leaves only",
        ),
        ('<queue name="a"/><queue name="a"/>', "root/queue", "two queues named 'a'"),
        ('<queue name="a"><maxAMShare>2</maxAMShare></queue>', "queue root.a/maxAMShare", "above 1"),
        (
            '<queue name="a"><minResources>2048 mb, 1 vcores</minResources>'
            "<maxResources>1024 mb, 1 vcores</maxResources></queue>",
            "queue root.a/minResources",
            "above its maxResources",
        ),
    ],
)
def test_a_mistake_names_the_file_the_element_and_the_value(tmp_path: Path, body: str, field: str, words: str) -> None:
    path = write(tmp_path, body)
    with pytest.raises(FairConfigError) as caught:
        read_fair_config(path)
    assert caught.value.file == str(path) and caught.value.field == field and words in str(caught.value)


def test_no_queues_and_a_job_naming_none(tmp_path: Path) -> None:
    with pytest.raises(FairConfigError, match="defines no queues"):
        read_fair_config(write(tmp_path, "<userMaxAppsDefault>3</userMaxAppsDefault>"))
    config = read_fair_config(write(tmp_path, TREE))
    with pytest.raises(KeyError, match="no leaf queue 'nope'"):
        config.leaf("nope")
    with pytest.raises(KeyError, match="parent queue"):
        config.leaf("prod")


def test_preemption_timeouts_are_inherited_and_yarn_site_switches_preemption_on(tmp_path: Path) -> None:
    body = (
        "<defaultFairSharePreemptionTimeout>30</defaultFairSharePreemptionTimeout>"
        '<queue name="prod"><minSharePreemptionTimeout>5</minSharePreemptionTimeout>'
        '<queue name="etl"><fairSharePreemptionThreshold>0.8</fairSharePreemptionThreshold></queue></queue>'
        '<queue name="dev"/>'
    )
    config = read_fair_config(write(tmp_path, body))
    queues = {q.path: q.starvation for q in config.root.walk()}
    assert queues["root.prod.etl"] == Starvation(30, 0.8, 5)  # its own threshold, prod's min-share timeout
    assert queues["root.dev"] == Starvation(30, 0.5, None)
    assert config.preemption is None
    site = tmp_path / "yarn-site.xml"
    site.write_text(
        "<configuration><property><name>yarn.scheduler.fair.preemption</name><value>true</value></property>"
        "<property><name>yarn.scheduler.fair.waitTimeBeforeKill</name><value>5000</value></property>"
        "</configuration>",
        encoding="utf-8",
    )
    switched = with_site(config, site)
    assert switched.preemption == FairPreemption(wait_before_kill_ms=5000)
    site.write_text(
        "<configuration><property><name>yarn.scheduler.fair.preemption</name><value>maybe</value>"
        "</property></configuration>",
        encoding="utf-8",
    )
    with pytest.raises(FairConfigError, match="not true or false"):
        with_site(config, site)
