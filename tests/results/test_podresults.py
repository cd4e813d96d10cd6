"""KEP-140's results file written from attempts spilled as they happen: the same document as one built
in memory, with or without each attempt's plugin results."""

from __future__ import annotations

import json
from pathlib import Path

from skenario.cli.scheduling import write_results
from skenario.core.time import SECOND
from skenario.results.podresults import ResultsFile
from skenario.scheduling.controller import SchedulerSettings
from skenario.scheduling.objects import NodeSpec, PodSpec
from skenario.scheduling.replay import BatchReplay
from skenario.scheduling.traces import TracePod

GIB = 1024**3


def _trace() -> tuple[list[NodeSpec], list[TracePod]]:
    """Three nodes and pods that wait, get preempted and preempt: every kind of attempt and event."""
    nodes = [NodeSpec(f"n{i}", cpu=2000, memory=4 * GIB) for i in range(3)]
    pods = [
        TracePod(PodSpec(f"low-{k}", cpu=1500, memory=GIB, priority=0), (1 + k) * SECOND, 30 * SECOND) for k in range(5)
    ]
    pods += [
        TracePod(PodSpec(f"high-{k}", cpu=1500, memory=GIB, priority=10), (8 + k) * SECOND, 10 * SECOND)
        for k in range(2)
    ]
    return nodes, pods


def _document(tmp_path: Path, name: str, keep: str, spill: bool) -> dict[str, object]:
    nodes, pods = _trace()
    replay = BatchReplay(nodes, pods, settings=SchedulerSettings(plugin_results=keep), seed=3)  # type: ignore[arg-type]
    path = tmp_path / name
    if spill:
        with ResultsFile(path) as spilled:
            spilled.follow(replay.controller)
            replay.run()
            write_results(replay.controller, None, path, spilled)
    else:
        replay.run()
        write_results(replay.controller, None, path)
    document: dict[str, object] = json.loads(path.read_text())
    return document


def test_a_spilled_document_reads_back_equal_to_one_built_in_memory(tmp_path: Path) -> None:
    in_memory = _document(tmp_path, "memory.json", "all", spill=False)
    spilled = _document(tmp_path, "spilled.json", "all", spill=True)
    assert spilled == in_memory
    pods = in_memory["pods"]
    assert isinstance(pods, list)
    kinds = {event["kind"] for event in in_memory["timeline"]}  # type: ignore[attr-defined]
    assert {"PodUnscheduled", "PodPreempted", "PodScheduled"} <= kinds
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memory.json", "spilled.json"]  # no spill left


def test_attempts_without_plugin_results_are_listed_with_those_fields_null(tmp_path: Path) -> None:
    full = _document(tmp_path, "all.json", "all", spill=True)
    light = _document(tmp_path, "unschedulable.json", "unschedulable", spill=True)
    for whole, part in zip(full["pods"], light["pods"], strict=True):  # type: ignore[call-overload]
        assert len(part["scheduleResult"]) == len(whole["scheduleResult"])
        for a, b in zip(whole["scheduleResult"], part["scheduleResult"], strict=True):
            for key in ("pod", "at", "allCandidateNodes", "selectedNode", "nominatedNode", "message"):
                assert b[key] == a[key]
            if a["selectedNode"] is None:  # unschedulable: kept whole
                assert b == a
            else:
                assert b["pluginResults"] is None and b["allFilteredNodes"] is None
                assert b["feasibleNodes"] == len(a["allFilteredNodes"])
