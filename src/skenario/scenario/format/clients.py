"""`spec.client`: what the clients of the workload do when an attempt fails or takes too long."""

from __future__ import annotations

from pydantic import Field, field_validator

from skenario.core.time import MILLISECOND
from skenario.model.config import RETRIABLE, ClientSpec, RetryPolicy
from skenario.scenario.format.base import Spec
from skenario.scenario.format.units import Duration, Ratio


class Backoff(Spec):
    """The wait before a retry: uniform up to a ceiling that grows with each retry (full jitter)."""

    base: Duration = Field(25 * MILLISECOND, gt=0, description="Envoy's base_interval (25ms); gRPC's initialBackoff.")
    max: Duration = Field(250 * MILLISECOND, gt=0, description="The ceiling's cap: Envoy's max_interval (10 × base).")
    multiplier: float | None = Field(
        None,
        gt=1,
        description="null: Envoy's ceiling, (2^n − 1) × base before the n-th retry; a number: gRPC's, "
        "base × multiplier^(n−1) (its backoffMultiplier).",
    )


class Retries(Spec):
    """Retries as an Envoy route's retry policy (or a gRPC retryPolicy) does them."""

    attempts: int = Field(
        2,
        ge=1,
        description="Tries per request, the first included: Envoy's num_retries + 1 (1 + 1); gRPC's maxAttempts.",
    )
    per_try_timeout: Duration | None = Field(
        None, gt=0, description="An attempt not answered by then is given up and retried (Envoy's per_try_timeout)."
    )
    backoff: Backoff = Field(default_factory=lambda: Backoff.model_validate({}))
    retry_on: tuple[str, ...] = Field(
        tuple(sorted(RETRIABLE)),
        description="The failures retried (Envoy's retry_on 5xx, reset, connect-failure; gRPC's retryable "
        f"codes), any of {', '.join(sorted(RETRIABLE))}; the request's own timeout never is.",
    )

    @field_validator("retry_on")
    @classmethod
    def _known_causes(cls, causes: tuple[str, ...]) -> tuple[str, ...]:
        unknown = sorted(set(causes) - RETRIABLE)
        if unknown:
            raise ValueError(
                f"cannot retry {', '.join(unknown)}: the failures a client retries are {', '.join(sorted(RETRIABLE))}"
            )
        return causes

    budget: Ratio | None = Field(
        None,
        description="Envoy's retry_budget: retries in flight at most this share of the attempts in flight "
        "('20%'); null: no budget.",
    )
    min_retry_concurrency: int = Field(3, ge=0, description="Retries always allowed in flight under a budget.")

    def build(self) -> RetryPolicy:
        return RetryPolicy(
            attempts=self.attempts,
            per_try_timeout=self.per_try_timeout,
            backoff_base=self.backoff.base,
            backoff_max=self.backoff.max,
            backoff_multiplier=self.backoff.multiplier,
            retry_on=frozenset(self.retry_on),
            budget=self.budget,
            min_retry_concurrency=self.min_retry_concurrency,
        )


class Client(Spec):
    """The workload's clients."""

    cancel: bool = Field(
        False,
        description="When a client gives up on a request (its timeout, a per-try timeout), the server stops "
        "working on it (true) or keeps going, as real servers do (false).",
    )
    retries: Retries | None = Field(None, description="Retries of failed attempts; null: none.")

    def build(self) -> ClientSpec:
        return ClientSpec(self.cancel, self.retries.build() if self.retries is not None else None)
