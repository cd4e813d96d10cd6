"""`fair-scheduler.xml` (the Fair Scheduler's allocation file) read as `AllocationFileLoaderService` reads it.

`<allocations>` holds `<queue name="...">` elements (nested for children; `<pool>` is the old name),
each with `weight` (1), `minResources` (0), `maxResources` (unbounded, or
`queueMaxResourcesDefault`), `maxRunningApps` (`queueMaxAppsDefault`), `maxAMShare`
(`queueMaxAMShareDefault`, 0.5) and `schedulingPolicy` (`defaultQueueSchedulingPolicy`, `fair`):
`fair` (memory), `drf` (dominant resource) or `fifo` (leaves only). Top-level queues are children
of `root` (a `<queue name="root">` may also wrap them). `<user name="...">` sets a user's
`maxRunningApps`, `userMaxAppsDefault` everyone else's. Resources are written `"10000 mb, 10
vcores"`, `"memory-mb=10000, vcores=10"` or as percentages of the cluster (`"50%"`, `"memory-mb=50%,
vcores=25%"`).

Every mistake is one `SkenarioError` naming the file, the element and the value.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from skenario.errors import SkenarioError
from skenario.scheduling.queues.capacity_config import (
    MAXIMUM_ALLOCATION,
    MINIMUM_ALLOCATION,
    PropertyReader,
    QueueTree,
    leaf_named,
    parse_xml,
    read_properties,
)
from skenario.scheduling.queues.resources import Resource

POLICIES = ("fair", "drf", "fifo")
UNBOUNDED = 2**62


class FairConfigError(SkenarioError):
    """`fair-scheduler.xml` is unreadable or says something the Fair Scheduler refuses."""


@dataclass(frozen=True)
class Amount:
    """A configured resource: absolute MB and vcores, or percentages of the cluster."""

    memory: float
    vcores: float
    percent: bool = False

    def resolve(self, cluster: Resource) -> Resource:
        if not self.percent:
            return Resource(int(self.memory), int(self.vcores))
        return Resource(int(cluster.memory * self.memory / 100), int(cluster.vcores * self.vcores / 100))


NO_AMOUNT = Amount(0, 0)
NO_LIMIT = Amount(UNBOUNDED, UNBOUNDED)


@dataclass(frozen=True)
class Starvation:
    """When a queue counts as starved (`fairSharePreemptionTimeout` and kin, in seconds; None: never)."""

    fair_share_timeout_s: float | None = None
    fair_share_threshold: float = 0.5
    min_share_timeout_s: float | None = None


@dataclass(frozen=True)
class FairPreemption:
    """The Fair Scheduler's preemption, as `yarn-site.xml` switches it on (`yarn.scheduler.fair.preemption`)."""

    utilization_threshold: float = 0.8  # preemption.cluster-utilization-threshold
    wait_before_kill_ms: int = 15_000  # waitTimeBeforeKill
    check_interval_ms: int = 10_000  # waitTimeBeforeNextStarvationCheck


@dataclass(frozen=True)
class FairQueueConfig(QueueTree):
    path: str
    children: tuple[FairQueueConfig, ...] = ()
    weight: float = 1.0
    min_resources: Amount = NO_AMOUNT
    max_resources: Amount = NO_LIMIT
    max_running_apps: int = UNBOUNDED
    max_am_share: float = 0.5  # -1: no limit
    policy: str = "fair"
    starvation: Starvation = field(default_factory=lambda: Starvation())


@dataclass(frozen=True)
class FairConfig:
    """The queue tree, the users' application limits and the scheduler-wide settings a replay needs."""

    root: FairQueueConfig
    user_max_apps: Mapping[str, int] = field(default_factory=dict)
    user_max_apps_default: int = UNBOUNDED
    minimum_allocation: Resource = MINIMUM_ALLOCATION
    maximum_allocation: Resource = MAXIMUM_ALLOCATION
    assign_multiple: bool = False  # yarn.scheduler.fair.assignmultiple
    preemption: FairPreemption | None = None  # None: off, YARN's default
    file: str = "fair-scheduler.xml"

    def leaves(self) -> list[FairQueueConfig]:
        return [q for q in self.root.walk() if q.is_leaf]

    def leaf(self, name: str) -> FairQueueConfig:
        """The leaf a job names: its full path, its path without `root.`, or its own name if unique."""
        return leaf_named({q.path: q for q in self.root.walk()}, name, self.file, root="root.")


_PAIR = re.compile(r"^\s*([\w.-]+)\s*=\s*([0-9.]+)\s*(%?)\s*$")
_OLD = re.compile(r"^\s*([0-9.]+)\s*(mb|vcores)\s*$", re.I)


def read_fair_config(path: str | Path) -> FairConfig:
    return _Reader(str(path)).config(parse_xml(path, FairConfigError))


class _Reader:
    def __init__(self, file: str) -> None:
        self.file = file

    def error(self, field: str, value: object, message: str) -> FairConfigError:
        return FairConfigError(message, file=self.file, field=field, value=value)

    def text(self, element: ET.Element, tag: str, where: str) -> str | None:
        child = element.find(tag)
        if child is None:
            return None
        text = (child.text or "").strip()
        if not text:
            raise self.error(f"{where}/{tag}", "", f"<{tag}> in {where} is empty")
        return text

    def number(self, element: ET.Element, tag: str, where: str, default: float, low: float = 0) -> float:
        text = self.text(element, tag, where)
        if text is None:
            return default
        try:
            value = float(text)
        except ValueError:
            raise self.error(f"{where}/{tag}", text, f"<{tag}> in {where} is {text!r}, not a number") from None
        if not math.isfinite(value) or value < low:
            raise self.error(f"{where}/{tag}", text, f"<{tag}> in {where} is {text}, less than {low:g}")
        return value

    def integer(self, element: ET.Element, tag: str, where: str, default: int) -> int:
        text = self.text(element, tag, where)
        if text is None:
            return default
        if not text.isdigit():
            raise self.error(f"{where}/{tag}", text, f"<{tag}> in {where} is {text!r}, not a whole number")
        return int(text)

    def amount(self, element: ET.Element, tag: str, where: str, default: Amount) -> Amount:
        text = self.text(element, tag, where)
        if text is None:
            return default
        field = f"{where}/{tag}"
        hint = 'write "10000 mb, 10 vcores", "memory-mb=10000, vcores=10" or "50%"'
        if text.endswith("%") and "=" not in text:
            try:
                share = float(text[:-1])
            except ValueError:
                raise self.error(field, text, f"<{tag}> in {where} is {text!r}: {hint}") from None
            return Amount(share, share, percent=True)
        memory: float | None = None
        vcores: float | None = None
        percents = set()
        for part in text.split(","):
            old, pair = _OLD.match(part), _PAIR.match(part)
            if old is not None:
                name, value, percent = ("memory-mb" if old[2].lower() == "mb" else "vcores"), float(old[1]), ""
            elif pair is not None:
                name, value, percent = pair[1], float(pair[2]), pair[3]
            else:
                raise self.error(field, text, f"<{tag}> in {where} is {text!r}: {hint}")
            percents.add(percent)
            if name in ("memory-mb", "memory"):
                memory = value
            elif name in ("vcores", "cpu"):
                vcores = value
            else:
                raise self.error(field, text, f"<{tag}> in {where} names {name!r}: skenario reads memory-mb and vcores")
        if len(percents) > 1:
            raise self.error(field, text, f"<{tag}> in {where} mixes percentages and amounts")
        is_percent = percents == {"%"}
        unset = 0.0 if default is NO_AMOUNT else (100.0 if is_percent else float(UNBOUNDED))
        return Amount(memory if memory is not None else unset, vcores if vcores is not None else unset, is_percent)

    def config(self, root: ET.Element) -> FairConfig:
        if root.tag != "allocations":
            raise FairConfigError(
                f"the document is <{root.tag}>, not the Fair Scheduler's <allocations>", file=self.file
            )
        where = "allocations"
        self.default_policy = self.text(root, "defaultQueueSchedulingPolicy", where) or "fair"
        if self.default_policy not in ("fair", "drf"):
            raise self.error(
                f"{where}/defaultQueueSchedulingPolicy",
                self.default_policy,
                f"defaultQueueSchedulingPolicy is {self.default_policy!r}; give fair or drf",
            )
        self.max_apps_default = self.integer(root, "queueMaxAppsDefault", where, UNBOUNDED)
        self.am_share_default = self.number(root, "queueMaxAMShareDefault", where, 0.5, low=-1)
        self.max_resources_default = self.amount(root, "queueMaxResourcesDefault", where, NO_LIMIT)
        self.starvation = Starvation(
            self.seconds(root, "defaultFairSharePreemptionTimeout", where, None),
            self.number(root, "defaultFairSharePreemptionThreshold", where, 0.5),
            self.seconds(root, "defaultMinSharePreemptionTimeout", where, None),
        )
        users = {}
        for user in root.findall("user"):
            name = user.get("name")
            if not name:
                raise self.error(f"{where}/user", None, "a <user> has no name")
            users[name] = self.integer(user, "maxRunningApps", f"user {name}", UNBOUNDED)
        elements = root.findall("queue") + root.findall("pool")
        if len(elements) == 1 and elements[0].get("name") == "root":
            top = elements[0]
            elements = top.findall("queue") + top.findall("pool")
            root_queue = self.queue(top, "root", elements, self.starvation)
        else:
            root_queue = self.queue(None, "root", elements, self.starvation)
        if root_queue.is_leaf:
            raise FairConfigError("the file defines no queues", file=self.file)
        return FairConfig(
            root=root_queue,
            user_max_apps=users,
            user_max_apps_default=self.integer(root, "userMaxAppsDefault", where, UNBOUNDED),
            file=self.file,
        )

    def seconds(self, element: ET.Element, tag: str, where: str, default: float | None) -> float | None:
        return self.number(element, tag, where, 0.0) if element.find(tag) is not None else default

    def queue(
        self, element: ET.Element | None, path: str, children: list[ET.Element], inherited: Starvation
    ) -> FairQueueConfig:
        where = f"queue {path}"
        starvation = inherited
        if element is not None:  # a queue's timeouts and threshold are its parent's unless it sets them
            threshold = self.number(element, "fairSharePreemptionThreshold", where, inherited.fair_share_threshold)
            if threshold > 1:
                raise self.error(f"{where}/fairSharePreemptionThreshold", threshold, "a threshold is at most 1")
            starvation = Starvation(
                self.seconds(element, "fairSharePreemptionTimeout", where, inherited.fair_share_timeout_s),
                threshold,
                self.seconds(element, "minSharePreemptionTimeout", where, inherited.min_share_timeout_s),
            )
        names = []
        built = []
        for child in children:
            name = child.get("name")
            if not name or "." in name:
                raise self.error(f"{path}/queue", name, f"a queue under {path} has no name, or a name with a dot")
            if name in names:
                raise self.error(f"{path}/queue", name, f"{path} has two queues named {name!r}")
            names.append(name)
            grandchildren = child.findall("queue") + child.findall("pool")
            built.append(self.queue(child, f"{path}.{name}", grandchildren, starvation))
        if element is None:
            return FairQueueConfig(path, tuple(built), policy=self.default_policy, starvation=starvation)
        policy = self.text(element, "schedulingPolicy", where) or self.default_policy
        if policy not in POLICIES:
            raise self.error(
                f"{where}/schedulingPolicy", policy, f"schedulingPolicy is {policy!r}; give fair, drf or fifo"
            )
        if policy == "fifo" and built:
            raise self.error(f"{where}/schedulingPolicy", policy, f"{path} has child queues: fifo is for leaves only")
        weight = self.number(element, "weight", where, 1.0)
        am_share = self.number(element, "maxAMShare", where, self.am_share_default, low=-1)
        if am_share > 1:
            raise self.error(f"{where}/maxAMShare", am_share, f"maxAMShare in {where} is {am_share:g}, above 1")
        minimum = self.amount(element, "minResources", where, NO_AMOUNT)
        maximum = self.amount(element, "maxResources", where, self.max_resources_default)
        if not minimum.percent and not maximum.percent and (minimum.memory > maximum.memory):
            raise self.error(
                f"{where}/minResources", minimum.memory, f"minResources in {where} is above its maxResources"
            )
        return FairQueueConfig(
            path=path,
            children=tuple(built),
            weight=weight,
            min_resources=minimum,
            max_resources=maximum,
            max_running_apps=self.integer(element, "maxRunningApps", where, self.max_apps_default),
            max_am_share=am_share,
            policy=policy,
            starvation=starvation,
        )


def with_site(config: FairConfig, path: str | Path) -> FairConfig:
    """The Fair Scheduler's switches from `yarn-site.xml` (`yarn.scheduler.fair.*`): preemption and its
    waits, `assignmultiple`, and the allocation sizes."""
    file = str(path)
    properties = read_properties(path, FairConfigError)
    site = PropertyReader(file, properties, FairConfigError)
    prefix = "yarn.scheduler.fair."
    preemption = None
    if site.boolean(prefix + "preemption", False):
        preemption = FairPreemption(
            site.number(prefix + "preemption.cluster-utilization-threshold", 0.8, 0, 1),
            site.integer(prefix + "waitTimeBeforeKill", 15_000, 0),
            site.integer(prefix + "waitTimeBeforeNextStarvationCheck", 10_000, 1),
        )
    minimum = Resource(
        site.integer("yarn.scheduler.minimum-allocation-mb", config.minimum_allocation.memory, 0),
        site.integer("yarn.scheduler.minimum-allocation-vcores", config.minimum_allocation.vcores, 0),
    )
    maximum = Resource(
        site.integer("yarn.scheduler.maximum-allocation-mb", config.maximum_allocation.memory, 1),
        site.integer("yarn.scheduler.maximum-allocation-vcores", config.maximum_allocation.vcores, 1),
    )
    return replace(
        config,
        preemption=preemption,
        assign_multiple=site.boolean(prefix + "assignmultiple", config.assign_multiple),
        minimum_allocation=minimum,
        maximum_allocation=maximum,
    )
