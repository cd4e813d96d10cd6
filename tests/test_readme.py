"""The README's code examples run and print what their comments say."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def test_kernel_tour_prints_what_the_readme_says() -> None:
    text = README.read_text()
    tour = text[text.index("## A tour of the kernel") :]
    code = re.search(r"```python\n(.*?)```", tour, re.S)
    assert code is not None
    source = code.group(1)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(source, "README.md", "exec"), {})
    first_line = printed.getvalue().splitlines()[0]
    promised = re.search(r"print\(served\.count\(\), env\.movements_ignored\)\s+# (.*)", source)
    assert promised is not None
    assert first_line == promised.group(1).strip()
    # The two ignored movements carry the reasons the comments give.
    assert "late scheduled_after_halt" in printed.getvalue()
    assert "serve from_stock_empty" in printed.getvalue()


def _run_autoscaler_examples() -> list[str]:
    text = README.read_text()
    section = text[text.index("## Autoscalers") : text.index("## Timelines: events during a run")]
    outputs = []
    for code in re.findall(r"```python\n(.*?)```", section, re.S):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(code, "README.md", "exec"), {})
        outputs.append(printed.getvalue())
    return outputs


def test_calculator_examples_print_what_the_readme_says() -> None:
    hpa, vpa, kpa = _run_autoscaler_examples()
    # The comment's formula, independently: ceil(3 pods × 90% used / 60% target) = 5.
    assert hpa.split() == ["5"]
    # VPA: the p90 of a steady 300m is the end of 300m's histogram bucket (buckets grow by 5%),
    # plus the 15% margin; eight days of samples give confidence 8, so the upper bound is the
    # target × (1 + 1/8) and the lower the target × (1 + 0.001/8)^-2, each truncated to whole millicores.
    target, lower, upper = (int(x) for x in vpa.split())
    assert 300 * 1.15 <= target <= 300 * 1.05 * 1.15
    assert upper == int(target * (1 + 1 / 8))
    assert lower == int(target * (1 + 0.001 / 8) ** -2)
    # KPA: target 10 at the default 70% utilisation is 7 per pod; ceil(35 / 7) = 5 pods wanted, and
    # 5 / 2 ready = 2.5 is over the 200% panic threshold.
    assert kpa.split() == ["5", "True"]


def test_phases_example_prints_what_the_readme_says(monkeypatch: pytest.MonkeyPatch) -> None:
    text = README.read_text()
    section = text[text.index("**Phases, from Python.**") : text.index("## Results: the run store")]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    source = code.group(1)
    monkeypatch.chdir(README.parent)  # the example's paths are relative to the repository
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(source, "README.md", "exec"), {})
    lines = printed.getvalue().splitlines()
    promised = re.findall(r'print\(f"\{simulation\.phase\}: \{simulation\.message\}"\)\s+# (.*)', source)
    assert [lines[0], lines[2]] == promised
    assert int(lines[1]) >= 2  # the HPA's minReplicas holds at least two ready replicas


def test_queueing_example_prints_what_the_readme_says() -> None:
    text = README.read_text()
    section = text[text.index("## Queueing theory") : text.index("## A tour of the kernel")]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code.group(1), "README.md", "exec"), {})
    preemptive, shadow = (float(x) for x in printed.getvalue().split())
    # Independently: preemptive-resume M/M/1, low class (S = 1, E[S^2] = 2, rho = 0.3 + 0.4):
    # T = S / (1 - 0.3) + (0.3 + 0.4) * 2 / 2 / ((1 - 0.3) * (1 - 0.7)); FCFS: S / (1 - 0.7).
    assert preemptive == pytest.approx(1 / 0.7 + 0.7 / (0.7 * 0.3))
    assert shadow == pytest.approx(1 / 0.3)
    for number in (preemptive, shadow):  # and the comments round them as printed
        assert f"{number:.4f}" in code.group(1)


def test_the_python_api_example_prints_what_the_readme_says(monkeypatch: pytest.MonkeyPatch) -> None:
    text = README.read_text()
    section = text[text.index("### From Python") : text.index("## Queueing theory")]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    monkeypatch.chdir(README.parent)  # the example's paths are relative to the repository
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code.group(1), "README.md", "exec"), {})
    lines = printed.getvalue().splitlines()
    # The sweep's table has its two points; the paired difference is certain; the study ran its 6 trials
    # and its best setting is in the searched range.
    assert [line.split()[1] for line in lines[1:3]] == ["1", "2"]
    assert lines[3] == "True"
    assert lines[4] == "6 True"
    assert lines[5].split() == ["trial", "replica_hours", "p99_ms", "slo_compliance_low"]
