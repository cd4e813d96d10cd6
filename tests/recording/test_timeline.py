"""The timeline's decision details: plain JSON-ready dicts, whatever record an autoscaler keeps."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field

import pytest

from skenario.recording.timeline import Operation, Timeline, as_detail


class Mode(enum.Enum):
    PROXY = "Proxy"


@dataclass
class Inner:
    value: float
    mode: Mode


@dataclass
class Record:
    at: int
    rule: str | None
    inner: Inner
    pods: tuple[str, ...]
    metrics: dict[str, dict[str, float | None]] = field(default_factory=dict)


def test_a_record_becomes_plain_data_field_by_field() -> None:
    record = Record(5, None, Inner(1.5, Mode.PROXY), ("a", "b"), {"cpu": {"usage": 2.0, "missing": None}})
    detail = as_detail(record)
    assert detail == {
        "at": 5,
        "rule": None,
        "inner": {"value": 1.5, "mode": "Proxy"},
        "pods": ["a", "b"],
        "metrics": {"cpu": {"usage": 2.0, "missing": None}},
    }
    assert json.loads(json.dumps(detail)) == detail
    record.metrics["cpu"]["usage"] = 3.0  # the detail is a copy: the record may change after
    assert detail["metrics"]["cpu"]["usage"] == 2.0


def test_mappings_and_other_values() -> None:
    assert as_detail({"at": 1, 2: Mode.PROXY}) == {"at": 1, "2": "Proxy"}
    assert as_detail(3) == {"value": "3"}


def test_entries_let_go_keep_their_numbers() -> None:
    """After the first two of five entries are let go, `since(2)` is still the last three and `len` still five;
    entries before those kept cannot be read."""
    timeline = Timeline()
    for at in range(5):
        timeline.add(at, "web", Operation.DECISION, "workload", f"tick {at}", {})
    timeline.forget(2)
    assert len(timeline) == 5 and [entry[0] for entry in timeline.since(2)] == [2, 3, 4]
    assert [entry[0] for entry in timeline.since(4)] == [4]
    timeline.forget(1)  # already gone: nothing changes
    assert [entry[0] for entry in timeline.entries()] == [2, 3, 4]
    timeline.forget(9)  # no more than there are
    assert len(timeline) == 5 and timeline.entries() == []
    with pytest.raises(ValueError, match="let go"):
        timeline.since(1)
