"""`open_run`: every input kind opened as its runner, and every kind of bad input one line naming the file."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from skenario.cli import cli
from skenario.errors import SkenarioError
from skenario.runs import KepRun, TraceOptions, execute, open_run
from skenario.scenario import io
from skenario.scenario.simulation import Simulation
from skenario.scheduling.replay import BatchReplay
from tests.runs.inputs import EXAMPLES, INPUTS, SCENARIO_DATA, SLS, Input

RUNNERS = {"scenario": Simulation, "kep140": KepRun, "trace": BatchReplay}


@pytest.mark.parametrize("case", INPUTS, ids=lambda case: case.id)
def test_each_input_opens_as_its_kinds_runner(case: Input) -> None:
    run = open_run(case.path, trace=case.trace)
    assert type(run) is RUNNERS[case.kind]


def test_a_scenarios_text_runs_as_its_file_does() -> None:
    """The quickstart names no other file, so its text alone is the same run, to the digest."""
    file = EXAMPLES / "quickstart.yaml"
    by_file, by_text = open_run(file), open_run(file.read_text())
    assert isinstance(by_file, Simulation) and isinstance(by_text, Simulation)
    by_file.run("5m")
    by_text.run("5m")
    assert by_file.summary().digest == by_text.summary().digest


def test_a_csv_file_is_read_as_a_trace_without_being_told(tmp_path: Path) -> None:
    """A .csv is taken for skenario's pod trace (`schedule`'s default format): here it lacks its node file."""
    trace = tmp_path / "pods.csv"
    trace.write_text("name,created,cpu,memory,duration\nweb-0,0,500m,1Gi,60\n")
    with pytest.raises(SkenarioError, match="no nodes"):
        open_run(trace)


def _edit(source: Path, edit: Callable[[str], str]) -> Callable[[Path], Path]:
    def write(folder: Path) -> Path:
        target = folder / f"bad{source.suffix}"
        target.write_text(edit(source.read_text()))
        return target

    return write


def _export_with_a_bad_quantity(folder: Path) -> Path:
    export = json.loads((SCENARIO_DATA / "ksim-export.json").read_text())
    export["pods"][0]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "lots"}}
    target = folder / "bad.json"
    target.write_text(json.dumps(export))
    return target


def _recording_with_a_bad_event(folder: Path) -> Path:
    lines = (EXAMPLES / "ksim" / "recording.jsonl").read_text().splitlines()
    lines[1] = lines[1].replace('"event":"Add"', '"event":"Explode"')
    target = folder / "bad.jsonl"
    target.write_text("\n".join(lines) + "\n")
    return target


def _bytes(content: bytes) -> Callable[[Path], Path]:
    def write(folder: Path) -> Path:
        target = folder / "bad.yaml"
        target.write_bytes(content)
        return target

    return write


# Each bad input, and what its one line must name besides the file.
BAD = {
    "scenario: a field's value": (
        _edit(EXAMPLES / "quickstart.yaml", lambda t: t.replace("duration: 30m", "duration: ten minutes")),
        "spec.duration",
    ),
    "KEP-140: an operation": (
        _edit(EXAMPLES / "kep140" / "taint-and-delete.yaml", lambda t: t.replace("operation: Done", "operation: X")),
        "spec.events.6.operation",
    ),
    "KEP-140: a step's object, found by running": (
        _edit(
            EXAMPLES / "kep140" / "taint-and-delete.yaml",
            lambda t: t.replace("objectMeta: {name: a}", "objectMeta: {name: nowhere}"),
        ),
        "nowhere",
    ),
    "kube-scheduler-simulator recording: an event": (_recording_with_a_bad_event, "records.1.event"),
    "kube-scheduler-simulator export: a quantity": (_export_with_a_bad_quantity, "'lots'"),
    "an empty file": (_bytes(b""), "empty"),
    "not text": (_bytes(bytes(range(256))), "cannot read"),
    "no file": (lambda folder: folder / "missing.yaml", "no such file"),
}


@pytest.mark.parametrize("name", BAD)
def test_bad_input_is_one_error_naming_the_file_and_nothing_is_kept(name: str, tmp_path: Path) -> None:
    make, named = BAD[name]
    bad = make(tmp_path)
    with pytest.raises(SkenarioError) as raised:
        run = open_run(bad)
        execute(run, None)  # a KEP-140 step's mistake is found only by running it
    assert bad.name in str(raised.value) and named in str(raised.value)
    store = tmp_path / "store"
    result = CliRunner().invoke(cli, ["run", str(bad), "--store", str(store), "--no-progress"])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and bad.name in result.stderr and named in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert not store.exists()


def test_a_trace_without_nodes_is_one_error_naming_the_file() -> None:
    with pytest.raises(SkenarioError, match="no nodes") as raised:
        open_run(SLS, trace=TraceOptions(kind="sls"))
    assert raised.value.file == str(SLS)
    result = CliRunner().invoke(cli, ["schedule", str(SLS), "--format", "sls"])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


@pytest.mark.parametrize("name", ["quickstart.yaml", "kep140/taint-and-delete.yaml"])
def test_a_file_is_read_as_yaml_once_to_tell_its_kind_and_to_open_it(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PyYAML reads about 1 MB/s: telling an input's kind must not read it again (files it names aside)."""
    file = EXAMPLES / name
    text = file.read_text()
    reads: list[str] = []

    class Counting(io._Loader):
        def __init__(self, stream: str) -> None:
            reads.append(stream)
            super().__init__(stream)

    monkeypatch.setattr(io, "_Loader", Counting)
    open_run(file)
    assert reads.count(text) == 1


def test_a_kep140_object_whose_metadata_is_no_mapping_is_one_line_at_its_field(tmp_path: Path) -> None:
    text = (EXAMPLES / "kep140" / "taint-and-delete.yaml").read_text()
    marked = "metadata: {name: a, labels: {topology.kubernetes.io/zone: z1}}"
    assert marked in text
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace(marked, "metadata: 5"))
    result = CliRunner().invoke(cli, ["run", str(bad), "--no-store"])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "createOperation.object.metadata" in result.stderr and "(value: 5)" in result.stderr
