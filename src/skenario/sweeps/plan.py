"""A sweep's plan: the scenario with each point's settings, every point checked before anything runs.

```text
hpa.yaml --set autoscalers[0]...averageUtilization=50,70 --seeds 3     (the scenario's seed is 42)
  point 1  {averageUtilization: 50}   seeds 42 43 44
  point 2  {averageUtilization: 70}   seeds 42 43 44
  jobs     (1,42) (1,43) (1,44) (2,42) (2,43) (2,44)
```

Every point runs with the same seeds: common random numbers. A scenario splits its seed into one
stream per component, so seed 42 draws the same arrivals and service times at point 1 as at point
2, and the two points differ only by what the settings change. That is what lets `stats.paired`
judge a difference on far fewer runs than two independent samples would need.

A point whose scenario the schema refuses (`--set workload.replicas=two`) stops the sweep before
its first run, with one line naming the option and the value, as any scenario error does. Each
point is checked as `skenario check` checks a scenario: a plugin it names is read, never run (its
code runs only in the workers, where what it does to its process cannot end the sweep), and a
plugin the user did not allow (`--no-plugins`, a module not named) stops the sweep here. The jobs
carry the plugin policy in force to their workers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from skenario.errors import SkenarioError
from skenario.runs.batch import is_batch, open_batch, read_batch
from skenario.scenario.bundle import fold_manifests
from skenario.scenario.format.batch import BatchReplayDocument
from skenario.scenario.format.scenario import MAX_SEED, Scenario
from skenario.scenario.io import located, read_text, yaml_documents
from skenario.scenario.loader import parse_scenario
from skenario.scenario.wiring.plugins import current_policy, unloaded
from skenario.scenario.wiring.prepare import prepare
from skenario.sweeps.runner import Job, Prices
from skenario.sweeps.space import SweepError, apply, parse_path

MAX_SEEDS = 10_000
"""Replications per point: past this, a sweep is a mistake in the option (a design's samples are the points)."""


@dataclass(frozen=True)
class Point:
    """One setting of the scenario: its number in the sweep's tables (from 1), settings and YAML text."""

    number: int
    settings: dict[str, Any]
    text: str


class Template:
    """The scenario a sweep varies, read once: its document (manifest documents folded in), text and folder."""

    def __init__(self, text: str, source: str, base_dir: Path, file: Path | None = None) -> None:
        self.text = text
        self.source = source
        self.base_dir = base_dir
        self.file = file
        documents = yaml_documents(text, source)
        # The scenario (or batch replay) as written must be valid first.
        self.scenario: Scenario | BatchReplayDocument = (
            read_batch(documents, source) if is_batch(documents) else parse_scenario(text, source, documents=documents)
        )
        self.document: dict[str, Any] = (documents[0] if len(documents) == 1 else fold_manifests(documents, source))[0]

    @property
    def batch(self) -> bool:
        """Whether the template is a batch replay (`kind: BatchReplay`), whose runs give BATCH_METRICS."""
        return isinstance(self.scenario, BatchReplayDocument)

    @classmethod
    def from_file(cls, path: Path) -> Template:
        return cls(read_text(path), str(path), path.parent, path)

    @property
    def name(self) -> str:
        return self.scenario.metadata.name

    def point(self, number: int, settings: Mapping[str, Any], options: Mapping[str, str] | None = None) -> Point:
        """The scenario with `settings` applied, validated; `options` names the option each path came from
        (`--set 'PATH=...'`), for the error should the schema refuse a value."""
        if not settings:
            try:
                if isinstance(self.scenario, BatchReplayDocument):  # its files read, as a run reads them
                    open_batch(
                        yaml_documents(self.text, self.source),
                        file=Path(self.source),
                        text=self.text,
                        base_dir=self.base_dir,
                    )
                else:
                    with unloaded():  # plugins checked as `check` does (the scenario as written was parsed already)
                        prepare(self.scenario, base_dir=self.base_dir)
            except SkenarioError as exc:
                raise located(exc, self.source, self.text) from None
            return Point(number, {}, self.text)  # the scenario exactly as written
        options = options or {}
        document = self.document
        for path, value in settings.items():
            option = options.get(path, f"{path}={value}")
            if parse_path(path) == ["spec", "seed"]:
                raise SweepError(f"{option}: each run's seed is its replication's; give the first with --seed")
            try:
                document = apply(document, {path: value}, base_dir=self.base_dir)
            except SweepError as exc:
                raise SweepError(f"{option}: {exc.message}", value=value) from None
        text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
        try:
            # Prepared too, not only parsed: manifests and traces are read when a run is built, and a
            # value they refuse should stop the sweep here, not fail every run of the point (ms each).
            # No plugin code runs here (`unloaded`): only in the workers.
            source = f"{self.source} at point {number}"
            if self.batch:
                open_batch(yaml_documents(text, source), file=Path(source), text=text, base_dir=self.base_dir)
            else:
                scenario = parse_scenario(text, source)
                with unloaded():
                    prepare(scenario, seed=scenario.spec.seed, base_dir=self.base_dir)
        except SkenarioError as exc:
            raise _blamed(exc, settings, options) from None
        return Point(number, dict(settings), text)


@dataclass(frozen=True)
class Plan:
    """What a sweep runs: each point with each seed."""

    template: Template
    points: tuple[Point, ...]
    seeds: tuple[int, ...]

    def jobs(self, prices: Prices | None = None, objectives: dict[str, Any] | None = None) -> list[Job]:
        """Point by point, seed by seed: the order of the sweep's table and of its Parquet rows."""
        base_dir = str(self.template.base_dir.resolve())  # a Dask worker runs elsewhere
        policy = current_policy()
        return [
            Job(point.number, seed, point.text, base_dir, prices or Prices(), objectives, policy)
            for point in self.points
            for seed in self.seeds
        ]


def replication_seeds(count: int, first: int) -> tuple[int, ...]:
    """`count` seeds from `first` up: replication i of every point runs with seed `first + i`."""
    if not 1 <= count <= MAX_SEEDS:
        raise SweepError(f"--seeds {count}: give between 1 and {MAX_SEEDS:,} replications per point", value=count)
    if not 0 <= first <= MAX_SEED - count + 1:
        raise SweepError(f"--seed {first}: seeds run from 0 to {MAX_SEED}, and {count} of them from here pass that")
    return tuple(range(first, first + count))


def plan(
    template: Template,
    settings: Sequence[Mapping[str, Any]],
    seeds: Sequence[int],
    options: Mapping[str, str] | None = None,
) -> Plan:
    """Each of `settings` as a checked point, numbered from 1."""
    points = tuple(template.point(number, values, options) for number, values in enumerate(settings, start=1))
    return Plan(template, points, tuple(seeds))


def _blamed(exc: SkenarioError, settings: Mapping[str, Any], options: Mapping[str, str]) -> SweepError:
    """The schema's refusal as the option's error: the setting whose path holds the refused field."""
    refused = exc.field or ""
    for path, value in settings.items():
        absolute = _dotted(parse_path(path))
        inside = refused == absolute or refused.startswith(absolute + ".")
        # A key on the setting's way that the schema does not know (below `spec`, which every path is in).
        above = "." in refused and absolute.startswith(refused + ".")
        # A manifest's own errors name its field from the manifest's root: the setting's path ends with it.
        in_manifest = bool(refused) and absolute.endswith("." + refused)
        if inside or above or in_manifest:
            option = options.get(path, f"{path}={value}")
            where = refused if inside or above else absolute
            return SweepError(f"{option}: {value!r} is refused at {where}: {exc.message}", value=value)
    shown = ", ".join(f"{path}={value}" for path, value in settings.items())
    return SweepError(f"the scenario with {shown} is refused: {exc}")


def _dotted(parts: list[str | int]) -> str:
    """A path as the schema's errors name a field: `spec.autoscalers.0.syncPeriod`."""
    return ".".join(str(part) for part in parts)
