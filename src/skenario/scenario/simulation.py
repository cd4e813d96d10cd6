"""A Scenario wired into an Environment and a ClusterModel, ready to run."""

from __future__ import annotations

from collections.abc import Callable

from skenario.core.environment import Environment
from skenario.core.random import RandomStreams, sampler
from skenario.model.cluster import ClusterModel, WorkloadConfig
from skenario.results.summary import Summary, summarize
from skenario.scenario.schema import ConstantTraffic, Scenario
from skenario.workloads.patterns import constant_arrivals, poisson_arrivals


class Simulation:
    """One run of one scenario. Deterministic: the same scenario and seed give the same Summary."""

    def __init__(self, scenario: Scenario, *, seed: int | None = None) -> None:
        self.scenario = scenario
        spec = scenario.spec
        self.seed = spec.seed if seed is None else seed
        self.streams = RandomStreams(self.seed)
        self.env = Environment(halt_at=spec.duration)
        traffic = spec.traffic
        if isinstance(traffic, ConstantTraffic):
            arrivals = constant_arrivals(traffic.rate, 0, spec.duration)
        else:
            arrivals = poisson_arrivals(traffic.rate, 0, spec.duration, self.streams.generator("traffic"))
        workload = spec.workload
        service = sampler(workload.service_distribution(), self.streams.generator("service-time"))
        self.model = ClusterModel(
            self.env,
            WorkloadConfig(workload.replicas, workload.concurrency, workload.queue_capacity),
            arrivals,
            service,
        )

    def run(self, *, steps: int = 1, progress: Callable[[int], object] | None = None) -> Summary:
        """Run to the halt. With `steps` > 1 the run pauses that many times to call `progress(now)`."""
        halt = self.env.halt_at
        for k in range(1, steps):
            self.env.run(until=halt * k // steps)
            if progress is not None:
                progress(self.env.now())
        self.env.run()
        if progress is not None:
            progress(self.env.now())
        return self.summary()

    def summary(self) -> Summary:
        return summarize(self.scenario.metadata.name, self.seed, self.env, self.model)
