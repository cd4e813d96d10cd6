"""The Alibaba "openb" GPU-cluster pod and node lists (Weng et al., USENIX ATC 2023).

Node list columns `sn, cpu_milli, memory_mib, gpu, model`; pod list columns `name, cpu_milli,
memory_mib, num_gpu, gpu_milli, gpu_spec, qos, pod_phase, creation_time, deletion_time,
scheduled_time`, times in whole seconds from the start of the trace. How they become specs:

* **GPUs are one pooled resource per node,** `alibaba.com/gpu-milli`: a node with `gpu` devices
  offers `gpu * 1000`, a pod asks for `num_gpu * gpu_milli` (a multi-GPU pod has `gpu_milli`
  1000 per device). This is an approximation: the real cluster packs fractional GPUs onto single
  devices, so two 600-milli pods cannot share one device there but fit a 2-GPU node here.
* **GPU model:** a node's non-empty `model` becomes label `alibaba.com/gpu-model`; a pod's non-empty
  `gpu_spec` (`A|B`) becomes required node affinity `alibaba.com/gpu-model In (A, B)`.
* **QoS:** a non-empty `qos` becomes label `alibaba.com/qos`. `pod_phase` is not read.
* **Arrival** is `creation_time`. **Duration** is `deletion_time - scheduled_time`, or
  `deletion_time - creation_time` for a pod never scheduled (empty `scheduled_time`): in the replay
  a pod runs, once placed, for as long as it lived after being placed in the real cluster; a pod
  that was Pending throughout keeps its whole life. An empty `deletion_time` (a pod still alive
  when the trace ended) runs until the end of the simulation.
"""

from __future__ import annotations

from skenario.core.time import SECOND
from skenario.scheduling.affinity import NodeAffinity, Requirement, Term
from skenario.scheduling.objects import NO_EXTENDED, NO_LABELS, NodeSpec, PodSpec
from skenario.scheduling.traces.base import (
    MIB,
    LoadedTrace,
    TracePod,
    UniqueNames,
    bad_cell,
    natural,
    read_csv,
    sorted_pods,
)
from skenario.workloads.tracefiles import TracePath

GPU_MILLI = "alibaba.com/gpu-milli"
GPU_MODEL_LABEL = "alibaba.com/gpu-model"
QOS_LABEL = "alibaba.com/qos"

NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
POD_COLUMNS = (
    "name",
    "cpu_milli",
    "memory_mib",
    "num_gpu",
    "gpu_milli",
    "gpu_spec",
    "qos",
    "creation_time",
    "deletion_time",
    "scheduled_time",
)


class OpenbTrace(LoadedTrace):
    """An openb pod list and, optionally, its node list."""

    def __init__(self, pod_path: TracePath, node_path: TracePath | None = None) -> None:
        nodes = [] if node_path is None else read_openb_nodes(node_path)
        super().__init__(pod_path, node_path, nodes, read_openb_pods(pod_path))


def read_openb_nodes(path: TracePath) -> list[NodeSpec]:
    table = read_csv(path, NODE_COLUMNS)
    sn, cpu, memory, gpu, model = (table.columns[c] for c in NODE_COLUMNS)
    names = UniqueNames(table.file, "node")
    nodes = []
    for line, row in table.rows:
        name = row[sn]
        if not name:
            raise bad_cell(table, line, "sn", name, "is empty: every node needs a name")
        names.claim(name, None, line, "sn")
        devices = natural(table, line, "gpu", row[gpu])
        nodes.append(
            NodeSpec(
                name=name,
                cpu=natural(table, line, "cpu_milli", row[cpu]),
                memory=natural(table, line, "memory_mib", row[memory]) * MIB,
                extended={GPU_MILLI: devices * 1000} if devices else {},
                labels={GPU_MODEL_LABEL: row[model]} if row[model] else {},
            )
        )
    return nodes


def read_openb_pods(path: TracePath) -> list[TracePod]:
    table = read_csv(path, POD_COLUMNS)
    name_at, cpu_at, memory_at, num_gpu_at, gpu_milli_at, spec_at, qos_at, created_at, deleted_at, scheduled_at = (
        table.columns[c] for c in POD_COLUMNS
    )
    names = UniqueNames(table.file, "pod")
    affinities: dict[str, NodeAffinity] = {"": NodeAffinity()}  # one object per gpu_spec
    pods = []
    for line, row in table.rows:
        name = row[name_at]
        if not name:
            raise bad_cell(table, line, "name", name, "is empty: every pod needs a name")
        names.claim(name, None, line)
        num_gpu = natural(table, line, "num_gpu", row[num_gpu_at])
        gpu_milli = natural(table, line, "gpu_milli", row[gpu_milli_at])
        if gpu_milli > 1000:
            raise bad_cell(table, line, "gpu_milli", row[gpu_milli_at], "is more than one GPU (1000)")
        gpu_spec = row[spec_at]
        affinity = affinities.get(gpu_spec)
        if affinity is None:
            models = tuple(model.strip() for model in gpu_spec.split("|"))
            if not all(models):
                raise bad_cell(table, line, "gpu_spec", gpu_spec, "has an empty GPU model")
            requirement = Requirement(GPU_MODEL_LABEL, "In", models)
            affinity = affinities[gpu_spec] = NodeAffinity(required=(Term(match_expressions=(requirement,)),))
        qos = row[qos_at]
        spec = PodSpec(
            name=name,
            cpu=natural(table, line, "cpu_milli", row[cpu_at]),
            memory=natural(table, line, "memory_mib", row[memory_at]) * MIB,
            extended={GPU_MILLI: num_gpu * gpu_milli} if num_gpu else NO_EXTENDED,
            labels={QOS_LABEL: qos} if qos else NO_LABELS,
            affinity=affinity,
            movable=False,  # a bare pod: no controller recreates it elsewhere
        )
        created = natural(table, line, "creation_time", row[created_at])
        start = created
        if row[scheduled_at]:
            start = natural(table, line, "scheduled_time", row[scheduled_at])
            if start < created:
                raise bad_cell(table, line, "scheduled_time", row[scheduled_at], f"is before creation_time {created}")
        duration = None
        if row[deleted_at]:
            deleted = natural(table, line, "deletion_time", row[deleted_at])
            if deleted < start:
                before = f"creation_time {created}" if deleted < created else f"scheduled_time {start}"
                raise bad_cell(table, line, "deletion_time", row[deleted_at], f"is before {before}")
            duration = (deleted - start) * SECOND
        pods.append(TracePod(spec, created * SECOND, duration))
    return sorted_pods(pods)
