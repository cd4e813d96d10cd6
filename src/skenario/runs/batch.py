"""A batch replay as a run like the others: opened from its document, run, kept whole in the store.

A `kind: BatchReplay` document (`skenario.scenario.format.batch`; `skenario schedule` writes one
from its options) names a trace, its nodes and what places its work: YARN's Capacity or Fair
Scheduler (`YarnReplay`), Kueue in front of kube-scheduler, or kube-scheduler alone
(`BatchReplay`). `BatchRun` wraps either replay as a `Runnable` kept `whole`:

    summary    runs.summary stays empty (a service run's figures); the replay's own summary is
               the `batch` document, with the scheduler's name and the queues' figures
    series     every queue's allocation, pending demand and applications (or workloads) sampled
               on a grid of `sample_interval` (at most MAX_SAMPLES rows), SLS's names for YARN
    documents  `batch`, `jobs` (one row per job or workload: wait, run time, why), `queues` (the
               queue list), and for kube-scheduler `scheduling` and `pods`

The document is kept with its paths made absolute, so a stored replay can be run again from the
store: `skenario explain RUN --job NAME --at T` replays it to T (same seed, same decisions) and
asks the scheduler why the job waits there.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np
import yaml

from skenario.core.time import MINUTE, SECOND, parse_duration
from skenario.errors import SkenarioError
from skenario.results.store import FinishedRun
from skenario.scenario.format.batch import BATCH_SHAPE, BatchReplayDocument
from skenario.scenario.format.scenario import API_VERSION
from skenario.scenario.format.scheduler import SchedulerSpec
from skenario.scenario.io import Documents, load_document, located, validate_node, yaml_documents
from skenario.scenario.wiring.scheduler import build_profile
from skenario.scheduling.analysis import SchedulingSummary, pod_records
from skenario.scheduling.attempts import PluginResults, name_matcher
from skenario.scheduling.queues.capacity_config import CapacityConfig, read_capacity_config
from skenario.scheduling.queues.fair_config import FairConfig, read_fair_config, with_site
from skenario.scheduling.queues.kueue import KueueAdmission
from skenario.scheduling.queues.kueue_config import read_kueue_config
from skenario.scheduling.queues.steps import sample
from skenario.scheduling.queues.yarn_replay import YarnReplay, YarnSummary, job_problem
from skenario.scheduling.replay import BatchReplay
from skenario.scheduling.traces import TracePod, read_pod_trace
from skenario.scheduling.traces.base import PodStream
from skenario.scheduling.traces.sls import JobStream, SlsJob, SlsTrace
from skenario.scheduling.traces.synth import SynthTrace

KIND = "BatchReplay"
MAX_SAMPLES = 2_000
"""Rows of a stored replay's queue series at most: the default grid is the first of GRID that keeps to it."""
GRID = tuple(s * SECOND for s in (1, 5, 10, 30, 60, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400, 7 * 86400))
PATH_FIELDS = ("trace", "nodes", "scheduler")
MAX_STORED_PODS = 50_000
"""A kube-scheduler replay keeps its pods table in the store up to this many pods (a month's 500,000 would
add half a gigabyte to the replay's peak); past it, `skenario schedule --pods FILE` writes them as they go."""


def is_batch(documents: Documents | None) -> bool:
    """Whether the file's first YAML document says `kind: BatchReplay`."""
    if not documents:
        return False
    data = documents[0][0]
    return isinstance(data, dict) and data.get("kind") == KIND


def read_batch(documents: Documents, source: str) -> BatchReplayDocument:
    """The batch replay document, validated; a mistake names `source`, the line and the field."""
    if len(documents) != 1:
        raise SkenarioError(f"expected one YAML document, found {len(documents)}; {BATCH_SHAPE}", file=source)
    data, root = documents[0]
    return validate_node(data, root, BatchReplayDocument, source, BATCH_SHAPE)


def absolute(document: dict[str, Any], base_dir: Path) -> dict[str, Any]:
    """The document with every file it names made absolute against `base_dir` (what the store keeps)."""
    out: dict[str, Any] = json.loads(json.dumps(document))
    spec = out.get("spec", {})

    def fix(mapping: dict[str, Any], key: str) -> None:
        if isinstance(mapping.get(key), str):
            mapping[key] = str((base_dir / mapping[key]).resolve())

    for key in PATH_FIELDS:
        fix(spec, key)
    for section, keys in (
        ("capacityScheduler", ("file",)),
        ("fairScheduler", ("file", "yarnSite")),
        ("kueue", ("file",)),
    ):
        if isinstance(spec.get(section), dict):
            for key in keys:
                fix(spec[section], key)
    return out


class BatchRun:
    """A batch replay document's run: a `YarnReplay` or a `BatchReplay`, read the store's way."""

    kind: ClassVar[str] = "trace"
    keeping: ClassVar[Literal["whole"]] = "whole"

    def __init__(
        self,
        document: BatchReplayDocument,
        written: dict[str, Any],
        *,
        source: str,
        base_dir: Path,
        seed: int | None = None,
        until: int | None = None,
        plugin_results: PluginResults = "none",
        results_for: tuple[str, ...] = (),
    ) -> None:
        self.document = document
        self._plugin_results, self._results_for = plugin_results, results_for
        self.source = source
        self.stored = absolute(written, base_dir)
        spec = document.spec
        self.seed = spec.seed if seed is None else seed
        self.stored["spec"]["seed"] = self.seed
        self.base_dir = base_dir
        end = spec.until if until is None else until
        self.replay: YarnReplay | BatchReplay = self._yarn(end) if spec.yarn else self._kube(end)
        self.wall_s: float | None = None
        self._batch: tuple[tuple[str, int], dict[str, Any]] | None = None  # the batch document, and when

    def _path(self, name: str) -> Path:
        """A file the document names, relative to the document's folder (an absolute path stays)."""
        return self.base_dir / name

    def _maybe(self, name: str | None) -> Path | None:
        return None if name is None else self._path(name)

    def _yarn(self, until: int | None) -> YarnReplay:
        spec = self.document.spec
        config: CapacityConfig | FairConfig
        if spec.capacity_scheduler is not None:
            config = read_capacity_config(self._path(spec.capacity_scheduler.file), spec.capacity_scheduler.properties)
        else:
            assert spec.fair_scheduler is not None
            config = read_fair_config(self._path(spec.fair_scheduler.file))
            if spec.fair_scheduler.yarn_site is not None:
                config = with_site(config, self._path(spec.fair_scheduler.yarn_site))
        trace = self._path(spec.trace)
        # The jobs alone: YARN's schedulers place them, so no pod of theirs is made. An SLS trace's jobs are read
        # as they are submitted (checked against the scheduler now), a SYNTH trace's generated now.
        jobs: list[SlsJob] | JobStream
        if spec.format == "synth":
            reader: SynthTrace | SlsTrace = SynthTrace(trace, self._maybe(spec.nodes), pods=False)
            jobs = reader.jobs
        else:
            check = partial(job_problem, config=config, file=str(trace))
            reader = SlsTrace(trace, self._maybe(spec.nodes), pods=False, lazy=True, check=check)
            jobs = reader.job_stream()
        return YarnReplay(
            jobs,
            reader.nodes(),
            config,
            seed=self.seed,
            nm_heartbeat=spec.heartbeat if spec.heartbeat is not None else SECOND,
            until=until,
            trace_file=str(trace),
        )

    def _kube(self, until: int | None) -> BatchReplay:
        spec = self.document.spec
        options = TraceOptions(
            kind=spec.format,
            nodes=self._maybe(spec.nodes),
            scheduler_file=self._maybe(spec.scheduler),
            hold=spec.hold,
            heartbeat=None if spec.heartbeat is None else f"{spec.heartbeat}ns",
            heartbeat_delay=None if spec.heartbeat_delay is None else f"{spec.heartbeat_delay}ns",
            until=None if until is None else f"{until}ns",
            plugin_results=self._plugin_results,
            results_for=self._results_for,
            keep_timeline=False,
            kueue=None if spec.kueue is None else self._path(spec.kueue.file),
        )
        return open_trace(self._path(spec.trace), options, seed=self.seed)

    # -- Runnable ------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.document.metadata.name

    @property
    def yarn(self) -> bool:
        """Whether a YARN scheduler places the jobs (else kube-scheduler, with Kueue or alone)."""
        return isinstance(self.replay, YarnReplay)

    @property
    def scheduler(self) -> str:
        """What places the work: CapacityScheduler, FairScheduler, Kueue or kube-scheduler."""
        if isinstance(self.replay, YarnReplay):
            return type(self.replay.scheduler).__name__
        return "Kueue" if self.replay.admission is not None else "kube-scheduler"

    @property
    def phase(self) -> str:
        return self.replay.phase

    @property
    def message(self) -> str | None:
        return self.replay.message

    @property
    def timeline(self) -> list[Any]:
        return []  # a replay's events are counted in its summary, its jobs and its series

    def run(
        self, until: int | None = None, *, steps: int = 1, progress: Callable[[int], object] | None = None
    ) -> object:
        return self.replay.run(until, steps=steps, progress=progress)

    def pause_soon(self) -> None:
        self.replay.pause_soon()

    def fail(self, message: str) -> None:
        self.replay.fail(message)

    def simulated(self) -> int:
        return self.replay.simulated()

    def summary(self) -> YarnSummary | SchedulingSummary:
        return self.replay.summary()

    def why(self, name: str) -> str:
        """Why job or workload `name` has not started (or finished) at the replay's end."""
        if isinstance(self.replay, YarnReplay):
            return self.replay.why(name)
        if self.replay.admission is None:
            raise KeyError("a kube-scheduler replay has no queues: `skenario show` gives each pod's attempts")
        return self.replay.admission.why(name)

    def jobs(self) -> list[dict[str, Any]]:
        """One row per job (YARN) or workload (Kueue); none for kube-scheduler alone."""
        if isinstance(self.replay, YarnReplay):
            return self.replay.jobs_table()
        return [] if self.replay.admission is None else self.replay.admission.workloads_table()

    def contents(self) -> dict[str, int]:
        """What the replay holds before it runs: its jobs (YARN) or pods, its nodes, and its queues."""
        replay = self.replay
        if isinstance(replay, YarnReplay):
            return {"jobs": replay.job_count, "nodes": len(replay.nodes), "queues": len(replay.scheduler.leaves)}
        held = {"pods": replay.pod_count, "nodes": len(replay.nodes)}
        return held | ({} if replay.kueue is None else {"ClusterQueues": len(replay.kueue.cluster_queues)})

    def queue_rows(self) -> Iterable[dict[str, Any]]:
        """Each queue wherever one of its figures changed: SLS's names for YARN, ClusterQueues' for Kueue."""
        if isinstance(self.replay, YarnReplay):
            return self.replay.queue_rows()
        return [] if self.replay.admission is None else self.replay.admission.queue_rows()

    def batch_summary(self) -> dict[str, Any]:
        """The `batch` document: the scheduler, its summary, and Kueue's under `kueue`. Made once for the
        instant it is read at: a month's summary (its allocation steps) is the replay's largest moment."""
        replay = self.replay
        at = (replay.phase, replay.simulated())
        if self._batch is not None and self._batch[0] == at:
            return self._batch[1]
        document: dict[str, Any] = {"scheduler": self.scheduler, "summary": dict(replay.summary().as_dict())}
        if isinstance(replay, BatchReplay) and replay.admission is not None:
            document["kueue"] = replay.admission.summary()
        self._batch = (at, document)
        return document

    def documents(self) -> dict[str, Any]:
        documents: dict[str, Any] = {"batch": self.batch_summary(), "jobs": self.jobs()}
        if isinstance(self.replay, BatchReplay):
            controller = self.replay.controller
            kept = controller.pod_count() <= MAX_STORED_PODS
            documents["scheduling"] = documents["batch"]["summary"] | {"podsKept": kept}
            if kept:
                documents["pods"] = pod_records(controller.all_pods())
        return documents

    def series_rows(self) -> list[dict[str, Any]]:
        """Every queue's figures on a grid: SLS's names for YARN (`queue.<q>.allocated.memory`, GB),
        `clusterQueue.<q>.cpu` (cores) and the like for Kueue; the cluster's total for YARN."""
        replay = self.replay
        admission = None if isinstance(replay, YarnReplay) else replay.admission
        if not isinstance(replay, YarnReplay) and admission is None:
            return []
        end = max(self.simulated(), 1)
        interval = self.document.spec.sample_interval or sample_interval(end)
        grid = np.arange(0, end + 1, interval, dtype=np.int64)
        if isinstance(replay, YarnReplay):  # its queues' series are read where they are kept, a block at a time
            columns = replay.sampled(grid)
            allocated = sum(c for n, c in columns.items() if n.endswith(".allocated.memory"))
            total = replay.scheduler.cluster.memory / 1024
            columns["cluster.allocated.memory"] = np.asarray(allocated, dtype=float)
            columns["cluster.available.memory"] = total - columns["cluster.allocated.memory"]
        else:
            assert admission is not None
            columns = _cluster_queue_columns(admission, grid)
        names = list(columns)
        return [{"time_ns": int(t), **{n: float(columns[n][i]) for n in names}} for i, t in enumerate(grid.tolist())]

    def digest(self) -> str:
        """The replay's fingerprint: its summary and its jobs, as JSON."""
        return _digest(self.batch_summary(), self.jobs())

    def record(self) -> FinishedRun:
        documents = self.documents()  # a month's jobs table is made once, for the store and the digest
        return FinishedRun(
            name=self.name,
            scenario_text=yaml.safe_dump(self.stored, sort_keys=False, allow_unicode=True),
            seed=self.seed,
            phase=str(self.phase),
            message=self.message,
            digest=_digest(documents["batch"], documents["jobs"]),
            simulated_ns=self.simulated(),
            wall_s=self.wall_s,
            series=self.series_rows(),
            named_documents=documents,
        )


def _digest(batch: dict[str, Any], jobs: list[dict[str, Any]]) -> str:
    body = json.dumps([batch, jobs], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(body.encode()).hexdigest()[:16]


def replay_to(text: str, source: str, *, seed: int, until: int | None) -> BatchRun:
    """A stored replay's document run again to `until` (None: its end), with its seed: the same
    decisions up to there, so its scheduler can say why a job waits at that moment."""
    documents = yaml_documents(text, source)
    end = read_batch(documents, source).spec.until
    if until is not None and end is not None and until >= end:
        until = None  # the stored replay ends sooner: its end
    run = open_batch(documents, file=Path(source), text=text, base_dir=Path.cwd(), seed=seed, until=until)
    run.run()
    return run


def replay_document(
    trace: Path,
    *,
    kind: str,
    nodes: Path | None = None,
    seed: int = 0,
    until: str | None = None,
    heartbeat: str | None = None,
    heartbeat_delay: str | None = None,
    hold: bool = False,
    scheduler: Path | None = None,
    capacity: Path | None = None,
    fair: Path | None = None,
    site: Path | None = None,
    kueue: Path | None = None,
) -> dict[str, Any]:
    """The batch replay document of `skenario schedule`'s options, its files' paths absolute."""

    def path(file: Path) -> str:
        return str(file.resolve())

    spec: dict[str, Any] = {"seed": seed, "trace": path(trace), "format": kind}
    optional = {
        "nodes": None if nodes is None else path(nodes),
        "until": until,
        "heartbeat": heartbeat,
        "heartbeatDelay": heartbeat_delay,
        "hold": hold or None,
        "scheduler": None if scheduler is None else path(scheduler),
        "capacityScheduler": None if capacity is None else {"file": path(capacity)},
        "fairScheduler": None
        if fair is None
        else {"file": path(fair)} | ({} if site is None else {"yarnSite": path(site)}),
        "kueue": None if kueue is None else {"file": path(kueue)},
    }
    spec |= {key: value for key, value in optional.items() if value is not None}
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", trace.stem).strip("-.") or "replay"
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": name}, "spec": spec}


def sample_interval(end: int) -> int:
    """The first step of GRID that samples [0, end] in at most MAX_SAMPLES rows."""
    return next((step for step in GRID if end // step < MAX_SAMPLES), max(MINUTE, end // MAX_SAMPLES))


def open_batch(
    documents: Documents,
    *,
    file: Path,
    text: str,
    base_dir: Path,
    seed: int | None = None,
    until: int | None = None,
    plugin_results: PluginResults = "none",
    results_for: tuple[str, ...] = (),
) -> BatchRun:
    """The batch replay the document describes, its files read and checked: a mistake is one error
    naming the file (the document's, or the configuration's it names) and the field. `until` ends
    the replay sooner than the document's; `plugin_results` and `results_for` say which of
    kube-scheduler's attempts keep every plugin's verdict (`skenario schedule --results`)."""
    document = read_batch(documents, str(file))
    try:
        return BatchRun(
            document,
            documents[0][0],
            source=str(file),
            base_dir=base_dir,
            seed=seed,
            until=until,
            plugin_results=plugin_results,
            results_for=results_for,
        )
    except SkenarioError as exc:
        raise located(exc, str(file), text) from None
    except ValueError as exc:
        raise SkenarioError(str(exc), file=str(file)) from None


@dataclass(frozen=True)
class TraceOptions:
    """How to read and replay a batch trace (`skenario schedule`'s options)."""

    kind: str = "csv"
    nodes: Path | None = None
    scheduler_file: Path | None = None
    hold: bool = False
    until: str | None = None
    heartbeat: str | None = None
    heartbeat_delay: str | None = None
    # Which attempts keep every plugin's results, and pods (name globs) whose attempts all do.
    plugin_results: PluginResults = "unschedulable"
    results_for: tuple[str, ...] = ()
    keep_timeline: bool = True  # off: the timeline's events are counted, not kept (see SchedulerSettings)
    kueue: Path | None = None  # Kueue's manifests: pods naming a LocalQueue wait for admission
    extra: dict[str, Any] = field(default_factory=dict)


def _duration(value: str | None, option: str) -> int | None:
    if value is None:
        return None
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise SkenarioError(str(exc), field=option, value=value) from None


def _cluster_queue_columns(admission: KueueAdmission, grid: np.ndarray) -> dict[str, np.ndarray]:
    """Each ClusterQueue's figures at the instants of `grid` (cores, GiB, workloads)."""
    columns: dict[str, np.ndarray] = {}
    for queue, rows in admission.queue_series().items():
        cpu, memory, admitted, pending, evicted = sample(iter([rows]), 0, range(2, 7), grid)
        columns[f"clusterQueue.{queue}.cpu"] = cpu / 1000
        columns[f"clusterQueue.{queue}.memory"] = memory / 1024**3
        columns[f"clusterQueue.{queue}.admitted.workloads"] = admitted
        columns[f"clusterQueue.{queue}.pending.workloads"] = pending
        columns[f"clusterQueue.{queue}.evicted.workloads"] = evicted
    return columns


def open_trace(trace: Path, options: TraceOptions, *, seed: int = 0) -> BatchReplay:
    """A batch trace's pods on its nodes, with kube-scheduler's default profile or the scheduler file's."""
    scheduler_file = options.scheduler_file
    shape = "a scheduler file is a mapping such as {percentageOfNodesToScore: 0, profiles: [...]}"
    spec = (
        load_document(scheduler_file, SchedulerSpec, shape)
        if scheduler_file is not None
        else SchedulerSpec.model_validate({})
    )
    base_dir = scheduler_file.parent if scheduler_file is not None else Path.cwd()
    profile = build_profile(spec, base_dir, field=str(scheduler_file or "scheduler"))
    settings = spec.settings()
    interval = _duration(options.heartbeat, "--heartbeat")
    delay = _duration(options.heartbeat_delay, "--heartbeat-delay")
    settings = dataclasses.replace(
        settings,
        heartbeat_interval=settings.heartbeat_interval if interval is None else interval,
        heartbeat_delay=settings.heartbeat_delay if delay is None else delay,
        plugin_results="none" if settings.plugin_results == "none" else options.plugin_results,
        results_for=name_matcher(options.results_for),
        keep_timeline=options.keep_timeline,
    )
    reader = read_pod_trace(options.kind, trace, options.nodes, lazy=True, **options.extra)
    pods: list[TracePod] | PodStream = reader.pods() if options.hold else reader.pod_stream()
    if options.hold:
        pods = [dataclasses.replace(p, duration=None) for p in pods]
    node_list = reader.nodes()
    if not node_list:
        raise SkenarioError("the trace gives no nodes: name a node file with --nodes", file=str(trace))
    kueue = read_kueue_config(options.kueue) if options.kueue is not None else None
    until = _duration(options.until, "--until")
    del reader  # the replay lets go of each pod as it creates it, and of those gone: nothing else may hold them
    return BatchReplay(node_list, pods, profile, settings, seed=seed, until=until, kueue=kueue, release=True)
