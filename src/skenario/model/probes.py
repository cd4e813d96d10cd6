"""Readiness and startup probes: a pod becomes ready only when a probe finds it ready, so readiness
comes in steps; a startup probe that keeps failing gets the container killed and restarted.

The kubelet's prober worker (pkg/kubelet/prober/worker.go, `worker.run` / `doProbe`) probes a
container every `periodSeconds` from the moment the worker starts, which is when the container
starts; a probe before `initialDelaySeconds` have passed is skipped; the container turns Ready
after `successThreshold` probes in a row succeed. A probe succeeds once the application has
warmed up (the workload's `launch.readiness` duration here). So with the Kubernetes defaults
(no initial delay, every 10 s, one success) an application that needs 4 s is Ready at 10 s, and
one that needs 12 s at 20 s.

Without a probe Kubernetes counts a running container as Ready at once; skenario then keeps its
launch stages as they are (the readiness stage is the time to ready).

A startup probe runs first (`worker.run` skips readiness probes until the container has
started): it ticks the same way and succeeds once the application has warmed up; after
`failureThreshold` failures in a row the kubelet kills the container, which restarts after the
crash-loop back-off and warms up again.
"""

from __future__ import annotations

from dataclasses import dataclass

from skenario.core.time import SECOND

DEFAULT_PERIOD = 10 * SECOND  # periodSeconds
DEFAULT_FAILURE_THRESHOLD = 3  # failureThreshold: matters once a ready pod fails probes (not modelled yet)


@dataclass(frozen=True)
class ReadinessProbe:
    """A container's readinessProbe timing, Kubernetes' defaults (the handler, httpGet or exec, is not read)."""

    initial_delay: int = 0  # ns; initialDelaySeconds
    period: int = DEFAULT_PERIOD  # ns; periodSeconds
    success_threshold: int = 1  # successThreshold

    def __post_init__(self) -> None:
        if self.period <= 0 or self.initial_delay < 0 or self.success_threshold < 1:
            raise ValueError(
                f"a probe needs period > 0, initial delay >= 0, success threshold >= 1; got {self.period}, "
                f"{self.initial_delay}, {self.success_threshold}"
            )


def ready_at(started: int, warm_up: int, probe: ReadinessProbe) -> int:
    """When a container started at `started`, ready to serve `warm_up` later, turns Ready.

    Probes tick at `started + k * period` (k = 0, 1, ...); the first that counts is the first at
    or after both the initial delay and the warm-up; `success_threshold - 1` more ticks follow.
    """
    period = probe.period
    first = max(probe.initial_delay, warm_up)
    k = -(-first // period)  # ceil
    return started + (k + probe.success_threshold - 1) * period


@dataclass(frozen=True)
class StartupProbe:
    """A container's startupProbe timing, Kubernetes' defaults (its successThreshold must be 1)."""

    initial_delay: int = 0  # ns; initialDelaySeconds
    period: int = DEFAULT_PERIOD  # ns; periodSeconds
    failure_threshold: int = DEFAULT_FAILURE_THRESHOLD  # failureThreshold

    def __post_init__(self) -> None:
        if self.period <= 0 or self.initial_delay < 0 or self.failure_threshold < 1:
            raise ValueError(
                f"a probe needs period > 0, initial delay >= 0, failure threshold >= 1; got {self.period}, "
                f"{self.initial_delay}, {self.failure_threshold}"
            )


def startup_outcome(started: int, warm_up: int, probe: StartupProbe) -> tuple[bool, int]:
    """(True, when it succeeds) or (False, when the kubelet kills the container) for a container
    started at `started` that answers probes `warm_up` later.

    Probes tick at `started + k * period`; those before the initial delay are skipped; the first
    at or after the warm-up succeeds, unless `failure_threshold` failed before it.
    """
    period = probe.period
    first = -(-probe.initial_delay // period)  # the first tick that counts
    success = max(first, -(-warm_up // period))
    if success - first >= probe.failure_threshold:
        return False, started + (first + probe.failure_threshold - 1) * period
    return True, started + success * period
