"""`capacity-scheduler.xml` read as the Capacity Scheduler reads it: the queue tree and its limits.

A Hadoop configuration file is a list of `<property><name>..</name><value>..</value></property>`.
Queue properties are `yarn.scheduler.capacity.<queue path>.<key>`, the path dotted from `root`
(`CapacitySchedulerConfiguration`); a queue without `queues` is a leaf. Capacities are percentages
of the parent that must sum to 100 among siblings, or weights (`2w`) shared among siblings. The
cluster-wide `yarn.scheduler.minimum-allocation-mb` and its kin belong to `yarn-site.xml`; they are
read here too, so one file can say everything a replay needs.

Every mistake is one `SkenarioError` naming the file, the property and the value.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, Self, TypeVar

from skenario.errors import SkenarioError
from skenario.scheduling.queues.preemption import PreemptionSettings
from skenario.scheduling.queues.resources import CALCULATORS, Resource, ResourceCalculator

PREFIX = "yarn.scheduler.capacity."
MONITOR = "yarn.resourcemanager.scheduler.monitor."
PREEMPTION = "yarn.resourcemanager.monitor.capacity.preemption."
ROOT = "root"
PRECISION = 0.0005  # how far from 100 sibling percentages may sum (`CapacitySchedulerConfigValidator`)
DEFAULT_MAXIMUM_APPLICATIONS = 10_000
DEFAULT_AM_PERCENT = 0.1
LEAF_POLICIES = ("fifo", "fair")
MINIMUM_ALLOCATION = Resource(1024, 1)  # yarn-site.xml's defaults: yarn.scheduler.minimum-allocation-mb/-vcores
MAXIMUM_ALLOCATION = Resource(8192, 4)  # yarn.scheduler.maximum-allocation-mb/-vcores


class NamedQueue(Protocol):
    @property
    def path(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def is_leaf(self) -> bool: ...


Q = TypeVar("Q", bound=NamedQueue)


class CapacityConfigError(SkenarioError):
    """`capacity-scheduler.xml` is unreadable or says something the Capacity Scheduler refuses."""


class QueueTree:
    """A configured queue's place in its tree: its own name, whether it is a leaf, and the queues below."""

    path: str
    children: Sequence[Self]

    @property
    def name(self) -> str:
        return self.path.rsplit(".", 1)[-1]

    @property
    def is_leaf(self) -> bool:
        return not self.children

    def walk(self) -> Iterator[Self]:
        yield self
        for child in self.children:
            yield from child.walk()


@dataclass(frozen=True)
class QueueConfig(QueueTree):
    """One queue as configured; `absolute_*` are shares of the whole cluster (0..1)."""

    path: str
    children: tuple[QueueConfig, ...] = ()
    capacity: float = 100.0  # percent of the parent
    maximum_capacity: float = 100.0  # percent of the parent
    absolute_capacity: float = 1.0
    absolute_maximum_capacity: float = 1.0
    user_limit_factor: float = 1.0
    minimum_user_limit_percent: float = 100.0
    maximum_applications: int = DEFAULT_MAXIMUM_APPLICATIONS
    maximum_am_resource_percent: float = DEFAULT_AM_PERCENT
    ordering_policy: str = "fifo"
    user_weights: Mapping[str, float] = field(default_factory=dict)
    preemption_disabled: bool = False  # <path>.disable_preemption, inherited by the queue's children


@dataclass(frozen=True)
class CapacityConfig:
    """The queue tree and the scheduler-wide settings a replay needs."""

    root: QueueConfig
    calculator: ResourceCalculator
    minimum_allocation: Resource = MINIMUM_ALLOCATION
    maximum_allocation: Resource = MAXIMUM_ALLOCATION
    multiple_assignments: bool = True  # per-node-heartbeat.multiple-assignments-enabled
    maximum_container_assignments: int = 100  # per heartbeat; -1: no cap
    maximum_offswitch_assignments: int = 1  # per heartbeat
    preemption: PreemptionSettings | None = None  # None: the preemption monitor is off (YARN's default)
    file: str = "capacity-scheduler.xml"

    def leaves(self) -> list[QueueConfig]:
        return [q for q in self.root.walk() if q.is_leaf]

    def leaf(self, name: str) -> QueueConfig:
        """The leaf a job names, by its full path or by its own name (leaf names are unique, as YARN requires)."""
        return leaf_named({q.path: q for q in self.root.walk()}, name, self.file)


def leaf_named(queues: Mapping[str, Q], name: str, file: str, *, root: str = "") -> Q:
    """The leaf queue `name` names: a path (`root` may be left off), or a leaf's own name if no other has it.

    A parent, or a name no queue has, is a `KeyError` that says which leaves there are."""
    for path in (name, f"{root}{name}"):
        if path in queues and queues[path].is_leaf:
            return queues[path]
    leaves = [q for q in queues.values() if q.is_leaf]
    matches = [q for q in leaves if q.name == name]
    if len(matches) == 1:
        return matches[0]
    if any(path in queues for path in (name, f"{root}{name}")) or any(q.name == name for q in queues.values()):
        raise KeyError(f"queue {name!r} is a parent queue: jobs are submitted to leaf queues only")
    known = ", ".join(q.path for q in leaves)
    raise KeyError(f"no leaf queue {name!r} in {file} (leaf queues: {known})")


def read_capacity_config(path: str | Path, overrides: Mapping[str, str] | None = None) -> CapacityConfig:
    """Read a `capacity-scheduler.xml` (and the allocation sizes of `yarn-site.xml`, if given there);
    `overrides` set properties over the file's, as a later `<property>` of the same name would."""
    return _Reader(str(path), read_properties(path, CapacityConfigError) | dict(overrides or {})).config()


def parse_xml(path: str | Path, error: type[SkenarioError]) -> ET.Element:
    """A YARN configuration file's document element; a file that cannot be read or parsed is `error`."""
    file = str(path)
    try:
        return ET.parse(path).getroot()
    except OSError as exc:
        raise error(f"cannot open the file: {exc.strerror or exc}", file=file) from None
    except ET.ParseError as exc:
        line = exc.position[0] if exc.position else None
        raise error(f"not well-formed XML: {exc}", file=file, line=line) from None


def read_properties(path: str | Path, error: type[SkenarioError]) -> dict[str, str]:
    """A Hadoop configuration file's properties, by name (a mistake is `error`, naming the file)."""
    file = str(path)
    root = parse_xml(path, error)
    if root.tag != "configuration":
        raise error(f"the document is <{root.tag}>, not a Hadoop <configuration>", file=file)
    out: dict[str, str] = {}
    for k, prop in enumerate(root.iter("property")):
        name = (prop.findtext("name") or "").strip()
        if not name:
            raise error(f"property {k + 1} has no <name>", file=file)
        out[name] = (prop.findtext("value") or "").strip()
    return out


class PropertyReader:
    """A Hadoop configuration's properties read as numbers, whole numbers and booleans; a bad one is `error`."""

    def __init__(self, file: str, properties: dict[str, str], error: type[SkenarioError] = CapacityConfigError) -> None:
        self.file = file
        self.properties = properties
        self._error = error

    def error(self, key: str, message: str) -> SkenarioError:
        return self._error(message, file=self.file, field=key, value=self.properties.get(key))

    def number(self, key: str, default: float, low: float | None = None, high: float | None = None) -> float:
        text = self.properties.get(key)
        if text is None or text == "":
            return default
        try:
            value = float(text)
        except ValueError:
            raise self.error(key, f"{key} is {text!r}, not a number") from None
        if not math.isfinite(value) or (low is not None and value < low) or (high is not None and value > high):
            bounds = f"between {low:g} and {high:g}" if high is not None else f"at least {low:g}"
            raise self.error(key, f"{key} is {text}, not {bounds}")
        return value

    def integer(self, key: str, default: int, low: int | None = None) -> int:
        text = self.properties.get(key)
        if text is None or text == "":
            return default
        try:
            value = int(text)
        except ValueError:
            raise self.error(key, f"{key} is {text!r}, not a whole number") from None
        if low is not None and value < low:
            raise self.error(key, f"{key} is {value}, less than {low}")
        return value

    def boolean(self, key: str, default: bool) -> bool:
        text = self.properties.get(key)
        if text is None or text == "":
            return default
        if text.lower() not in ("true", "false"):
            raise self.error(key, f"{key} is {text!r}, not true or false")
        return text.lower() == "true"


class _Reader(PropertyReader):
    def config(self) -> CapacityConfig:
        calculator_key = PREFIX + "resource-calculator"
        calculator_name = self.properties.get(calculator_key, "DefaultResourceCalculator").rsplit(".", 1)[-1]
        if calculator_name not in CALCULATORS:
            known = ", ".join(CALCULATORS)
            raise self.error(calculator_key, f"{calculator_key} is {calculator_name!r}; skenario knows {known}")
        minimum = Resource(
            self.integer("yarn.scheduler.minimum-allocation-mb", 1024, 0),
            self.integer("yarn.scheduler.minimum-allocation-vcores", 1, 0),
        )
        maximum = Resource(
            self.integer("yarn.scheduler.maximum-allocation-mb", 8192, 1),
            self.integer("yarn.scheduler.maximum-allocation-vcores", 4, 1),
        )
        if minimum.memory > maximum.memory or minimum.vcores > maximum.vcores:
            raise self.error(
                "yarn.scheduler.minimum-allocation-mb",
                f"the minimum allocation {minimum} is above the maximum {maximum}",
            )
        if ROOT + ".queues" not in {k.removeprefix(PREFIX) for k in self.properties}:
            raise self.error(
                PREFIX + "root.queues", "no yarn.scheduler.capacity.root.queues: the file defines no queues"
            )
        self.max_apps = self.integer(PREFIX + "maximum-applications", DEFAULT_MAXIMUM_APPLICATIONS, 0)
        self.am_percent = self.number(PREFIX + "maximum-am-resource-percent", DEFAULT_AM_PERCENT, 0, 1)
        root = self.queue(ROOT, 100.0, 100.0, 1.0, 1.0, False)
        prefix = PREFIX + "per-node-heartbeat."
        return CapacityConfig(
            root=root,
            calculator=CALCULATORS[calculator_name](),
            minimum_allocation=minimum,
            maximum_allocation=maximum,
            multiple_assignments=self.boolean(prefix + "multiple-assignments-enabled", True),
            maximum_container_assignments=self.integer(prefix + "maximum-container-assignments", 100, -1),
            maximum_offswitch_assignments=self.integer(prefix + "maximum-offswitch-assignments", 1, 1),
            preemption=self.preemption(),
            file=self.file,
        )

    def preemption(self) -> PreemptionSettings | None:
        """The preemption monitor, when `monitor.enable` is true and its policy is the proportional one."""
        if not self.boolean(MONITOR + "enable", False):
            return None
        policies = self.properties.get(MONITOR + "policies", "ProportionalCapacityPreemptionPolicy")
        if "ProportionalCapacityPreemptionPolicy" not in policies:
            raise self.error(
                MONITOR + "policies",
                f"{MONITOR}policies is {policies!r}; skenario runs ProportionalCapacityPreemptionPolicy",
            )
        return PreemptionSettings(
            monitoring_interval_ms=self.integer(PREEMPTION + "monitoring_interval", 3000, 1),
            max_wait_before_kill_ms=self.integer(PREEMPTION + "max_wait_before_kill", 15000, 0),
            total_preemption_per_round=self.number(PREEMPTION + "total_preemption_per_round", 0.1, 0, 1),
            max_ignored_over_capacity=self.number(PREEMPTION + "max_ignored_over_capacity", 0.1, 0),
            natural_termination_factor=self.number(PREEMPTION + "natural_termination_factor", 0.2, 0, 1),
        )

    def queue(
        self, path: str, capacity: float, maximum: float, absolute: float, absolute_max: float, inherited: bool
    ) -> QueueConfig:
        key = PREFIX + path + "."
        names = [n.strip() for n in self.properties.get(key + "queues", "").split(",") if n.strip()]
        if len(set(names)) != len(names):
            raise self.error(key + "queues", f"{key}queues names a queue twice")
        disabled = self.boolean(key + "disable_preemption", inherited)
        children = tuple(self.children(path, names, absolute, absolute_max, disabled))
        policy = self.properties.get(key + "ordering-policy", "fifo")
        if not children and policy not in LEAF_POLICIES:
            raise self.error(key + "ordering-policy", f"{key}ordering-policy is {policy!r}; a leaf takes fifo or fair")
        weights = {
            name.removeprefix(key + "user-settings.").removesuffix(".weight"): self.number(name, 1.0, 0)
            for name in self.properties
            if name.startswith(key + "user-settings.") and name.endswith(".weight")
        }
        am_percent = self.number(key + "maximum-am-resource-percent", self.am_percent, 0, 1)
        max_apps = self.integer(key + "maximum-applications", int(self.max_apps * absolute), 0)
        return QueueConfig(
            path=path,
            children=children,
            capacity=capacity,
            maximum_capacity=maximum,
            absolute_capacity=absolute,
            absolute_maximum_capacity=absolute_max,
            user_limit_factor=self.user_limit_factor(key + "user-limit-factor"),
            minimum_user_limit_percent=self.number(key + "minimum-user-limit-percent", 100.0, 0, 100),
            maximum_applications=max_apps,
            maximum_am_resource_percent=am_percent,
            ordering_policy=policy,
            user_weights=weights,
            preemption_disabled=disabled,
        )

    def user_limit_factor(self, key: str) -> float:
        value = self.number(key, 1.0)
        if value != -1 and value <= 0:
            raise self.error(key, f"{key} is {self.properties[key]}: give a factor above 0, or -1 for no limit")
        return value

    def children(
        self, parent: str, names: list[str], absolute: float, absolute_max: float, disabled: bool
    ) -> Iterator[QueueConfig]:
        if not names:
            return
        keys = [f"{PREFIX}{parent}.{name}.capacity" for name in names]
        texts = [self.properties.get(k) for k in keys]
        for k, text in zip(keys, texts, strict=True):
            if text is None or text == "":
                raise self.error(k, f"{k} is not set: every queue but root needs a capacity")
        weighted = [t is not None and t.endswith("w") for t in texts]
        if any(t is not None and t.startswith("[") for t in texts):
            k = next(k for k, t in zip(keys, texts, strict=True) if t is not None and t.startswith("["))
            raise self.error(k, f"{k} is an absolute resource vector; skenario reads percentages and weights (2w)")
        if any(weighted) and not all(weighted):
            raise self.error(keys[weighted.index(False)], f"the children of {parent} mix weights (2w) and percentages")
        if all(weighted):
            weights = [self.weight(k) for k in keys]
            total = sum(weights)
            shares = [100.0 * w / total if total else 0.0 for w in weights]
        else:
            shares = [self.number(k, 0.0, 0, 100) for k in keys]
            if abs(sum(shares) - 100.0) > PRECISION:
                listed = " + ".join(f"{name} {share:g}" for name, share in zip(names, shares, strict=True))
                raise self.error(
                    keys[0], f"the capacities of {parent}'s children sum to {sum(shares):g}, not 100 ({listed})"
                )
        for name, share in zip(names, shares, strict=True):
            path = f"{parent}.{name}"
            max_key = f"{PREFIX}{path}.maximum-capacity"
            maximum = self.number(max_key, -1.0, -1, 100)
            maximum = 100.0 if maximum == -1 else maximum
            if maximum < share:
                raise self.error(max_key, f"{max_key} is {maximum:g}, below the queue's capacity {share:g}")
            yield self.queue(path, share, maximum, absolute * share / 100, absolute_max * maximum / 100, disabled)

    def weight(self, key: str) -> float:
        text = self.properties[key]
        try:
            value = float(text[:-1])
        except ValueError:
            raise self.error(key, f"{key} is {text!r}, not a weight such as 2w") from None
        if value < 0 or not math.isfinite(value):
            raise self.error(key, f"{key} is {text}: a weight is at least 0")
        return value
