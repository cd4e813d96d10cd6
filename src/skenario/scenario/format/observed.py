"""The `spec.observed` section: what a real cluster recorded, for `skenario replay` and `calibrate` to compare.

```yaml
observed:
  replicas: {file: runs/taskmanager.csv}             # the replica count the real autoscaler produced
  cpu: {file: runs/CPU_load.csv, scale: 1}           # CPU used over requested, 0..1 (percent: scale 0.01)
  lag: {file: runs/lag.csv, scale: 0.0002, gaps: hold}  # records, in messages of 5000
  warmUp: 5m                                         # left out of the comparison
```

Each series is read as the `observed` traffic reads its file (Prometheus query_range JSON, or a
timestamp,__name__,value CSV); simulated time 0 is the first sample of the load the scenario's
`observed` traffic replays, or `origin` (Unix seconds) when set.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from skenario.core.time import SECOND
from skenario.scenario.format.base import Spec
from skenario.scenario.format.units import Duration


class ObservedSeries(Spec):
    """One recorded series: its file, its name there, and how to read it in skenario's units."""

    file: str = Field(min_length=1, description="A relative path is relative to the scenario file's folder.")
    series: str | None = Field(
        None, min_length=1, description="The series' name in the file; may be left out when the file holds one."
    )
    scale: float = Field(
        1.0,
        gt=0,
        allow_inf_nan=False,
        description="Multiplies each value into skenario's unit (CPU as a fraction of the request, lag in messages).",
    )
    gaps: Literal["refuse", "hold", "interpolate", "zero"] = Field(
        "refuse", description="How a missing or NaN sample is filled; refuse makes one an error."
    )


class Observed(Spec):
    """What the real cluster recorded while it ran the scenario's workload."""

    replicas: ObservedSeries = Field(description="The replica count its autoscaler produced (ready pods).")
    cpu: ObservedSeries | None = Field(None, description="CPU used over requested, averaged over the pods (0..1).")
    lag: ObservedSeries | None = Field(None, description="A stream's consumer lag, in the scenario's messages.")
    latency: ObservedSeries | None = Field(None, description="Latency in seconds.")
    origin: float | None = Field(
        None,
        description="The Unix time (seconds) that is simulated time 0; absent: the first sample of the series the "
        "scenario's observed traffic replays, else of the replica series.",
    )
    warm_up: Duration = Field(0, ge=0, description="Left out of the comparison at the start.")
    tolerance: Duration = Field(
        120 * SECOND, gt=0, description="How far apart an observed and a simulated scale event may be to match."
    )
