"""The same plugin class, unchanged, on the wall clock: a few seconds of a live-looking loop.

    python examples/plugins/realtime_demo.py

`TargetTracking` (examples/plugins/target_tracking.py) only knows the context it is given. Here
the context is a stand-in for a live cluster: a `RealtimeClock` (10x real time), pods whose CPU
usage follows a rising load, and a `scale_to` that prints. Against a real cluster the context
would list pods and read metrics-server instead; the plugin would not change.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from target_tracking import TargetTracking

from skenario.core.rt import RealtimeClock

SECOND = 1_000_000_000


class LiveLookingContext:
    """Just enough of skenario.autoscalers.base.AutoscalerContext for the plugin."""

    def __init__(self, clock: RealtimeClock, load_cores: Callable[[float], float]) -> None:
        self.clock = clock
        self.cpu_request = 500
        self.desired = 2
        self._load = load_cores
        self.log: list[tuple[float, int, int]] = []

    def metric(self, name: str) -> dict[int, float]:
        assert name == "cpu_millicores", "the only metric this stand-in serves"
        seconds = self.clock.now() / SECOND
        per_pod = self._load(seconds) * 1000 / self.desired
        return dict.fromkeys(range(self.desired), per_pod)

    def scale_to(self, replicas: int) -> None:
        seconds = self.clock.now() / SECOND
        print(f"t={seconds:5.1f}s  load {self._load(seconds):4.2f} cores  replicas {self.desired} -> {replicas}")
        self.log.append((seconds, self.desired, replicas))
        self.desired = replicas


def main(wall_seconds: float = 3.0, speed: float = 10.0) -> LiveLookingContext:
    clock = RealtimeClock(speed=speed)
    context = LiveLookingContext(clock, lambda t: 1 + 2 * (1 - math.exp(-t / 10)))
    plugin = TargetTracking(target=0.6, period_s=2, max_replicas=20)
    plugin.start(context)
    clock.run(until=round(wall_seconds * speed * SECOND))
    return context


if __name__ == "__main__":
    main()
