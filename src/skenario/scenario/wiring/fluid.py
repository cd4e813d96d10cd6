"""What a fluid run reads of its scenario (`spec.mode: fluid`): the traffic as a rate, the requests' mean
work, their timeout, and the latency model of a replica's queue (`queueing.ps.backlog_quantiles`)."""

from __future__ import annotations

from pathlib import Path

from skenario.core.random import Constant
from skenario.core.time import SECOND
from skenario.errors import ScenarioError
from skenario.model.fluid.plant import QUANTILES, FluidInputs
from skenario.queueing.ps import backlog_quantiles, backlog_step
from skenario.scenario.format.scenario import ScenarioSpec, fluid_refusals
from skenario.scenario.wiring.traffic import build_rate


def check_fluid(spec: ScenarioSpec) -> None:
    """A fluid run of `spec` models everything it names; else the first thing it does not is a ScenarioError
    at its field."""
    refused = fluid_refusals(spec)
    if refused:
        field, why = refused[0]
        more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
        raise ScenarioError(f"a fluid run does not model {why} yet: run it with mode: discrete{more}", field=field)


def fluid_inputs(spec: ScenarioSpec, horizon: int, base_dir: Path) -> FluidInputs:
    """The fluid plant's inputs for `spec`, its traffic made up to `horizon` (ns), trace files read from
    `base_dir` (a bad one is a TraceError at its field)."""
    request = spec.workload.request
    io = request.io_time.build() if request.io_time is not None else Constant(0.0)
    io_time = io.mean() / SECOND
    spread = tuple(io.quantile(p) / SECOND - io_time for p in QUANTILES)
    return FluidInputs(
        rate=build_rate(spec.traffic, duration=horizon, base_dir=base_dir, offset=spec.offset),
        step=spec.fluid.step,
        latency=backlog_quantiles,
        backlog=backlog_step,
        cpu_mean_s=request.cpu_time.build().mean() / SECOND,
        io_mean_s=io_time,
        io_spread=spread if any(spread) else (),  # a constant IO time only shifts latency
        timeout_s=request.timeout / SECOND if request.timeout is not None else None,
        round_robin=spec.routing.policy != "random",
    )


FLUID_RATE = 50.0
"""Requests per second per serving replica from which a fluid run's figures are checked against the
discrete run's (issue 34's regime); below it, they are the model's."""


def cpu_time_warnings(spec: ScenarioSpec) -> list[str]:
    """Why a fluid run's latency percentiles may be far from its discrete run's whatever the load: its latency
    model (`queueing.ps`) takes CPU times as exponential. Its mean still holds with random routing (M/G/1
    processor sharing's mean is insensitive to them); its percentiles, and its mean under round robin, do not."""
    entries = [("spec.workload", spec.workload)] + [
        (f"spec.workloads.{i}.workload", w.workload) for i, w in enumerate(spec.workloads)
    ]
    return [
        f"{field}.request.cpuTime is {cpu_time.distribution}: a fluid run's latency percentiles take CPU times as "
        "exponential; check them with --mode discrete"
        for field, workload in entries
        if (cpu_time := workload.request.cpu_time).distribution != "exponential"
    ]


def fluid_warnings(arrived: int, replica_seconds: float) -> list[str]:
    """Why a fluid run's figures may be far from its discrete run's: too few requests per replica."""
    if replica_seconds <= 0:
        return ["no replica served: a fluid run has nothing to say of latency; run it discrete"]
    per_replica = arrived / replica_seconds
    if per_replica < FLUID_RATE:
        return [
            f"about {per_replica:,.1f} requests/s per serving replica, below the {FLUID_RATE:g}/s where a fluid "
            "run is held against the discrete one: its latency and failures are the model's; check them "
            "with --mode discrete"
        ]
    return []
