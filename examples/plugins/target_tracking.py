"""An example autoscaler plugin: keep mean CPU near a target, the simplest target-tracking policy.

Run it with `skenario run examples/plugin.yaml`. A plugin is any class with `start(context)`;
the context (skenario.autoscalers.base.AutoscalerContext) gives it the clock, the pods, the
metrics it asks for by name and the levers. It only ever uses the clock it is given, so the same class runs
against a live cluster's context on the real-time clock.
"""

from __future__ import annotations

import math

SECOND = 1_000_000_000


class TargetTracking:
    """Every `period_s`, set replicas so that mean CPU per pod would be `target` of its request."""

    def __init__(self, target: float = 0.6, period_s: float = 30, min_replicas: int = 1, max_replicas: int = 50):
        self.target = target
        self.period = round(period_s * SECOND)
        self.min_replicas = min_replicas
        self.max_replicas = max_replicas

    def start(self, context) -> None:  # type: ignore[no-untyped-def]
        self.context = context
        context.clock.call_later(self.period, self.tick)

    def tick(self) -> None:
        cpu = self.context.metric("cpu_millicores")  # by pod: the latest mean CPU each reported
        if cpu:
            used = sum(cpu.values())
            per_pod = self.target * self.context.cpu_request
            wanted = math.ceil(used / per_pod) if per_pod else self.context.desired
            self.context.scale_to(max(self.min_replicas, min(self.max_replicas, wanted)))
        self.context.clock.call_later(self.period, self.tick)
