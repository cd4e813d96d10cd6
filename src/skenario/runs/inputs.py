"""`open_run`: every input skenario reads, recognised in one place and opened as a `Runnable`.

    input                                        told by                            opened as
    a batch trace and its node file              `trace=` given, or a .csv file     BatchReplay
    a batch replay document                      `kind: BatchReplay`                BatchRun (runs.batch)
    a kube-scheduler-simulator recording (JSONL) `ksimrecord.is_recording`          KepRun (replayed)
    a kube-scheduler-simulator export            `ksim.is_export`                   KepRun (exported)
    a KEP-140 Scenario                           `faketime.kep_scenario`            KepRun
    skenario's own scenario                      anything else                      Simulation

The order matters: a recording and an export are YAML/JSON too, and skenario's format is the
fallback that names what is wrong with the file. A scenario is read and checked whole before it
is opened (`validated`: everything it names built, plugins loaded or refused), so a mistake is one
`SkenarioError` naming the file, the field and the value, and nothing is run or written.
"""

from __future__ import annotations

import hashlib
import json
import re
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

import yaml

from skenario.errors import PluginError, ScenarioError, SkenarioError
from skenario.results.store import FinishedRun
from skenario.runs.batch import BatchRun, TraceOptions, is_batch, open_batch, open_trace
from skenario.runs.protocol import Keeping, Runnable
from skenario.scenario.faketime import STORED_PLUGIN_RESULTS, FakeTimeRun, kep_scenario
from skenario.scenario.format.kep import KepScenario
from skenario.scenario.format.scenario import Scenario
from skenario.scenario.io import Documents, located, read_text, yaml_documents
from skenario.scenario.ksim import is_export, ksim_annotations, read_export
from skenario.scenario.ksimrecord import Replay, is_recording, parse_recording
from skenario.scenario.loader import parse_scenario
from skenario.scenario.preflight import estimate
from skenario.scenario.simulation import Simulation
from skenario.scenario.wiring.plugins import refused, unloaded
from skenario.scenario.wiring.prepare import Prepared, prepare

Plugins = Literal["check", "load", "refuse"]
TRACE_SUFFIXES = (".csv",)
"""A file with one of these suffixes is a batch trace of pods (`skenario schedule`'s default, a CSV)."""


class Refused(SkenarioError):
    """A scenario whose estimate passes the limits, not forced: `lines` are the estimate, to show first."""

    def __init__(self, message: str, *, lines: list[str], file: str) -> None:
        super().__init__(message, file=file)
        self.lines = lines


class PluginFailed(PluginError):
    """A plugin failed while its run was built (its module's code, its `__init__` or its `start`): the
    user's code failed, not the input, so the run is kept as Failed (`record`, at 0s) like any other."""

    def __init__(self, failure: PluginError, record: FinishedRun) -> None:
        super().__init__(
            failure.message, file=failure.file, field=failure.field, value=failure.value, line=failure.line
        )
        self.record = record


def _unbuilt(scenario: Scenario, seed: int, text: str, failure: PluginError) -> FinishedRun:
    """The record of a run whose plugin failed before its clock started."""
    return FinishedRun(
        name=scenario.metadata.name,
        scenario_text=text,
        seed=seed,
        phase="Failed",
        message=str(failure),
        digest=None,
        simulated_ns=0,
        wall_s=None,
    )


@dataclass(frozen=True)
class KepInput:
    """A file read as KEP-140: its Scenario, and where it came from (a recording's replay, an export)."""

    scenario: KepScenario
    replay: Replay | None = None  # a kube-scheduler-simulator recording, replayed (docs/ksim.md)
    exported: bool = False  # a kube-scheduler-simulator export


def yaml_of(file: Path, text: str) -> Documents | None:
    """The text's YAML documents, read once for every question of its kind and for the scenario itself
    (PyYAML reads about 1 MB/s); None for a recording or JSON, which their own readers take faster."""
    if is_recording(text) or text.lstrip().startswith("{"):
        return None
    return yaml_documents(text, str(file))


def read_kep(file: Path, text: str, documents: Documents | None = None) -> KepInput | None:
    """The file as KEP-140 input (a recording, an export, a KEP-140 Scenario), or None for skenario's
    format; `documents`: the text already read as YAML (`yaml_of`)."""
    if is_recording(text):
        replay = parse_recording(text, str(file)).replay(file.stem)
        return KepInput(KepScenario.model_validate(replay.scenario), replay=replay)
    if is_export(text, str(file), documents=documents):
        return KepInput(KepScenario.model_validate(read_export(file).as_scenario(file.stem)), exported=True)
    scenario = kep_scenario(text, str(file), documents=documents)
    return None if scenario is None else KepInput(scenario)


def digest_of(status: dict[str, Any]) -> str:
    """A KEP-140 run's fingerprint: its ScenarioResult, less the simulator's version."""
    result = dict(status["scenarioResult"])
    result.pop("simulatorVersion", None)
    text = json.dumps(result, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class KepRun(FakeTimeRun):
    """A KEP-140 run opened from a file: a mistake on its timeline is said against the file's event
    (a replayed recording's, against the record it came from), and a kube-scheduler-simulator input's
    results carry the annotations its web UI shows on each pod, to compare with."""

    keeping: ClassVar[Keeping] = "whole"

    text: str = ""
    replay: Replay | None = None
    exported: bool = False
    scenario_file: str | None = None

    @property
    def ksim(self) -> bool:
        return self.exported or self.replay is not None

    def run(self, until: int | None = None, *, steps: int = 1, progress: Any = None) -> None:
        try:
            super().run(until, steps=steps, progress=progress)
        except ScenarioError as exc:
            raise located(exc if self.replay is None else self.replay.locate(exc), self.source, self.text) from None

    def annotated_status(self) -> dict[str, Any]:
        """KEP-140's ScenarioStatus (every PodResult and plugin result), with kube-scheduler-simulator's
        annotations for its inputs."""
        status = self.status()
        if self.ksim:
            status["ksimAnnotations"] = self._annotations()
        return status

    def documents(self) -> dict[str, Any]:
        documents = super().documents()
        if self.ksim and self.plugin_verdicts() <= STORED_PLUGIN_RESULTS:  # per-node results, as the store's cap
            documents["kep140"]["ksimAnnotations"] = self._annotations()
        return documents

    def digest(self) -> str:
        return digest_of(self.status())

    def record(self) -> FinishedRun:
        """What the store keeps once the run is over: its row and documents, with no series."""
        return FinishedRun(
            name=self.scenario.name,
            scenario_text=self.text,
            seed=int(self.seed or 0),
            phase=str(self.phase),
            message=self.message,
            digest=self.digest(),
            simulated_ns=self.simulated(),
            wall_s=None,
            named_documents=self.documents(),
        )

    def _annotations(self) -> dict[str, Any]:
        return {pod.name: ksim_annotations(pod.result()) for pod in self.pods()}


@dataclass(frozen=True)
class Window:
    """A stretch of a scenario's time to run on its own (`skenario run --window`): from `offset` (ns) for
    `duration`, starting with `replicas` (None: the scenario's own)."""

    offset: int
    duration: int
    replicas: int | None = None


def open_run(
    source: Path | str,
    *,
    text: str | None = None,
    seed: int | None = None,
    plugins: Plugins = "load",
    force: bool = True,
    trace: TraceOptions | None = None,
    base_dir: Path | None = None,
    mode: str | None = None,
    window: Window | None = None,
) -> Runnable:
    """The run of `source` (a file's path, or a scenario's text as a str), of whichever kind it is.

    `text`: the file's text, already read (the file is then only its name in messages). `base_dir`:
    where the files it names are, by default the file's folder (the working directory for a text).
    `plugins`: "load" runs a plugin's code, "refuse" refuses a scenario naming one, "check" reads it
    without running it. Without `force`, a scenario whose estimate passes the limits is `Refused`.
    `mode` overrides a scenario's `spec.mode` (`skenario run --mode`); other inputs have no mode.
    `window` runs a stretch of a scenario's time (`skenario run --window`).
    """
    if isinstance(source, str):
        file, text = Path("<scenario>"), source
        base = Path.cwd() if base_dir is None else base_dir
    else:
        file, base = source, source.parent if base_dir is None else base_dir
    if trace is not None or (text is None and file.suffix.lower() in TRACE_SUFFIXES):
        return open_trace(file, trace or TraceOptions(), seed=seed or 0)
    text = read_text(file) if text is None else text
    documents = yaml_of(file, text)
    if (mode is not None or window is not None) and (
        is_batch(documents) or read_kep(file, text, documents) is not None
    ):
        option = "--mode sets a scenario's spec.mode" if mode is not None else "--window runs a stretch of a scenario"
        raise SkenarioError(f"{option}: give a kind: Scenario file", file=str(file))
    if is_batch(documents):
        assert documents is not None
        return open_batch(documents, file=file, text=text, base_dir=base, seed=seed)
    kep = read_kep(file, text, documents)
    if kep is not None:
        return open_kep(kep, file=file, text=text, seed=seed, base_dir=base)
    prepared = validated(
        file, text, seed=seed, plugins=plugins, base_dir=base, documents=documents, mode=mode, window=window
    )
    if window is not None:  # the document as it runs, written again
        text = yaml.safe_dump(prepared.scenario.document, sort_keys=False, allow_unicode=True)
    elif mode is not None and prepared.scenario.spec.mode != parse_mode(documents):
        text = mode_text(text, mode)
    cost = None if force else estimate(prepared)
    if cost is not None and (over := cost.over()):
        raise Refused(
            f"refused: the run would take {'; '.join(over)}. Run it anyway with --force",
            lines=list(cost.lines()),
            file=str(file),
        )
    try:
        return Simulation(prepared.scenario, scenario_text=text, prepared=prepared)
    except PluginError as exc:  # an autoscaler plugin's start
        raise PluginFailed(exc, _unbuilt(prepared.scenario, prepared.seed, text, exc)) from exc


def parse_mode(documents: Documents | None) -> str:
    """The mode the file's scenario says (discrete unless it says otherwise)."""
    first = documents[0][0] if documents else None
    spec = first.get("spec") if isinstance(first, dict) else None
    return str(spec.get("mode", "discrete")) if isinstance(spec, dict) else "discrete"


def mode_text(text: str, mode: str) -> str:
    """The scenario's text with `spec.mode: mode` written in (what a run with `--mode` keeps as its
    scenario): a line under `spec:` at the indentation of the next, or the document written again when
    `spec` is not a block mapping."""
    lines = text.splitlines(keepends=True)
    for index, line in enumerate(lines):
        if re.match(r"spec:\s*(#.*)?$", line):
            following = next((later for later in lines[index + 1 :] if later.strip()), "  x")
            indent = following[: len(following) - len(following.lstrip())] or "  "
            body = [later for later in lines[index + 1 :] if not re.match(rf"{re.escape(indent)}mode:\s", later)]
            return "".join([*lines[: index + 1], f"{indent}mode: {mode}\n", *body])
    data = yaml.safe_load_all(text)
    documents = [document for document in data if document is not None]
    documents[0].setdefault("spec", {})["mode"] = mode
    return "---\n".join(yaml.safe_dump(document, sort_keys=False, allow_unicode=True) for document in documents)


def open_kep(kep: KepInput, *, file: Path, text: str, seed: int | None, base_dir: Path | None = None) -> KepRun:
    """A KEP-140 input, wired: a replayed recording skips operations on objects already gone (`skip_gone`)."""
    try:
        return KepRun(
            kep.scenario,
            source=str(file),
            base_dir=file.parent if base_dir is None else base_dir,
            seed=seed,
            skip_gone=kep.replay is not None,
            text=text,
            replay=kep.replay,
            exported=kep.exported,
            scenario_file=str(file),
        )
    except ScenarioError as exc:
        raise located(exc if kep.replay is None else kep.replay.locate(exc), str(file), text) from None


def examine(file: Path, *, seed: int | None = None) -> Prepared | KepRun | BatchRun:
    """What `check` and `run --dry-run` look at: a scenario read and checked whole (plugins read, not
    run), a batch replay with every file it names read (not run), or a KEP-140 input to run in
    memory, nothing written (whether an object is there at a step can hang on the scheduler, so only
    running the timeline finds every mistake the real run would)."""
    text = read_text(file)
    documents = yaml_of(file, text)
    if is_batch(documents):
        assert documents is not None
        return open_batch(documents, file=file, text=text, base_dir=file.parent, seed=seed)
    kep = read_kep(file, text, documents)
    if kep is None:
        return validated(file, text, seed=seed, documents=documents)
    return open_kep(kep, file=file, text=text, seed=seed)


def validated(
    file: Path,
    text: str,
    *,
    seed: int | None = None,
    plugins: Plugins = "check",
    base_dir: Path | None = None,
    documents: Documents | None = None,
    mode: str | None = None,
    window: Window | None = None,
) -> Prepared:
    """The scenario FILE holds (`text`), read and checked as `skenario run` reads it, ready to run.

    `plugins`: "check" reads a plugin without running its code (check, run --dry-run), "load" runs
    it (run), "refuse" refuses it (run --no-plugins). A mistake found in a file the scenario names
    but not said against a file of its own is said against FILE, with the line of its field.
    `documents`: the text already read as YAML; `mode` overrides its `spec.mode`; `window` runs a stretch.
    """
    scenario = parse_scenario(text, str(file), documents=documents)
    if mode is not None:
        scenario = scenario.with_mode(mode)
    if window is not None:
        try:
            scenario = scenario.with_window(window.offset, window.duration, window.replicas)
        except ValueError as exc:
            raise SkenarioError(f"--window: {exc}", file=str(file), field="spec.offset") from None
    policy: AbstractContextManager[None] = (
        unloaded() if plugins == "check" else refused() if plugins == "refuse" else nullcontext()
    )
    try:
        with policy:
            prepared = prepare(scenario, seed=seed, base_dir=file.parent if base_dir is None else base_dir)
    except PluginError as exc:  # a plugin's module or __init__
        failure = located(exc, str(file), text)
        raise PluginFailed(
            failure, _unbuilt(scenario, scenario.spec.seed if seed is None else seed, text, failure)
        ) from exc
    except SkenarioError as exc:
        raise located(exc, str(file), text) from None
    if prepared.end is None:
        raise SkenarioError(
            "the scenario never ends: give spec.duration or a `done` event", file=str(file), field="spec.duration"
        )
    return prepared
