"""A calibrated scenario's header, as `skenario calibrate` writes it and the dashboard reads it back."""

from __future__ import annotations

from pathlib import Path

import yaml

from skenario.sweeps.api import calibrated_header, read_calibrated_header
from skenario.sweeps.plan import Template

CALIBRATION = Path(__file__).resolve().parents[2] / "examples" / "calibration"


def test_the_header_reads_back_what_was_written() -> None:
    training = [Template.from_file(CALIBRATION / f"flink-hpa-{n}.yaml") for n in (50, 90)]
    held = [Template.from_file(CALIBRATION / "flink-hpa-70.yaml")]
    best = {"workload.request.cpuTime": "41ms", "workload.launch.containerStart": "12s"}
    read = read_calibrated_header(calibrated_header(held[0], training, held, best) + "apiVersion: x\n")
    assert read is not None
    assert read.file == "flink-hpa-70.yaml"
    assert read.values == best
    assert (read.fitted_on, read.held_out) == (["flink-hpa-50.yaml", "flink-hpa-90.yaml"], ["flink-hpa-70.yaml"])
    assert read_calibrated_header(calibrated_header(held[0], training, [], best)).held_out == []  # type: ignore[union-attr]


def test_an_example_calibrated_files_header_says_the_values_its_body_holds() -> None:
    text = (CALIBRATION / "flink-hpa-70.calibrated.yaml").read_text()
    read = read_calibrated_header(text)
    assert read is not None
    body = yaml.safe_load(text)["spec"]["workload"]
    assert read.values["workload.request.cpuTime"] == body["request"]["cpuTime"]
    assert read.values["workload.launch.containerStart"] == body["launch"]["containerStart"]
    assert read_calibrated_header((CALIBRATION / "flink-hpa-70.yaml").read_text()) is None
