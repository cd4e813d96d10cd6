"""Everything one run produced, as pandas DataFrames: the common input of analysis, plots and reports.

A RunData comes from a finished (or paused) Simulation in memory, or from the run store; the two
are the same shape, so whatever reads one reads the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skenario.core.time import MILLISECOND, SECOND
from skenario.errors import SkenarioError
from skenario.recording.recorder import LIFECYCLE_COLUMNS, REPLICA_COLUMNS
from skenario.scenario.loader import parse_scenario
from skenario.scenario.simulation import Simulation

if TYPE_CHECKING:
    import pandas as pd

# The results timeline: scenario events and what they did, and autoscaler decisions with their inputs.
TIMELINE_COLUMNS = ("time_ns", "source", "operation", "target", "message", "detail")


@dataclass(frozen=True)
class RunData:
    """One run's results.

    - `series`: one row per recording interval, indexed by `time_s` (Recorder columns, plus a
      `failed_<reason>` column per failure reason seen).
    - `replica_series`: one row per live replica per interval (REPLICA_COLUMNS plus `time_s`).
    - `replicas`: one lifecycle record per replica ever made (LIFECYCLE_COLUMNS).
    - `timeline`: TIMELINE_COLUMNS, in time order; `operation` is Create, Patch, Delete or Done
      for scenario events and Decision for an autoscaler's; `detail` is a dict.
    - `documents`: plain JSON data by name (`Simulation.documents`): `latency_histogram`, every completed
      request's latency (`LatencyHistogram.as_document`; absent from runs stored before it was kept, and
      from batch, KEP-140 and sweep runs); with a cluster, `scheduling` (the summary), the `pods`,
      `nodes` and `attempts` tables as lists of records, and `kep140` (KEP-140's per-pod results with
      every attempt's plugin results).
    - `damaged`: one line per stored row that could not be read back (not JSON, or not the shape
      written), which the rest is read without.
    """

    id: int | None
    name: str
    seed: int
    phase: str
    message: str | None
    digest: str | None
    simulated_ns: int
    summary: dict[str, Any]
    series: pd.DataFrame
    replica_series: pd.DataFrame
    replicas: pd.DataFrame
    timeline: pd.DataFrame
    scenario: str
    documents: dict[str, Any] = field(default_factory=dict)
    damaged: list[str] = field(default_factory=list)

    @classmethod
    def from_simulation(cls, simulation: Simulation) -> RunData:
        """The results of a simulation in this process, as far as it has run."""
        import pandas as pd

        recorder = simulation.recorder
        summary = simulation.summary()
        return cls(
            id=None,
            name=simulation.scenario.metadata.name,
            seed=simulation.seed,
            phase=simulation.phase.value,
            message=simulation.message,
            digest=summary.digest,
            simulated_ns=simulation.env.now(),
            summary=summary.as_dict(),
            series=recorder.frame(),
            replica_series=replica_frame(recorder.replica_columns),
            replicas=pd.DataFrame(recorder.lifecycles(), columns=list(LIFECYCLE_COLUMNS)),
            timeline=timeline_frame(simulation.timeline.entries()),
            scenario=simulation.scenario_text,
            documents=simulation.documents(),
        )

    def table(self, name: str) -> pd.DataFrame:
        """A document that is a list of records (`pods`, `nodes`, `attempts`) as a DataFrame; empty if absent."""
        import pandas as pd

        records = self.documents.get(name)
        return pd.DataFrame(records if isinstance(records, list) else [])


def stated_objectives(run: RunData) -> dict[str, Any] | None:
    """The run's own `spec.slo`, as `analysis.slo` arguments; None if it states none or no longer parses."""
    try:
        slo = parse_scenario(run.scenario, f"run {run.id}").spec.slo
    except SkenarioError:
        return None
    if slo is None:
        return None
    return {"latency_ms": slo.latency / MILLISECOND, "percentile": slo.percentile, "error_rate": slo.error_rate}


def replica_frame(columns: dict[str, list[Any]]) -> pd.DataFrame:
    import pandas as pd

    frame = pd.DataFrame({name: columns[name] for name in REPLICA_COLUMNS})
    frame["time_s"] = frame["time_ns"] / SECOND
    return frame


def timeline_frame(entries: list[tuple[Any, ...]]) -> pd.DataFrame:
    """Entries in time order; at one time, in the order they were made."""
    import pandas as pd

    frame = pd.DataFrame(entries, columns=list(TIMELINE_COLUMNS))
    return frame.sort_values("time_ns", kind="stable").reset_index(drop=True)
