"""A CPU limit enforced as the kernel does it: a CFS quota of CPU time per period, then a stall.

The smooth model (the default) holds a limited pod to `limit` cores at every instant. The kernel
does something else (CFS bandwidth control, as the kubelet sets it with `MilliCPUToQuota`): in
each period (100 ms by default) the pod's threads may run on as many cores as they like until
they have used `limit × period` of CPU time, then every one of them stalls until the period ends.

    limit 400m, period 100 ms, 4 requests running at once on an idle node:
    the quota of 40 ms of CPU is spent in 10 ms (4 cores), then 90 ms of stall: each request
    gets 10 ms of CPU per period, and a request needing 100 ms finishes after 910 ms, where the
    smooth cap (0.1 core each) gives 1000 ms. A lone request of 30 ms under the same limit runs
    at a full core and takes 30 ms, where the smooth cap gives 75 ms.

So for the same average usage, short bursts go faster and long or parallel ones stall: the tail
of the latency distribution is the kernel's, not the smooth cap's. `CfsQuota` drives one pod's
processor-sharing CPU: it owns its capacity (`share`), gives it the node's cores while quota is
left and 0 once it is spent, and counts periods and throttled periods as `cpu.stat` does
(`nr_periods`, `nr_throttled`). Periods start at multiples of the period from time 0.
"""

from __future__ import annotations

from typing import Any

from skenario.core.environment import Environment
from skenario.model.cpu.sharing import ProcessorSharingCPU

DEFAULT_PERIOD_NS = 100_000_000
"""The kubelet's `cpuCFSQuotaPeriod` default: 100 ms."""

MIN_QUOTA_NS = 1_000_000
"""`MinQuotaPeriod`: a quota is never below 1 ms of CPU per period (limits under 10m act as 10m)."""


class CfsQuota:
    """A pod's CPU quota per period over its processor-sharing CPU, on a node of `node_millicores` it has alone."""

    __slots__ = (
        "_counted",
        "_cpu",
        "_env",
        "_last",
        "_period_start",
        "_rate",
        "_used",
        "_version",
        "cores",
        "period",
        "periods",
        "quota",
        "throttled",
        "throttled_periods",
    )

    def __init__(
        self,
        env: Environment,
        cpu: ProcessorSharingCPU[Any],
        limit_millicores: int,
        node_millicores: int,
        period: int = DEFAULT_PERIOD_NS,
    ) -> None:
        if period <= 0:
            raise ValueError(f"a CFS period must be > 0 ns, got {period}")
        self._env = env
        self._cpu = cpu
        self.period = period
        self.quota = max(limit_millicores * period / 1000, MIN_QUOTA_NS)  # core-ns of CPU per period
        self.cores = node_millicores / 1000  # what its threads may use while quota is left
        self.throttled = False
        self.periods = 0  # periods in which it ran (nr_periods)
        self.throttled_periods = 0  # periods in which it spent its quota (nr_throttled)
        self._period_start = env.now() // period * period
        self._used = 0.0  # core-ns used in the current period
        self._rate = 0.0  # cores in use now
        self._last = env.now()
        self._version = 0
        self._counted = -1  # start of the last period counted in `periods`
        cpu.set_cores(self.cores)
        cpu.share(self)

    def demand_changed(self, cpu: object) -> None:
        """A request started or stopped its CPU phase: account what ran, and plan the next change."""
        self._account()
        self._rate = 0.0 if self.throttled else min(float(self._cpu.in_service), self.cores)
        self._plan()

    def _count(self) -> None:
        """nr_periods: a period counts once the pod has run in it."""
        if (self._rate > 0 or self._used > 0) and self._counted != self._period_start:
            self._counted = self._period_start
            self.periods += 1

    def _account(self) -> None:
        """Bring the period's usage up to now; a period that ended since starts afresh (and lifts a stall)."""
        now = self._env.now()
        end = self._period_start + self.period
        if now >= end:
            start = now // self.period * self.period
            self._period_start = start
            self._used = self._rate * (now - start)  # the rate has not changed since `_last` < start
            if self.throttled:
                self.throttled = False
                self._cpu.set_cores(self.cores)
                self._rate = min(float(self._cpu.in_service), self.cores)
                self._used = 0.0
        else:
            self._used += self._rate * (now - self._last)
        self._last = now

    def _plan(self) -> None:
        """Count the period if it has run time; set one timer: the period's end while stalled, or the
        instant the quota runs out while running."""
        self._count()
        self._version += 1
        version = self._version
        now = self._env.now()
        end = self._period_start + self.period
        if self.throttled:
            at = end
        elif self._rate > 0:
            left = self.quota - self._used
            at = min(end, now + max(0, -int(-left // self._rate)))  # ceil: the stall never starts early
        else:
            return  # idle: the next admission plans again
        self._env.call_at(at, lambda: self._tick(version))

    def _tick(self, version: int) -> None:
        if version != self._version:
            return  # superseded by a later plan
        self._account()
        now = self._env.now()
        if not self.throttled and self._used >= self.quota - 1e-6 and now < self._period_start + self.period:
            self.throttled = True
            self.throttled_periods += 1
            self._rate = 0.0
            self._cpu.set_cores(0.0)
        elif not self.throttled:
            self._rate = min(float(self._cpu.in_service), self.cores)
        self._plan()
