"""skenario's own plain CSV of pods, and optionally of nodes, written the way Kubernetes writes quantities.

Pods: required columns `name, created, cpu, memory`; optional `duration`, `priority`, `gpu`,
`labels`. Nodes: required `name, cpu, memory`; optional `pods`, `gpu`, `labels`, `taints`. Any
other column is refused, so a misspelt one is not silently ignored. Rows may come in any order.

* `created` and `duration`: plain seconds (`90`, `1.5`) or a number with a unit (`90s`, `1.5h`,
  `250ms`, `1h30m`); neither may be negative. An empty `duration` runs until the end of the simulation.
* `cpu`: cores or millicores (`2`, `0.5`, `500m`), whole millicores. `memory`: bytes, with an
  optional Kubernetes suffix (`512Mi`, `2Gi`, `1G`, `1e9`), whole bytes. A pod's empty `cpu` or
  `memory` means it sets no request; a node must give both.
* `priority`: a whole number, 0 if empty. `gpu`: whole `nvidia.com/gpu` devices, on pods and nodes.
* `labels`: `key=value;key2=value2` (so neither may hold `;`, and a key may not hold `=`).
* `taints`: `key=value:Effect;key2:Effect`, Effect one of NoSchedule, PreferNoSchedule, NoExecute.
* `pods`: how many pods a node takes, 110 (the kubelet's default) if empty.
"""

from __future__ import annotations

from skenario.core.time import parse_duration
from skenario.scheduling.objects import DEFAULT_MAX_PODS, NO_EXTENDED, NO_LABELS, NodeSpec, PodSpec
from skenario.scheduling.taints import Taint, TaintEffect
from skenario.scheduling.traces.base import (
    CsvTable,
    LoadedTrace,
    TracePod,
    UniqueNames,
    bad_cell,
    cpu_millicores,
    memory_bytes,
    natural,
    read_csv,
    signed,
    sorted_pods,
)
from skenario.workloads.tracefiles import TraceError, TracePath, parse_number_ns

GPU = "nvidia.com/gpu"

POD_REQUIRED = ("name", "created", "cpu", "memory")
POD_COLUMNS = (*POD_REQUIRED, "duration", "priority", "gpu", "labels")
NODE_REQUIRED = ("name", "cpu", "memory")
NODE_COLUMNS = (*NODE_REQUIRED, "pods", "gpu", "labels", "taints")
_EFFECTS = tuple(effect.value for effect in TaintEffect)


class CsvPods(LoadedTrace):
    """A CSV of pods and, optionally, a CSV of nodes."""

    def __init__(self, path: TracePath, nodes_path: TracePath | None = None) -> None:
        nodes = [] if nodes_path is None else read_csv_nodes(nodes_path)
        super().__init__(path, nodes_path, nodes, read_csv_pods(path))


def read_csv_pods(path: TracePath) -> list[TracePod]:
    table = read_csv(path, POD_REQUIRED, POD_COLUMNS)
    names = UniqueNames(table.file, "pod")
    pods = []
    # Each optional column's index, or None; each row is parsed as it is read, and a cell once.
    optional = {column: table.columns.get(column) for column in ("duration", "priority", "gpu", "labels")}
    at_duration, at_priority, at_gpu, at_labels = optional.values()
    at_cpu, at_memory = table.columns["cpu"], table.columns["memory"]
    for line, row in table.rows:
        cell = _Cells(table, line, row)
        name = cell.name()
        names.claim(name, None, line)
        gpu = cell.number("gpu") if at_gpu is not None and row[at_gpu] else 0
        priority = row[at_priority] if at_priority is not None else ""
        spec = PodSpec(
            name=name,
            cpu=cell.cpu() if row[at_cpu] else None,
            memory=cell.memory() if row[at_memory] else None,
            extended={GPU: gpu} if gpu else NO_EXTENDED,
            priority=signed(table, line, "priority", priority) if priority else 0,
            labels=cell.labels() if at_labels is not None and row[at_labels] else NO_LABELS,
            movable=False,  # a bare pod: no controller recreates it elsewhere
        )
        duration = cell.time("duration") if at_duration is not None and row[at_duration] else None
        pods.append(TracePod(spec, cell.time("created"), duration))
    return sorted_pods(pods)


def read_csv_nodes(path: TracePath) -> list[NodeSpec]:
    table = read_csv(path, NODE_REQUIRED, NODE_COLUMNS)
    names = UniqueNames(table.file, "node")
    nodes = []
    for line, row in table.rows:
        cell = _Cells(table, line, row)
        name = cell.name()
        names.claim(name, None, line)
        gpu = cell.number("gpu")
        pods = cell.number("pods") if cell.text("pods") else DEFAULT_MAX_PODS
        if pods == 0:
            raise bad_cell(table, line, "pods", cell.text("pods"), "is zero: a node must take at least one pod")
        nodes.append(
            NodeSpec(
                name=name,
                cpu=cell.cpu(),
                memory=cell.memory(),
                pods=pods,
                extended={GPU: gpu} if gpu else {},
                labels=cell.labels(),
                taints=cell.taints(),
            )
        )
    return nodes


class _Cells:
    """The cells of one row, parsed with errors that name the file, line, column and value."""

    def __init__(self, table: CsvTable, line: int, row: list[str]) -> None:
        self.table = table
        self.line = line
        self.row = row

    def text(self, column: str) -> str:
        """The stripped cell, or "" if the file has no such (optional) column."""
        index = self.table.columns.get(column)
        return "" if index is None else self.row[index]

    def bad(self, column: str, problem: str) -> TraceError:
        return bad_cell(self.table, self.line, column, self.text(column), problem)

    def name(self) -> str:
        name = self.text("name")
        if not name:
            raise self.bad("name", "is empty: every row needs a name")
        return name

    def number(self, column: str) -> int:
        """A whole number >= 0; 0 if empty."""
        text = self.text(column)
        return natural(self.table, self.line, column, text) if text else 0

    def time(self, column: str) -> int:
        """Plain seconds or a duration with a unit, as ns >= 0."""
        text = self.text(column)
        if not text:
            raise self.bad(column, "is empty: write seconds (90) or a duration (90s, 1.5h)")
        ns = parse_number_ns(text)
        if ns is None:
            try:
                ns = parse_duration(text)
            except ValueError:
                raise self.bad(
                    column, "is not a time: write seconds (90, 1.5) or a duration (90s, 1.5h, 250ms)"
                ) from None
        if ns < 0:
            raise self.bad(column, "is negative")
        return ns

    def cpu(self) -> int:
        millicores = cpu_millicores(self.text("cpu"))
        if millicores is None:
            raise self.bad("cpu", "is not a CPU quantity: write cores (2, 0.5) or whole millicores (500m)")
        return millicores

    def memory(self) -> int:
        size = memory_bytes(self.text("memory"))
        if size is None:
            raise self.bad("memory", "is not a memory size: write whole bytes, maybe with a suffix (512Mi, 2Gi, 1G)")
        return size

    def labels(self) -> dict[str, str]:
        labels: dict[str, str] = {}
        for part in _parts(self.text("labels")):
            key, equals, value = part.partition("=")
            key = key.strip()
            if not equals or not key:
                raise self.bad("labels", f"has '{part}', not key=value (labels are key=value;key2=value2)")
            if key in labels:
                raise self.bad("labels", f"sets label '{key}' twice")
            labels[key] = value.strip()
        return labels

    def taints(self) -> tuple[Taint, ...]:
        taints = []
        for part in _parts(self.text("taints")):
            head, colon, effect = part.rpartition(":")
            key, _, value = head.partition("=")
            if not colon or not key.strip():
                raise self.bad("taints", f"has '{part}', not key=value:Effect or key:Effect")
            if effect.strip() not in _EFFECTS:
                raise self.bad("taints", f"has effect '{effect.strip()}'; effects: {', '.join(_EFFECTS)}")
            taints.append(Taint(key.strip(), TaintEffect(effect.strip()), value.strip()))
        return tuple(taints)


def _parts(text: str) -> list[str]:
    """The non-empty `;`-separated entries of a cell."""
    return [part.strip() for part in text.split(";") if part.strip()]
