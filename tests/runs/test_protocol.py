"""`Runnable`: every runner `open_run` gives meets it, and their summaries share one shape."""

from __future__ import annotations

import json
from typing import Any

import pytest

from skenario.core.time import SECOND
from skenario.runs import CORE, Runnable, describe, open_run
from tests.runs.inputs import INPUTS, Input

KEEPING = {"scenario": "streamed", "kep140": "whole", "trace": "none"}
"""How each kind is kept, as skenario.runs.protocol's table says."""

STRETCH = 60 * SECOND
"""How far a scenario is run here: the protocol is under test, not the example (tests/test_examples.py runs those)."""


def opened(case: Input) -> Runnable:
    return open_run(case.path, trace=case.trace)


@pytest.mark.parametrize("case", INPUTS, ids=lambda case: case.id)
def test_every_runner_meets_the_protocol_and_reads_the_same_way(case: Input) -> None:
    run = opened(case)
    assert isinstance(run, Runnable)
    assert (run.kind, run.keeping) == (case.kind, KEEPING[case.kind])
    assert run.phase == "Pending"
    heard: list[int] = []
    run.run(STRETCH if case.kind == "scenario" else None, steps=4, progress=heard.append)
    assert run.phase in ("Paused", "Completed")
    assert heard and heard == sorted(heard) and heard[-1] == run.simulated()
    described = describe(run)
    assert tuple(described) == CORE
    assert (described["kind"], described["phase"], described["simulated_ns"]) == (
        case.kind,
        str(run.phase),
        run.simulated(),
    )
    json.dumps(described)  # plain data, as every front end prints or sends it
    json.dumps(run.documents())
    assert len(run.timeline) >= 0


@pytest.mark.parametrize("case", INPUTS, ids=lambda case: case.id)
def test_what_the_store_keeps_is_the_run_as_it_stands(case: Input) -> None:
    run = opened(case)
    if run.keeping == "none":
        assert run.record() is None
        return
    run.run(STRETCH if case.kind == "scenario" else None)
    record: Any = run.record()
    digest, _summary = record.summary_record()
    assert (str(record.phase), record.message, record.simulated_ns) == (str(run.phase), run.message, run.simulated())
    assert set(record.documents()) == set(run.documents())
    if case.kind == "scenario":
        assert digest == run.summary().as_dict()["digest"]
        assert all(row["time_ns"] <= run.simulated() for row in record.series_rows(0))
    else:
        assert digest == run.digest()  # type: ignore[attr-defined]


def test_a_stop_from_outside_marks_every_kind_failed_with_its_reason() -> None:
    for case in (INPUTS[0], *(c for c in INPUTS if c.kind != "scenario")):
        run = opened(case)
        run.fail("stopped by signal SIGTERM")
        assert (str(run.phase), run.message) == ("Failed", "stopped by signal SIGTERM")
