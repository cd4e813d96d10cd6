"""The timeline's decision details: plain JSON-ready dicts, whatever record an autoscaler keeps."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field

from skenario.recording.timeline import as_detail


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
