"""Knative's autoscaler for one revision on the Clock: scrapes, decider ticks and the reconciler.

- Every second (`stats_period`) it scrapes ready pods' counters (queue-proxy's stats) and takes
  the activator's report, and records the revision's total concurrency and requests per second
  into the stable and panic windows (`MetricCollection.record`). Above three pods it scrapes a
  sample of them, `population_mean_sample_size` of N, at random among those older than the
  stable window (topped up at random with younger ones when too few are), and scales the sums by
  N / n (`serviceScraper.scrapePods`, pkg/autoscaler/metrics/stats_scraper.go). Of each pod it
  counts only the requests that did not come through the activator (`collection.record` takes
  off the proxied ones); the activator reports every request it handles, held or proxied, itself
  and whole, not sampled (its `ConcurrencyReporter`, folded in here at the scrape).
- Every `tick_interval` (2 s) the decider (`KPADecider.scale`, autoscaler.go `Scale`) proposes a
  pod count, and the reconciler's rules (`reconcile_scale`, scaler.go) apply min / max / initial
  scale and scale to zero; the PodAutoscaler's Active condition and the SKS mode follow
  (`compute_active_state`, `sks_mode`), as the KPA reconciler updates them. The SKS mode puts the
  model's activator in the request path (Proxy) or takes it out (Serve).
- The activator reports the first request after an idle period at once (concurrency 1, count 1,
  subtracted from its next report: `ConcurrencyReporter.getOrCreateStat`), and while the
  revision's last scale is 0 each of its reports with requests runs the decider at once
  (`MultiScaler.Poke`), so scaling from zero starts without waiting for a tick.

Each pass leaves a `KPADecision` with what the decider read and the rules that set the result
(`skenario explain` reads them back); the first of a KPA's also holds its settings
(`decision_settings`), which do not change while it runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from skenario.autoscalers.base import PodCounters, PodLister, RequestCounters, Scaler, ServingMode, Timing
from skenario.autoscalers.kpa.config import KPAConfig
from skenario.autoscalers.kpa.decider import KPADecider, make_decider_spec, panic_window
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


class KPAContext(Timing, PodLister, RequestCounters, Scaler, ServingMode, Protocol):
    """What the KPA reaches: the clock, the pods, the queue-proxies' and activator's counters, the scale
    subresource and the ServerlessService's mode."""


@dataclass(slots=True)
class KPADecision:
    """One tick (or poke): the decider's proposal, what it came from, and what the reconciler did with it.

    `proposed` is `Scale`'s `DesiredPodCount`, or -1 (`scaleUnknown`) when `Scale` was invalid
    for want of data; then `observed_*`, `*_pods`, `ebc` and `rule` are None. `observed_stable`
    and `observed_panic` are the windows' averages of the scaling metric; `stable_pods` and
    `panic_pods` what each asks for, ceil(average / target); `rule` the decider's rule
    (`decider.DECIDER_RULES`), `scaler` the reconciler's (`scaler.SCALER_RULES`, "" when it
    applied the proposal as it was). `state` is the PodAutoscaler's Active condition, `sks` the
    ServerlessService's mode after the pass (Proxy: the activator is in the request path), `ebc`
    the excess burst capacity it was set by. `settings` is on the first decision only.
    """

    at: int
    ready: int
    proposed: int
    desired: int
    applied: bool
    panic: bool
    state: str
    observed_stable: float | None = None
    observed_panic: float | None = None
    stable_pods: int | None = None
    panic_pods: int | None = None
    ebc: int | None = None
    rule: str | None = None
    scaler: str = ""
    sks: str = "Proxy"
    settings: dict[str, Any] | None = None


def decision_settings(config: KPAConfig) -> dict[str, Any]:
    """The settings a KPA decides by, resolved as the decider and the reconciler use them (durations in ns).

    `target` is the per-pod target (`DeciderSpec.TargetValue`), `total` what one pod can take
    (`TotalValue`), `panic_threshold` the ratio to the ready pods (2.0 for 200%).
    """
    spec = make_decider_spec(config)
    return {
        "metric": spec.scaling_metric,
        "target": spec.target_value,
        "total": spec.total_value,
        "container_concurrency": config.container_concurrency,
        "target_burst_capacity": spec.target_burst_capacity,
        "panic_threshold": spec.panic_threshold,
        "stable_window": spec.stable_window,
        "panic_window": panic_window(config),
        "max_scale_up_rate": spec.max_scale_up_rate,
        "max_scale_down_rate": spec.max_scale_down_rate,
        "scale_down_delay": spec.scale_down_delay,
        "activation_scale": spec.activation_scale,
        "min_scale": config.min_scale,
        "max_scale": config.max_scale,
        "initial_scale": config.initial_scale,
        "enable_scale_to_zero": config.enable_scale_to_zero,
        "scale_to_zero_grace_period": config.scale_to_zero_grace_period,
        "scale_to_zero_pod_retention_period": config.scale_to_zero_pod_retention_period,
        "reachable": config.reachable,
    }


@dataclass
class KnativePodAutoscaler:
    """The KPA of one revision."""

    config: KPAConfig = field(default_factory=KPAConfig)
    stats_period: int = SECOND
    keep_decisions: int = 100_000
    decisions: list[KPADecision] = field(default_factory=list)
    _context: KPAContext | None = None
    _decider: KPADecider[MetricCollection] | None = None
    _status: PAStatus | None = None
    _last_scrape: tuple[int, dict[int, PodCounters]] | None = None
    _latest_scale: int = -1  # the decider's last proposal (`latestScale`); -1 before the first
    _activator_reported: bool = False  # the activator has a stat for the revision this period
    _first_request_adjust: float = 0.0  # what its immediate stat reported, taken off its next report
    _activator_last: PodCounters | None = None  # the activator's totals at the last scrape

    @property
    def max_replicas(self) -> int | None:
        """The most pods it may ask for (`max-scale`; None: unbounded): the run records it beside the desired count."""
        return self.config.max_scale or None

    def start(self, context: KPAContext) -> None:
        self._context = context
        now = context.clock.now()
        ready = sum(1 for pod in context.pods() if pod.ready)
        self._decider = KPADecider.from_config(self.config, now=now, ready_pods=ready)
        self._status = PAStatus(PAState.ACTIVATING, now, sks_proxy=True, proxy_since=now)
        self._latest_scale = context.desired
        self._last_scrape = (now, context.counters())
        self._activator_last = context.activator_counters()
        context.set_sks_mode(proxy=True)  # an SKS starts in Proxy mode
        context.subscribe_activator(self._activator_request)
        # Two tickers of the revision's own: the collection's scrape ticker (`newCollection`, made
        # when the metric reconciler sees the Metric) and the decider's (`runScalerTicker`, made
        # when the KPA reconciler creates the Decider), each at its own phase.
        context.clock.call_later(context.phase("scrape", self.stats_period), self._scrape)
        context.clock.call_later(context.phase("tick", self.config.tick_interval), self._tick)

    def _activator_request(self) -> None:
        """The activator took a request: the first since it was idle is reported at once, and pokes."""
        assert self._context is not None and self._decider is not None
        if self._activator_reported:
            return
        self._activator_reported = True
        self._first_request_adjust = 1.0
        self._decider.metrics.record(self._context.clock.now(), 1.0, 1.0)
        self._poke(1.0)

    def _poke(self, activator_concurrency: float) -> None:
        """`MultiScaler.Poke`: a revision whose last scale is 0 decides at once when the activator has requests."""
        if self._latest_scale == 0 and activator_concurrency != 0:
            self._decide()

    def _scrape(self) -> None:
        context = self._context
        assert context is not None and self._decider is not None and self._last_scrape is not None
        assert self._activator_last is not None
        now = context.clock.now()
        then, before = self._last_scrape
        counters = context.counters()
        totals = context.activator_counters()
        elapsed = now - then
        concurrency = 0.0
        rps = 0.0
        handled = 0.0
        activator = 0.0
        if elapsed > 0:
            sampled = scrape_sample(counters, now, self.config.stable_window, context.random)
            for pod in sampled:
                pod_totals, earlier = counters[pod], before.get(pod)
                if earlier is not None:  # its own requests: the proxied ones are the activator's to report
                    request_ns = pod_totals.request_ns - pod_totals.proxied_request_ns
                    requests = pod_totals.requests - pod_totals.proxied_requests
                    concurrency += (request_ns - earlier.request_ns + earlier.proxied_request_ns) / elapsed
                    rps += (requests - earlier.requests + earlier.proxied_requests) * SECOND / elapsed
            if sampled and len(sampled) < len(counters):  # Stat.average: the sample stands for every pod
                concurrency *= len(counters) / len(sampled)
                rps *= len(counters) / len(sampled)
            # The activator's own report: the mean of the requests it handled over the period and how
            # many it took, less what its immediate stat already said (`computeReport`).
            last = self._activator_last
            handled = (totals.request_ns - last.request_ns) / elapsed
            activator = max(handled - self._first_request_adjust, 0.0)
            concurrency += activator
            rps += (totals.requests - last.requests - self._first_request_adjust) * SECOND / elapsed
        self._first_request_adjust = 0.0
        if not handled:
            self._activator_reported = False  # idle for the whole period: its stat for the revision goes
        if counters or concurrency:
            self._decider.metrics.record(now, concurrency, rps)
        self._last_scrape = (now, counters)
        self._activator_last = totals
        context.clock.call_later(self.stats_period, self._scrape)
        self._poke(activator)

    def _tick(self) -> None:
        assert self._context is not None
        self._decide()
        self._context.clock.call_later(self.config.tick_interval, self._tick)

    def _decide(self) -> None:
        """One pass of the decider and the reconciler (a tick's, or a poke's)."""
        context = self._context
        assert context is not None and self._decider is not None and self._status is not None
        now = context.clock.now()
        ready = sum(1 for pod in context.pods() if pod.ready)
        result = self._decider.scale(now, ready)
        proposed = result.desired_pod_count if result.scale_valid else SCALE_UNKNOWN
        if result.scale_valid:
            self._latest_scale = proposed
        status = self._status
        decision = reconcile_scale(self.config, proposed, status, now)
        if decision.apply and decision.scale >= 0:
            context.scale_to(decision.scale)
        want = decision.scale if decision.scale >= 0 else proposed
        min_ready = active_threshold(self.config, status.scale_target_initialized)
        state = compute_active_state(status.state, want, ready, min_ready)
        mode = sks_mode(want, result.excess_burst_capacity, state)
        proxy = mode == "Proxy"
        context.set_sks_mode(proxy)
        self._status = PAStatus(
            state,
            status.since if state is status.state else now,
            status.scale_target_initialized or ready >= min_ready,
            proxy,
            (status.proxy_since if status.sks_proxy else now) if proxy else None,
        )
        if len(self.decisions) < self.keep_decisions:
            inputs = result.inputs
            self.decisions.append(
                KPADecision(
                    now,
                    ready,
                    proposed,
                    context.desired,
                    decision.apply,
                    self._decider.in_panic,
                    state.value,
                    observed_stable=None if inputs is None else inputs.observed_stable,
                    observed_panic=None if inputs is None else inputs.observed_panic,
                    stable_pods=None if inputs is None else inputs.stable_pods,
                    panic_pods=None if inputs is None else inputs.panic_pods,
                    ebc=result.excess_burst_capacity if result.scale_valid else None,
                    rule=None if inputs is None else inputs.rule,
                    scaler=decision.reason,
                    sks=mode,
                    settings=None if self.decisions else decision_settings(self.config),
                )
            )


SAMPLE_SIZE_X = 1.96**2 * 100 / 5**2
"""`sampleSize` (pkg/autoscaler/metrics/sample_size.go): critical value² × variance 100 / margin of error 5²."""


def population_mean_sample_size(population: int) -> int:
    """`populationMeanSampleSize`: N up to 3 pods, else ceil(N·X / (N + X − 1))."""
    if population <= 3:
        return max(population, 0)
    return math.ceil(population * SAMPLE_SIZE_X / (population + SAMPLE_SIZE_X - 1))


def scrape_sample(
    counters: dict[int, PodCounters], now: int, stable_window: int, random: np.random.Generator
) -> list[int]:
    """The pods one scrape reads (`scrapePods`): pods older than the stable window first, at random
    among them when there are enough, topped up with young ones at random otherwise."""
    size = population_mean_sample_size(len(counters))
    if size == len(counters):
        return list(counters)
    old = [pod for pod, totals in counters.items() if now - totals.started_at >= stable_window]
    young = [pod for pod, totals in counters.items() if now - totals.started_at < stable_window]
    if len(old) < size:
        return old + [young[i] for i in random.permutation(len(young))[: size - len(old)]]
    return [old[i] for i in random.permutation(len(old))[:size]]
