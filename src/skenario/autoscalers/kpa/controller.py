"""Knative's autoscaler for one revision on the Clock: scrapes, decider ticks and the reconciler.

- Every second (`stats_period`) it scrapes each ready pod's counters (queue-proxy's stats) and
  the activator's buffer, and records the revision's total concurrency and requests per second
  into the stable and panic windows (`MetricCollection.record`).
- Every `tick_interval` (2 s) the decider (`KPADecider.scale`, autoscaler.go `Scale`) proposes a
  pod count, and the reconciler's rules (`reconcile_scale`, scaler.go) apply min / max / initial
  scale and scale to zero; the PodAutoscaler's Active condition and the SKS mode follow
  (`compute_active_state`, `sks_mode`), as the KPA reconciler updates them.

Requests arriving while no pod is ready wait in the activator-like buffer of the model; they count
as the activator's concurrency, which is what scales a revision up from zero.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from skenario.autoscalers.base import AutoscalerContext, PodCounters
from skenario.autoscalers.kpa.config import KPAConfig
from skenario.autoscalers.kpa.decider import KPADecider
from skenario.autoscalers.kpa.scaler import (
    SCALE_UNKNOWN,
    PAState,
    PAStatus,
    active_threshold,
    compute_active_state,
    reconcile_scale,
    sks_mode,
)
from skenario.autoscalers.kpa.windows import MetricCollection
from skenario.core.time import SECOND


@dataclass
class KPADecision:
    """One tick: the decider's proposal and what the reconciler did with it."""

    at: int
    ready: int
    proposed: int
    desired: int
    applied: bool
    panic: bool
    state: str


@dataclass
class KnativePodAutoscaler:
    """The KPA of one revision."""

    config: KPAConfig = field(default_factory=KPAConfig)
    stats_period: int = SECOND
    keep_decisions: int = 100_000
    decisions: list[KPADecision] = field(default_factory=list)
    _context: AutoscalerContext | None = None
    _decider: KPADecider[MetricCollection] | None = None
    _status: PAStatus | None = None
    _last_scrape: tuple[int, dict[int, PodCounters]] | None = None

    def start(self, context: AutoscalerContext) -> None:
        self._context = context
        now = context.clock.now()
        ready = sum(1 for pod in context.pods() if pod.ready)
        self._decider = KPADecider.from_config(self.config, now=now, ready_pods=ready)
        self._status = PAStatus(PAState.ACTIVATING, now)
        self._last_scrape = (now, context.counters())
        context.clock.call_later(self.stats_period, self._scrape)
        context.clock.call_later(self.config.tick_interval, self._tick)

    def _scrape(self) -> None:
        context = self._context
        assert context is not None and self._decider is not None and self._last_scrape is not None
        now = context.clock.now()
        then, before = self._last_scrape
        counters = context.counters()
        elapsed = now - then
        concurrency = 0.0
        rps = 0.0
        if elapsed > 0:
            for pod, totals in counters.items():
                earlier = before.get(pod)
                if earlier is not None:
                    concurrency += (totals.request_ns - earlier.request_ns) / elapsed
                    rps += (totals.requests - earlier.requests) * SECOND / elapsed
        # The activator's own stat: the requests it holds for want of a ready pod.
        concurrency += context.buffered_requests()
        if counters or concurrency:
            self._decider.metrics.record(now, concurrency, rps)
        self._last_scrape = (now, counters)
        context.clock.call_later(self.stats_period, self._scrape)

    def _tick(self) -> None:
        context = self._context
        assert context is not None and self._decider is not None and self._status is not None
        now = context.clock.now()
        ready = sum(1 for pod in context.pods() if pod.ready)
        result = self._decider.scale(now, ready)
        proposed = result.desired_pod_count if result.scale_valid else SCALE_UNKNOWN
        status = self._status
        decision = reconcile_scale(self.config, proposed, status, now)
        if decision.apply and decision.scale >= 0:
            context.scale_to(decision.scale)
        want = decision.scale if decision.scale >= 0 else proposed
        min_ready = active_threshold(self.config, status.scale_target_initialized)
        state = compute_active_state(status.state, want, ready, min_ready)
        proxy = sks_mode(want, result.excess_burst_capacity, state) == "Proxy"
        self._status = PAStatus(
            state,
            status.since if state is status.state else now,
            status.scale_target_initialized or ready >= min_ready,
            proxy,
            (status.proxy_since if status.sks_proxy else now) if proxy else None,
        )
        if len(self.decisions) < self.keep_decisions:
            self.decisions.append(
                KPADecision(now, ready, proposed, context.desired, decision.apply, self._decider.in_panic, state.value)
            )
        context.clock.call_later(self.config.tick_interval, self._tick)
