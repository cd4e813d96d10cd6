"""The batch replay file format: a trace of jobs or pods, its nodes, and the scheduler that places them.

```yaml
apiVersion: skenario.dev/v1alpha1
kind: BatchReplay
metadata: {name: sls-capacity}
spec:
  seed: 0
  trace: inputsls.json            # paths are relative to this file
  format: sls
  nodes: nodes-with-resources.json
  capacityScheduler:
    file: capacity-scheduler.xml
    properties:                   # set or override properties of the file (what a sweep varies)
      yarn.scheduler.capacity.root.a.capacity: "60"
```

One of `capacityScheduler`, `fairScheduler` (YARN's, for an SLS trace's jobs) and `kueue` (admission
in front of kube-scheduler) names the queue scheduler; with none, kube-scheduler places the pods
alone (`scheduler`: a file with a scenario's `scheduler` section). `skenario schedule` writes one of
these for every run it keeps, so a stored replay can be run, explained and swept again.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, model_validator

from skenario.scenario.format.base import Spec
from skenario.scenario.format.scenario import MAX_SEED, Metadata
from skenario.scenario.format.units import Duration

TRACE_FORMATS = ("sls", "synth", "openb", "csv")
"""The trace formats `skenario.scheduling.traces` reads (TRACE_KINDS' keys)."""


def _property(value: Any) -> Any:
    """A property's value as Hadoop reads it, text: a number or a boolean written bare is its text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if isinstance(value, int | float) else value


PropertyValue = Annotated[str, BeforeValidator(_property)]


class CapacitySchedulerFile(Spec):
    """YARN's Capacity Scheduler: `capacity-scheduler.xml`, with properties set over it."""

    file: str = Field(min_length=1)
    properties: dict[str, PropertyValue] = Field(default_factory=dict)


class FairSchedulerFile(Spec):
    """YARN's Fair Scheduler: `fair-scheduler.xml`, and `yarn-site.xml`'s switches (preemption)."""

    file: str = Field(min_length=1)
    yarn_site: str | None = None


class KueueFile(Spec):
    """Kueue's manifests (ResourceFlavor, ClusterQueue, LocalQueue, WorkloadPriorityClass) in one file."""

    file: str = Field(min_length=1)


class BatchReplaySpec(Spec):
    seed: int = Field(default=0, ge=0, le=MAX_SEED)
    trace: str = Field(min_length=1)
    format: Literal["sls", "synth", "openb", "csv"] = "csv"
    nodes: str | None = None
    until: Duration | None = Field(default=None, gt=0)
    heartbeat: Duration | None = Field(default=None, gt=0)
    heartbeat_delay: Duration | None = Field(default=None, ge=0)
    hold: bool = False
    scheduler: str | None = None
    capacity_scheduler: CapacitySchedulerFile | None = None
    fair_scheduler: FairSchedulerFile | None = None
    kueue: KueueFile | None = None
    sample_interval: Duration | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _one_scheduler(self) -> BatchReplaySpec:
        given = [
            name
            for name, value in (
                ("capacityScheduler", self.capacity_scheduler),
                ("fairScheduler", self.fair_scheduler),
                ("kueue", self.kueue),
            )
            if value is not None
        ]
        if len(given) > 1:
            raise ValueError(f"give one queue scheduler, not {' and '.join(given)}")
        if self.yarn and self.format not in ("sls", "synth"):
            raise ValueError(
                f"{given[0]} replays YARN jobs: give an SLS trace (format: sls or synth), not {self.format}"
            )
        if self.yarn and (self.scheduler is not None or self.hold or self.heartbeat_delay is not None):
            raise ValueError(f"scheduler, hold and heartbeatDelay are kube-scheduler's: {given[0]} places the jobs")
        return self

    @property
    def yarn(self) -> bool:
        """Whether a YARN scheduler places the trace's jobs (kube-scheduler does otherwise)."""
        return self.capacity_scheduler is not None or self.fair_scheduler is not None


class BatchReplayDocument(Spec):
    """A whole batch replay document."""

    api_version: Literal["skenario.dev/v1alpha1"]
    kind: Literal["BatchReplay"]
    metadata: Metadata
    spec: BatchReplaySpec


BATCH_SHAPE = "a batch replay is a mapping with apiVersion, kind: BatchReplay, metadata and spec (trace, format, ...)"
