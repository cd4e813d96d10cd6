"""kube-scheduler-simulator's recordings replayed: a real cluster's changes as a KEP-140 timeline.

ksim's `sched-recorder` (simulator/cmd/sched-recorder/recorder.go, simulator/recorder/recorder.go)
watches a cluster through one informer per kind of its `DefaultGVRs` (namespaces, priority classes,
storage classes, PVCs, nodes, PVs, pods) and appends what each one sees to a file, one JSON
`Record` a line, flushed every 5 s:

    {"time":"2025-06-20T09:00:01.25Z","event":"Add","resource":{"apiVersion":"v1","kind":"Pod",...}}

`event` is `Add`, `Update` (the whole new object) or `Delete` (only apiVersion, kind, name and
namespace); `time` is when the handler ran (`time.Now()`, RFC 3339 with nanoseconds). Informers
list before they watch, so a recording opens with an `Add` for everything the cluster held. ksim's
replayer (simulator/replayer/replayer.go, `Service.Replay`) applies the records in file order and
never reads their times: `Add` creates (an existing object is skipped), `Update` replaces the whole
object (not a pod that has a node: `filterPodsForUpdating`, simulator/resourceapplier/resource.go),
`Delete` deletes.

`KsimRecording.replay` turns the records into a KEP-140 Scenario on FakeTime:

1. Time: a record at `t` runs at FakeTime `t // step - t0 // step` (`t0` the first record's time,
   `step` one second unless told: the recorded second, counted from the first record's), never
   before the record above it. Operations run in the file's order, as the replayer's do, and those
   of one step all run before skenario's scheduler looks. `Done` comes one step after the last
   record.
2. `Add` is Create, `Update` Patch, `Delete` Delete. The patch is the JSON merge patch from the
   object as the replay holds it to the recorded one, removed fields set to null, so an Update
   replaces the whole object as the replayer's does.
3. The recorded scheduler's decisions are not replayed: an Update never changes a pod's
   `spec.nodeName` (its binding is dropped, and the pod waits for skenario's scheduler); a pod
   added with a node (bound before the recording began, or created bound) keeps it. Objects lose
   what the API server and the kubelet write (`ksim.for_creation`: server metadata, a pod's status;
   and the deletion timestamp, as only the Delete counts), so an Update left with nothing to change
   is dropped.
4. What kube-scheduler never sees is not replayed: its pod informer lists only pods neither
   Succeeded nor Failed (`newPodInformer`, pkg/scheduler/scheduler.go), so a pod added terminated
   is skipped, and a pod's update to Succeeded or Failed is its Delete.
5. A record naming an object the replay does not hold (updated or deleted after it terminated),
   adding one it holds, or of a kind outside `DefaultGVRs` is dropped, counted by its reason in
   `Replay.skipped`.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from skenario.core.time import SECOND
from skenario.errors import ScenarioError
from skenario.scenario.format.kep import MAX_FAKE_TIME
from skenario.scenario.io import read_text
from skenario.scenario.ksim import KIND_BY_NAME, SCENARIO_API_VERSION, ExportedKind, Manifest, for_creation

EVENTS = ("Add", "Update", "Delete")  # recorder.go's `Event` values
TERMINAL_PHASES = ("Succeeded", "Failed")  # the pods kube-scheduler's informer leaves out
DELETION_METADATA = ("deletionTimestamp", "deletionGracePeriodSeconds")  # a graceful delete's Update

# Why a record is not replayed, as `Replay.skipped` counts them.
UNCHANGED = "updates with nothing to replay (status, server metadata, the recorded binding)"
TERMINATED = "pods added already Succeeded or Failed"
ABSENT = "updates or deletes of objects the replay does not hold"
PRESENT = "adds of objects the replay holds already"
OTHER_KIND = "objects of kinds outside the recorder's DefaultGVRs"

# `time.RFC3339Nano` as Go's `Time.MarshalJSON` writes it: fractional seconds trimmed, a zone or Z.
_GO_TIME = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_NOT_BLANK = re.compile(r"\S")
# An error's field in the scenario, and the part of the record it stands for.
_EVENT_FIELD = re.compile(r"spec\.events\.(\d+)(\.createOperation\.object|\.patchOperation|\.deleteOperation)?")

Key = tuple[str, str, str]  # kind, namespace ("" when cluster-scoped), name


@dataclass(frozen=True, slots=True)
class Record:
    """One line of the file: upstream's `recorder.Record`, and where it was written."""

    index: int  # among the file's records, from 0
    line: int  # in the file, from 1
    at: int  # nanoseconds since the Unix epoch
    event: str  # Add, Update or Delete
    kind: ExportedKind | None  # None: a kind outside DefaultGVRs
    resource: Manifest  # with apiVersion filled in and a namespaced object's namespace defaulted

    @property
    def key(self) -> Key:
        metadata = self.resource["metadata"]
        namespaced = self.kind is not None and self.kind.namespaced
        return str(self.resource["kind"]), str(metadata["namespace"]) if namespaced else "", metadata["name"]


@dataclass(frozen=True, slots=True)
class Replay:
    """A recording as a KEP-140 Scenario document, the record each event came from, and what was left out."""

    source: str
    scenario: dict[str, Any]
    origins: list[Record]  # the record of each event but the last (Done), by event index
    skipped: dict[str, int]  # records not replayed, by reason
    records: int

    def locate(self, exc: ScenarioError) -> ScenarioError:
        """`exc`, raised by an event of the scenario, pointed at its record: `records.<i>.resource...` at its line."""
        match = _EVENT_FIELD.match(exc.field or "")
        if match is None or int(match.group(1)) >= len(self.origins):
            return exc
        record = self.origins[int(match.group(1))]
        rest = exc.field[match.end() :] if exc.field else ""
        exc.field = f"records.{record.index}{'.resource' if match.group(2) else ''}{rest}"
        exc.file, exc.line = self.source, record.line
        return exc

    def describe(self) -> str:
        """One line: how many records became how many events, and why the others did not."""
        events = self.scenario["spec"]["events"]
        text = (
            f"{self.source}: {self.records:,} recorded change(s) replayed as {len(events) - 1:,} operation(s) "
            f"over FakeTime 0-{events[-1]['time']}"
        )
        if self.skipped:
            reasons = ", ".join(f"{count:,} {reason}" for reason, count in self.skipped.items())
            text += f"; left out: {reasons}"
        return text


@dataclass(frozen=True, slots=True)
class KsimRecording:
    """The records of one recorder file, in file order."""

    source: str
    records: tuple[Record, ...]

    def replay(self, name: str, *, step: int = SECOND) -> Replay:
        """The KEP-140 Scenario replaying the records, one FakeTime step per `step` nanoseconds of recording."""
        if step <= 0:
            raise ScenarioError("a FakeTime step is a positive duration", field="step", value=step)
        held: dict[Key, Manifest] = {}
        skipped: Counter[str] = Counter()
        events: list[dict[str, Any]] = []
        origins: list[Record] = []
        start, time = self.records[0].at // step, 0
        for record in self.records:
            time = max(time, record.at // step - start)
            if time >= MAX_FAKE_TIME:  # Done comes one step later
                raise ScenarioError(
                    f"the recording outlasts FakeTime at one step per {step:,} ns: this record would be step {time:,}",
                    file=self.source,
                    line=record.line,
                    field=f"records.{record.index}.time",
                )
            operation = _operation(record, held, skipped)
            if operation is not None:
                events.append({"id": _event_id(record), "time": time, **operation})
                origins.append(record)
        events.append({"id": "done", "time": time + 1, "operation": "Done", "doneOperation": {}})
        scenario = {
            "apiVersion": SCENARIO_API_VERSION,
            "kind": "Scenario",
            "metadata": {"name": name},
            "spec": {"events": events},
        }
        return Replay(self.source, scenario, origins, dict(skipped), len(self.records))

    def as_scenario(self, name: str, *, step: int = SECOND) -> dict[str, Any]:
        return self.replay(name, step=step).scenario


def read_recording(path: str | Path) -> KsimRecording:
    """Read a recorder file; anything else is one ScenarioError naming the file, the record's line and field."""
    return parse_recording(read_text(path), str(path))


def parse_recording(text: str, source: str = "<recording>") -> KsimRecording:
    """The records of a recorder file's text: one JSON object a line (blank lines are passed over)."""
    records: list[Record] = []
    for number, line in enumerate(text.split("\n"), 1):  # Go ends each record with "\n", and escapes any in strings
        if not line.strip():
            continue
        index = len(records)
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ScenarioError(
                f"record {index} is not JSON: {exc.msg} at column {exc.colno}",
                file=source,
                line=number,
                field=f"records.{index}",
                value=line if len(line) <= 60 else line[:57] + "...",
            ) from None
        except RecursionError:
            raise ScenarioError(
                f"record {index} nests too deeply", file=source, line=number, field=f"records.{index}"
            ) from None
        records.append(_record(data, index, number, source))
    if not records:
        raise ScenarioError(
            "no records: a kube-scheduler-simulator recording holds one JSON record a line", file=source
        )
    return KsimRecording(source, tuple(records))


def is_recording(text: str) -> bool:
    """Whether the text is a recorder file: its first line a JSON object with `event` and `resource`."""
    found = _NOT_BLANK.search(text)
    if found is None:
        return False
    end = text.find("\n", found.start())
    try:
        data = json.loads(text[found.start() : end if end >= 0 else len(text)])
    except (json.JSONDecodeError, RecursionError):
        return False
    return isinstance(data, dict) and "event" in data and "resource" in data


def merge_diff(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The JSON merge patch (RFC 7386) taking `before` to `after`, as evanphx/json-patch's
    `CreateMergePatch` makes it: removed keys set to null, changed mappings diffed, anything else
    (a list, a scalar) given whole. Empty when they are equal. `after` must hold no null."""
    patch: dict[str, Any] = {key: None for key in before if key not in after}
    for key, value in after.items():
        old = before.get(key)
        if old == value and key in before:
            continue
        if isinstance(old, dict) and isinstance(value, dict):
            patch[key] = merge_diff(old, value)
        else:
            patch[key] = value
    return patch


# -- reading ----------------------------------------------------------------------------------------


def _record(data: Any, index: int, line: int, source: str) -> Record:
    def problem(message: str, field: str, value: Any = None) -> ScenarioError:
        return ScenarioError(message, file=source, line=line, field=f"records.{index}{field}", value=value)

    if not isinstance(data, dict):
        raise problem(f"a record is a JSON object {{time, event, resource}}, not {_json_type(data)}", "")
    event = data.get("event")
    if event not in EVENTS:
        raise problem("should be Add, Update or Delete", ".event", event)
    at = _go_time(data.get("time"))
    if at is None:
        raise problem(
            "should be a time as Go writes it (RFC 3339, e.g. 2025-06-20T09:00:01.25Z)", ".time", data.get("time")
        )
    resource = data.get("resource")
    if not isinstance(resource, dict):
        raise problem(f"should be the object (a JSON object), not {_json_type(resource)}", ".resource")
    kind_name = resource.get("kind")
    if not isinstance(kind_name, str) or not kind_name:
        raise problem("a recorded object names its kind", ".resource.kind", kind_name)
    metadata = resource.get("metadata")
    if not isinstance(metadata, dict):
        raise problem(f"a {kind_name} needs metadata with a name", ".resource.metadata")
    name = metadata.get("name")
    if not isinstance(name, str) or not name:
        raise problem(f"a {kind_name} needs a name", ".resource.metadata.name", name)
    kind = KIND_BY_NAME.get(kind_name)
    if kind is None:
        return Record(index, line, at, event, None, resource)
    written = resource.get("apiVersion")
    if written is not None and written != kind.api_version:
        message = f"the recorder records {kind_name} as {kind.api_version}, not {written!r}"
        raise problem(message, ".resource.apiVersion", written)
    if kind.namespaced:
        namespace = metadata.get("namespace") or "default"  # as the API server defaults it
        if not isinstance(namespace, str):
            raise problem("should be a namespace name", ".resource.metadata.namespace", namespace)
        metadata = {**metadata, "namespace": namespace}
    return Record(index, line, at, event, kind, {**resource, "apiVersion": kind.api_version, "metadata": metadata})


def _go_time(value: Any) -> int | None:
    """Nanoseconds since the Unix epoch of a time as Go's `json.Marshal` writes it, or None."""
    match = _GO_TIME.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        return None
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    fraction, zone = match.group(7) or "", match.group(8)
    try:
        sign = -1 if zone[0] == "-" else 1
        offset = timedelta(0) if zone == "Z" else sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:]))
        moment = datetime(year, month, day, hour, minute, second, tzinfo=timezone(offset))
    except ValueError:
        return None
    return (moment - _EPOCH) // timedelta(seconds=1) * SECOND + int(fraction.ljust(9, "0"))


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


# -- writing the scenario ---------------------------------------------------------------------------


def _operation(record: Record, held: dict[Key, Manifest], skipped: Counter[str]) -> dict[str, Any] | None:
    """The record's operation on the objects the replay holds (updated in place), or None when it is left out."""
    kind = record.kind
    if kind is None:
        skipped[OTHER_KIND] += 1
        return None
    key = record.key
    if record.event == "Add":
        if key in held:
            skipped[PRESENT] += 1
            return None
        if _terminated(record.resource):
            skipped[TERMINATED] += 1
            return None
        held[key] = manifest = _replayed(kind, record.resource)
        return {"operation": "Create", "createOperation": {"object": manifest}}
    if key not in held:
        skipped[ABSENT] += 1
        return None
    if record.event == "Delete" or _terminated(record.resource):
        del held[key]
        return {"operation": "Delete", "deleteOperation": _which(kind, key)}
    before, after = held[key], _replayed(kind, record.resource)
    if kind.kind == "Pod":
        _keep_node(before, after)
    patch = merge_diff(before, after)
    if not patch:
        skipped[UNCHANGED] += 1
        return None
    held[key] = after
    return {"operation": "Patch", "patchOperation": {**_which(kind, key), "patch": patch}}


def _replayed(kind: ExportedKind, resource: Manifest) -> Manifest:
    """The object as the replay creates it: `for_creation`'s rules, no deletion timestamp, no nulls
    (to a merge patch null means "remove", and to the API an absent field and a null one are alike)."""
    manifest = for_creation(kind, resource)
    for field in DELETION_METADATA:
        manifest["metadata"].pop(field, None)
    return _without_nulls(manifest)  # type: ignore[no-any-return]


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _keep_node(before: Manifest, after: Manifest) -> None:
    """`after` with the node `before` has, or none: an Update's binding is the recorded scheduler's."""
    spec = after.get("spec")
    if not isinstance(spec, dict):
        return
    node = (before.get("spec") or {}).get("nodeName")
    if node:
        spec["nodeName"] = node
    else:
        spec.pop("nodeName", None)


def _terminated(resource: Manifest) -> bool:
    status = resource.get("status")
    return resource.get("kind") == "Pod" and isinstance(status, dict) and status.get("phase") in TERMINAL_PHASES


def _which(kind: ExportedKind, key: Key) -> dict[str, Any]:
    """The `typeMeta` and `objectMeta` of a patch or delete."""
    _, namespace, name = key
    meta = {"name": name, "namespace": namespace} if kind.namespaced else {"name": name}
    return {"typeMeta": {"apiVersion": kind.api_version, "kind": kind.kind}, "objectMeta": meta}


def _event_id(record: Record) -> str:
    """`<record index>/<event>/<kind>/[<namespace>/]<name>`: unique, as each record is one event at most."""
    kind, namespace, name = record.key
    where = f"{namespace}/{name}" if namespace else name
    return f"{record.index}/{record.event.lower()}/{kind.lower()}/{where}"
