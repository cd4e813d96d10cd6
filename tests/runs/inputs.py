"""Every kind of input skenario runs, as test cases: one small file of each, and how to open it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from skenario.runs import TraceOptions

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SCENARIO_DATA = ROOT / "tests" / "scenario" / "data"
SLS = EXAMPLES / "traces" / "sls" / "inputsls.json"
SLS_NODES = EXAMPLES / "traces" / "sls" / "nodes-with-resources.json"

# skenario's own scenarios: every example `skenario run` takes (the others are for `solve` and `schedule --scheduler`).
SCENARIOS = sorted(
    p
    for p in [*EXAMPLES.glob("*.yaml"), *EXAMPLES.glob("compare/*.yaml"), *EXAMPLES.glob("sweep/*.yaml")]
    if p.is_file()
)


@dataclass(frozen=True)
class Input:
    """One input file, the options `open_run` needs for it, and the runner kind it must open as."""

    path: Path
    kind: str
    trace: TraceOptions | None = None

    @property
    def id(self) -> str:
        return str(self.path.relative_to(ROOT))


INPUTS = (
    *(Input(p, "scenario") for p in SCENARIOS),
    Input(EXAMPLES / "kep140" / "taint-and-delete.yaml", "kep140"),
    Input(EXAMPLES / "ksim" / "recording.jsonl", "kep140"),
    Input(SCENARIO_DATA / "ksim-export.json", "kep140"),
    Input(SLS, "trace", TraceOptions(kind="sls", nodes=SLS_NODES)),
)
