"""A Scenario wired into an Environment, a ClusterModel and a Recorder, ready to run."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from skenario.autoscalers.base import ClusterContext
from skenario.core.environment import Environment
from skenario.core.random import RandomStreams
from skenario.model.cluster import ClusterModel
from skenario.results.recorder import Recorder
from skenario.results.summary import Summary, summarize
from skenario.scenario.autoscaling import build_autoscalers
from skenario.scenario.schema import Scenario
from skenario.scenario.traffic import build_arrivals

# A run makes an object or two per request that dies young and is never in a reference cycle, so
# Python's default of a collection every 700 allocations is wasted work: 5-8% of a run.
_RUN_GC_THRESHOLD = 100_000


@contextmanager
def _young_garbage_tolerated() -> Iterator[None]:
    """Collect the youngest generation less often while a run is under way, then restore."""
    threshold = gc.get_threshold()
    gc.set_threshold(max(threshold[0], _RUN_GC_THRESHOLD), *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)


class Simulation:
    """One run of one scenario. Deterministic: the same scenario and seed give the same Summary.

    `base_dir` is where relative paths in the scenario (trace files) are found: the scenario
    file's directory when it was loaded from a file.
    """

    def __init__(self, scenario: Scenario, *, seed: int | None = None, base_dir: Path | None = None) -> None:
        self.scenario = scenario
        spec = scenario.spec.with_deployment(base_dir or Path.cwd())
        self.seed = spec.seed if seed is None else seed
        self.streams = RandomStreams(self.seed)
        self.env = Environment(halt_at=spec.duration)
        arrivals = build_arrivals(
            spec.traffic, duration=spec.duration, streams=self.streams, base_dir=base_dir or Path.cwd()
        )
        self.model = ClusterModel(self.env, spec.cluster_spec(), arrivals, self.streams)
        self.recorder = Recorder(self.env, self.model, spec.recording.interval)
        self.autoscalers = build_autoscalers(spec.autoscalers, base_dir or Path.cwd())
        context = ClusterContext(self.model)
        for autoscaler in self.autoscalers:
            autoscaler.start(context)

    def run(self, *, steps: int = 1, progress: Callable[[int], object] | None = None) -> Summary:
        """Run to the halt. With `steps` > 1 the run pauses that many times to call `progress(now)`."""
        halt = self.env.halt_at
        with _young_garbage_tolerated():
            for k in range(1, steps):
                self.env.run(until=halt * k // steps)
                if progress is not None:
                    progress(self.env.now())
            self.env.run()
        self.recorder.record()
        if progress is not None:
            progress(self.env.now())
        return self.summary()

    def summary(self) -> Summary:
        return summarize(self.scenario.metadata.name, self.seed, self.env, self.model)
