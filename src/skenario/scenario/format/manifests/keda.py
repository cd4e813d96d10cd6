"""A keda.sh/v1alpha1 ScaledObject, read as KEDA's CRD and admission webhook read it.

Fields, defaults and checks follow apis/keda/v1alpha1 (scaledobject_types.go, scaletriggers_types.go,
`CheckReplicaCountBoundsAreValid`, `CheckFallbackValid`) and each scaler's typed metadata (`keda:"name=..."`
tags in pkg/scalers): a violation names the manifest, the field path and the value. `scaleTargetRef`,
`authenticationRef` and connection metadata (servers, hosts, credentials) are read loosely: skenario scales
the scenario's workload, and its stream stands for the topic or queue a trigger names.

Triggers skenario measures: `kafka`, `rabbitmq` (QueueLength), `aws-sqs-queue` (on the workload's
`stream`), `prometheus` (a query named in the autoscaler entry's `queries` as one of the simulation's
metrics), `cron`, `cpu` and `memory`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal, Self
from urllib.parse import urlparse

from pydantic import Field, model_validator

from skenario.autoscalers.keda.controller import DEFAULT_MAX_REPLICAS, EPOCH, ScaledObjectSpec, ScalingModifiers
from skenario.autoscalers.keda.cron import CronError, parse_schedule, timezone
from skenario.autoscalers.keda.executor import ExecutorSpec
from skenario.autoscalers.keda.fallback import BEHAVIORS, STATIC, Fallback
from skenario.autoscalers.keda.formula import FormulaError, parse
from skenario.autoscalers.keda.jobs import DEFAULT_MAX_REPLICAS as DEFAULT_MAX_JOBS
from skenario.autoscalers.keda.jobs import Strategy
from skenario.autoscalers.keda.scaledjob import ScaledJobSpec
from skenario.autoscalers.keda.scalers import (
    AVERAGE_VALUE,
    QUERYABLE,
    UTILIZATION,
    CronScaler,
    KafkaScaler,
    PrometheusScaler,
    QueueScaler,
    ResourceScaler,
    Scaler,
)
from skenario.core.time import SECOND
from skenario.scenario.format.base import Loose, Spec
from skenario.scenario.format.manifests.hpa import BehaviorModel
from skenario.scenario.format.units import milli_quantity

SHAPE = "a manifest is a mapping with apiVersion: keda.sh/v1alpha1, kind: ScaledObject and spec"
PAUSED = "autoscaling.keda.sh/paused"
PAUSED_REPLICAS = "autoscaling.keda.sh/paused-replicas"
PAUSED_SCALE_IN = "autoscaling.keda.sh/paused-scale-in"
PAUSED_SCALE_OUT = "autoscaling.keda.sh/paused-scale-out"
FORCE_ACTIVATION = "autoscaling.keda.sh/force-activation"
TRIGGER_TYPES = ("kafka", "rabbitmq", "aws-sqs-queue", "prometheus", "cron", "cpu", "memory")
STREAM_TRIGGERS = ("kafka", "rabbitmq", "aws-sqs-queue")
MetricType = Literal["AverageValue", "Value", "Utilization"]


class ScaledObjectProblem(ValueError):
    """A mistake found after the schema: where in the ScaledObject's spec (a dotted path), what, and the value."""

    def __init__(self, path: str, message: str, value: object = None) -> None:
        super().__init__(message)
        self.path, self.message, self.value = path, message, value


class TriggerModel(Spec):
    """`ScaleTriggers`."""

    type: str = Field(min_length=1)
    name: str | None = None
    metadata: dict[str, str | int | float | bool] = Field(default_factory=dict)
    metric_type: MetricType | None = None
    use_cached_metrics: bool = False
    authentication_ref: Loose | None = None


class FallbackModel(Spec):
    failure_threshold: int = Field(ge=0)
    replicas: int = Field(ge=0)
    behavior: Literal[
        "static", "currentReplicas", "currentReplicasIfHigher", "currentReplicasIfLower", "scalingModifiers"
    ] = "static"


class ScalingModifiersModel(Spec):
    formula: str = ""
    target: str = ""
    activation_target: str = ""
    metric_type: Literal["AverageValue", "Value"] | None = None


class HorizontalPodAutoscalerConfig(Spec):
    name: str | None = None
    behavior: BehaviorModel | None = None


class AdvancedModel(Spec):
    horizontal_pod_autoscaler_config: HorizontalPodAutoscalerConfig | None = None
    restore_to_original_replica_count: bool = False
    scaling_modifiers: ScalingModifiersModel | None = None


class ScaledObjectSpecModel(Spec):
    """`ScaledObjectSpec`, with its defaults (pollingInterval 30 s, cooldownPeriod 300 s, maxReplicaCount 100)."""

    scale_target_ref: Loose = Field(default_factory=lambda: Loose.model_validate({}))
    polling_interval: int | None = Field(None, ge=1, description="Seconds between polls of the triggers (30).")
    cooldown_period: int | None = Field(None, ge=0, description="Seconds of inactivity before scaling to zero (300).")
    initial_cooldown_period: int | None = Field(None, ge=0)
    min_replica_count: int | None = Field(None, ge=0)
    max_replica_count: int | None = Field(None, ge=1)
    idle_replica_count: int | None = Field(None, ge=0)
    fallback: FallbackModel | None = None
    advanced: AdvancedModel | None = None
    triggers: list[TriggerModel] = Field(min_length=1)

    @model_validator(mode="after")
    def _replica_bounds(self) -> Self:
        """`CheckReplicaCountBoundsAreValid` (with `GetHPAMinReplicas`: a minReplicaCount of 0 counts as 1)."""
        minimum = 0 if self.min_replica_count is None else max(self.min_replica_count, 1)
        maximum = self.max_replica_count or DEFAULT_MAX_REPLICAS
        if self.min_replica_count is not None and self.min_replica_count > maximum:
            raise ValueError(
                f"minReplicaCount={self.min_replica_count} must be less than or equal to maxReplicaCount={maximum}"
            )
        if self.idle_replica_count is not None and self.idle_replica_count >= minimum:
            raise ValueError(f"idleReplicaCount={self.idle_replica_count} must be less than minReplicaCount={minimum}")
        return self


class ScalingStrategyModel(Spec):
    """A ScaledJob's `scalingStrategy`."""

    strategy: Literal["default", "custom", "accurate", "eager"] = "default"
    custom_scaling_queue_length_deduction: int | None = None
    custom_scaling_running_job_percentage: str | None = None
    pending_pod_conditions: list[str] | None = None
    multiple_scalers_calculation: Literal["max", "min", "avg", "sum"] = "max"


class ScaledJobSpecModel(Spec):
    """`ScaledJobSpec`, with its defaults (pollingInterval 30 s, minReplicaCount 0, maxReplicaCount 100)."""

    job_target_ref: Loose = Field(default_factory=lambda: Loose.model_validate({}))
    polling_interval: int | None = Field(None, ge=1)
    successful_jobs_history_limit: int | None = Field(None, ge=0)
    failed_jobs_history_limit: int | None = Field(None, ge=0)
    env_source_container_name: str | None = None
    min_replica_count: int | None = Field(None, ge=0)
    max_replica_count: int | None = Field(None, ge=0)
    rollout: Loose | None = None
    scaling_strategy: ScalingStrategyModel | None = None
    triggers: list[TriggerModel] = Field(min_length=1)


class ScaledJobManifest(Spec):
    api_version: Literal["keda.sh/v1alpha1"]
    kind: Literal["ScaledJob"]
    metadata: Loose = Field(default_factory=lambda: Loose.model_validate({}))
    spec: ScaledJobSpecModel
    status: Loose | None = None


def scaled_job(
    spec: ScaledJobSpecModel,
    name: str,
    *,
    queries: Mapping[str, str] | None = None,
    stream: bool = False,
    messages_per_job: int = 1,
    epoch: datetime = EPOCH,
) -> ScaledJobSpec:
    """The ScaledJob as KEDA's operator uses it; ScaledObjectProblem (with the spec's path) for a mistake."""
    if not stream:
        raise ScaledObjectProblem(
            "jobTargetRef", "a ScaledJob's Jobs consume a queue: give the workload a stream (spec.workload.stream)"
        )
    scalers = tuple(_scaler(trigger, index, queries or {}, stream) for index, trigger in enumerate(spec.triggers))
    for index, scaler in enumerate(scalers):
        if not scaler.external:
            raise ScaledObjectProblem(
                f"triggers.{index}.type", "a ScaledJob scales on queues, not cpu or memory", spec.triggers[index].type
            )
    maximum = DEFAULT_MAX_JOBS if spec.max_replica_count is None else spec.max_replica_count
    minimum = spec.min_replica_count or 0
    strategy_model = spec.scaling_strategy or ScalingStrategyModel()
    if strategy_model.pending_pod_conditions:
        raise ScaledObjectProblem(
            "scalingStrategy.pendingPodConditions",
            "skenario does not simulate pod conditions",
            strategy_model.pending_pod_conditions,
        )
    strategy = Strategy()
    if strategy_model.strategy == "custom":
        try:  # NewScalingStrategy: a percentage that does not parse selects the default strategy
            percentage = float(strategy_model.custom_scaling_running_job_percentage or "")
            strategy = Strategy("custom", strategy_model.custom_scaling_queue_length_deduction or 0, percentage)
        except ValueError:
            strategy = Strategy()
    elif strategy_model.strategy in ("accurate", "eager"):
        strategy = Strategy(strategy_model.strategy)
    return ScaledJobSpec(
        name=name,
        scalers=scalers,
        polling_interval=(spec.polling_interval or 30) * SECOND,
        min_replicas=min(minimum, maximum),  # MinReplicaCount(): never above the maximum
        max_replicas=maximum,
        strategy=strategy,
        calculation=strategy_model.multiple_scalers_calculation,
        messages_per_job=messages_per_job,
        epoch=epoch,
    )


class ScaledObjectManifest(Spec):
    api_version: Literal["keda.sh/v1alpha1"]
    kind: Literal["ScaledObject"]
    metadata: Loose = Field(default_factory=lambda: Loose.model_validate({}))
    spec: ScaledObjectSpecModel
    status: Loose | None = None


class _Metadata:
    """A trigger's metadata read as its scaler's typed config: each key's value, or a problem naming it."""

    def __init__(self, index: int, metadata: Mapping[str, object]) -> None:
        self.index = index
        self.values = {
            key: str(value).lower() if isinstance(value, bool) else str(value) for key, value in metadata.items()
        }

    def path(self, key: str) -> str:
        return f"triggers.{self.index}.metadata.{key}"

    def text(self, key: str, default: str | None = None) -> str:
        value = self.values.get(key)
        if value is None or value == "":
            if default is None:
                raise ScaledObjectProblem(self.path(key), f"'{key}' is required", None)
            return default
        return value

    def number(self, key: str, default: float | None = None) -> float:
        text = self.values.get(key)
        if text is None or text == "":
            if default is None:
                raise ScaledObjectProblem(self.path(key), f"'{key}' is required", None)
            return default
        try:
            return float(text)
        except ValueError:
            raise ScaledObjectProblem(self.path(key), f"'{key}' must be a number", text) from None

    def whole(self, key: str, default: int) -> int:
        text = self.values.get(key)
        if text is None or text == "":
            return default
        try:
            return int(text)
        except ValueError:
            raise ScaledObjectProblem(self.path(key), f"'{key}' must be a whole number", text) from None

    def flag(self, key: str, default: bool = False) -> bool:
        text = self.values.get(key)
        if text is None or text == "":
            return default
        if text.lower() not in ("true", "false"):
            raise ScaledObjectProblem(self.path(key), f"'{key}' must be true or false", text)
        return text.lower() == "true"


def _metric_type(trigger: TriggerModel, index: int) -> str:
    """`GetMetricTargetType`: AverageValue unless set; Utilization only for cpu and memory."""
    if trigger.metric_type == UTILIZATION:
        raise ScaledObjectProblem(
            f"triggers.{index}.metricType", "Utilization is for cpu and memory triggers only", trigger.metric_type
        )
    return trigger.metric_type or AVERAGE_VALUE


def _scaler(trigger: TriggerModel, index: int, queries: Mapping[str, str], stream: bool) -> Scaler:
    """The trigger's scaler, its metadata checked as its upstream parser checks it."""
    meta = _Metadata(index, trigger.metadata)
    kind = trigger.type
    if kind not in TRIGGER_TYPES:
        raise ScaledObjectProblem(
            f"triggers.{index}.type",
            f"skenario does not simulate the {kind!r} scaler (it does: {', '.join(TRIGGER_TYPES)})",
            kind,
        )
    if kind in STREAM_TRIGGERS and not stream:
        raise ScaledObjectProblem(
            f"triggers.{index}.type",
            f"a {kind} trigger reads a queue: give the workload a stream (spec.workload.stream) for it to read",
            kind,
        )
    if kind in ("cpu", "memory"):
        return _resource(trigger, index, meta)
    metric_type = _metric_type(trigger, index)
    common = (index, trigger.name, metric_type)
    if kind == "kafka":
        scaler = KafkaScaler(
            *common,
            topic=meta.text("topic", ""),
            consumer_group=meta.text("consumerGroup", ""),
            lag_threshold=meta.whole("lagThreshold", 10),
            activation_lag_threshold=meta.whole("activationLagThreshold", 0),
            allow_idle_consumers=meta.flag("allowIdleConsumers"),
            limit_to_partitions_with_lag=meta.flag("limitToPartitionsWithLag"),
            even_distribution=meta.flag("ensureEvenDistributionOfPartitions"),
        )
        _check_kafka(scaler, meta)
        return scaler
    if kind == "rabbitmq":
        mode = meta.text("mode", "Unknown")
        if mode not in ("Unknown", "QueueLength"):
            raise ScaledObjectProblem(meta.path("mode"), "skenario simulates mode QueueLength only", mode)
        target = meta.number("value", 0.0) if mode == "QueueLength" else meta.number("queueLength", 20.0)
        if mode == "QueueLength" and target <= 0:
            raise ScaledObjectProblem(
                meta.path("value"), "'value' must be above 0 in mode QueueLength", meta.values.get("value")
            )
        return QueueScaler(
            *common,
            kind="rabbitmq",
            queue=meta.text("queueName"),
            target=target,
            activation=meta.number("activationValue", 0.0),
            in_flight=not meta.flag("excludeUnacknowledged"),
        )
    if kind == "aws-sqs-queue":
        url = meta.text("queueURL")
        length = meta.whole("queueLength", 5)
        if length <= 0:
            raise ScaledObjectProblem(meta.path("queueLength"), "'queueLength' must be above 0", length)
        return QueueScaler(
            *common,
            kind="aws-sqs-queue",
            queue=urlparse(url).path.rstrip("/").rsplit("/", 1)[-1] or url,
            target=float(length),
            activation=float(meta.whole("activationQueueLength", 0)),
            in_flight=meta.flag("scaleOnInFlight", True),
        )
    if kind == "prometheus":
        query = meta.text("query")
        measures = queries.get(query, query)
        if measures not in QUERYABLE:
            raise ScaledObjectProblem(
                meta.path("query"),
                f"say what this query measures: add it to the autoscaler's 'queries' as one of {', '.join(QUERYABLE)}",
                query,
            )
        return PrometheusScaler(
            *common,
            measures=measures,
            threshold=meta.number("threshold"),
            activation_threshold=meta.number("activationThreshold", 0.0),
            ignore_null_values=meta.flag("ignoreNullValues", True),
        )
    return _cron(common, meta)


def _check_kafka(scaler: KafkaScaler, meta: _Metadata) -> None:
    """`kafkaMetadata.Validate`."""
    if scaler.lag_threshold <= 0:
        raise ScaledObjectProblem(
            meta.path("lagThreshold"), "'lagThreshold' must be a positive number", scaler.lag_threshold
        )
    if scaler.activation_lag_threshold < 0:
        raise ScaledObjectProblem(
            meta.path("activationLagThreshold"),
            "'activationLagThreshold' must be a non-negative number",
            scaler.activation_lag_threshold,
        )
    if scaler.allow_idle_consumers and scaler.limit_to_partitions_with_lag:
        raise ScaledObjectProblem(
            meta.path("limitToPartitionsWithLag"),
            "allowIdleConsumers and limitToPartitionsWithLag cannot be set simultaneously",
            True,
        )
    if scaler.limit_to_partitions_with_lag and not scaler.topic:
        raise ScaledObjectProblem(
            meta.path("topic"), "topic must be specified when using limitToPartitionsWithLag", None
        )
    if scaler.limit_to_partitions_with_lag and scaler.even_distribution:
        raise ScaledObjectProblem(
            meta.path("ensureEvenDistributionOfPartitions"),
            "limitToPartitionsWithLag and ensureEvenDistributionOfPartitions cannot be set simultaneously",
            True,
        )
    if meta.flag("excludePersistentLag"):
        raise ScaledObjectProblem(
            meta.path("excludePersistentLag"), "skenario does not simulate excludePersistentLag", True
        )


def _resource(trigger: TriggerModel, index: int, meta: _Metadata) -> ResourceScaler:
    """`parseResourceMetadata` (cpu_memory_scaler.go): `value` as a percentage or a quantity."""
    metric_type = trigger.metric_type or meta.values.get("type") or ""
    if metric_type not in (UTILIZATION, AVERAGE_VALUE):
        raise ScaledObjectProblem(
            f"triggers.{index}.metricType",
            "a cpu or memory trigger needs metricType Utilization or AverageValue",
            metric_type or None,
        )
    text = meta.text("value")
    if metric_type == UTILIZATION:
        try:
            value = int(text)
        except ValueError:
            raise ScaledObjectProblem(meta.path("value"), "a Utilization value is a whole percentage", text) from None
    else:
        try:
            value = milli_quantity(text)
        except ValueError:
            raise ScaledObjectProblem(
                meta.path("value"), "an AverageValue is a quantity such as 500m or 1Gi", text
            ) from None
    return ResourceScaler(
        index=index,
        name=trigger.name,
        metric_type=metric_type,
        resource=trigger.type,
        value=value,
        container=meta.values.get("containerName") or None,
    )


def _cron(common: tuple[int, str | None, str], meta: _Metadata) -> CronScaler:
    """`cronMetadata.Validate`: both schedules parse, they differ, and desiredReplicas is set."""
    zone = meta.text("timezone")
    try:
        timezone(zone)
    except CronError as exc:
        raise ScaledObjectProblem(meta.path("timezone"), str(exc), zone) from None
    schedules = []
    for key in ("start", "end"):
        text = meta.text(key)
        try:
            schedules.append(parse_schedule(text))
        except CronError as exc:
            raise ScaledObjectProblem(meta.path(key), f"error parsing {key} schedule: {exc}", text) from None
    if schedules[0].text == schedules[1].text:
        raise ScaledObjectProblem(
            meta.path("end"), "start and end can not have exactly same time input", schedules[1].text
        )
    desired = meta.whole("desiredReplicas", 0)
    if desired == 0:
        raise ScaledObjectProblem(meta.path("desiredReplicas"), "no desiredReplicas specified", None)
    return CronScaler(*common, timezone_name=zone, start=schedules[0], end=schedules[1], desired_replicas=desired)


def _annotation_replicas(annotations: Mapping[str, Any]) -> int | None:
    value = annotations.get(PAUSED_REPLICAS)
    if value is None:
        return None
    try:
        replicas = int(str(value))
    except ValueError:
        raise ScaledObjectProblem(f"metadata.annotations.{PAUSED_REPLICAS}", "must be a whole number", value) from None
    if replicas < 0:
        raise ScaledObjectProblem(f"metadata.annotations.{PAUSED_REPLICAS}", "must be >= 0", replicas)
    return replicas


def _flag(annotations: Mapping[str, Any], key: str) -> bool:
    return str(annotations.get(key, "false")).lower() == "true"


def scaled_object(
    spec: ScaledObjectSpecModel,
    name: str,
    *,
    annotations: Mapping[str, Any] | None = None,
    queries: Mapping[str, str] | None = None,
    stream: bool = False,
    epoch: datetime = EPOCH,
) -> ScaledObjectSpec:
    """The ScaledObject as KEDA's operator uses it; ScaledObjectProblem (with the spec's path) for a mistake."""
    annotations = annotations or {}
    queries = queries or {}
    scalers = tuple(_scaler(trigger, index, queries, stream) for index, trigger in enumerate(spec.triggers))
    fallback = None
    if spec.fallback is not None:
        fallback = Fallback(spec.fallback.failure_threshold, spec.fallback.replicas, spec.fallback.behavior or STATIC)
        assert fallback.behavior in BEHAVIORS
    modifiers = _modifiers(spec, scalers)
    if fallback is not None and modifiers is None and all(not scaler.external for scaler in scalers):
        raise ScaledObjectProblem(
            "fallback",
            "at least one trigger (that is not cpu or memory) has to have the `AverageValue` type "
            "for the fallback to be enabled",
        )
    if fallback is not None and fallback.behavior == "scalingModifiers" and modifiers is None:
        raise ScaledObjectProblem(
            "fallback.behavior",
            "scalingModifiers fallback behavior requires scalingModifiers.formula to be defined",
            fallback.behavior,
        )
    advanced = spec.advanced
    hpa_config = advanced.horizontal_pod_autoscaler_config if advanced is not None else None
    behavior = hpa_config.behavior if hpa_config is not None else None
    pause_in, pause_out = _flag(annotations, PAUSED_SCALE_IN), _flag(annotations, PAUSED_SCALE_OUT)
    if pause_in or pause_out:  # newHPAForScaledObject disables the paused direction of the HPA
        written = behavior.model_dump(by_alias=True, exclude_none=True) if behavior is not None else {}
        for key, paused in (("scaleDown", pause_in), ("scaleUp", pause_out)):
            if paused:
                written[key] = {**written.get(key, {}), "selectPolicy": "Disabled"}
        behavior = BehaviorModel.model_validate(written)
    return ScaledObjectSpec(
        name=name,
        scalers=scalers,
        executor=ExecutorSpec(
            min_replicas=spec.min_replica_count,
            idle_replicas=spec.idle_replica_count,
            cooldown=(300 if spec.cooldown_period is None else spec.cooldown_period) * SECOND,
            initial_cooldown=(spec.initial_cooldown_period or 0) * SECOND,
            fallback_replicas=fallback.replicas if fallback is not None else None,
            pause_scale_in=pause_in,
            pause_scale_out=pause_out,
            force_activation=_flag(annotations, FORCE_ACTIVATION),
        ),
        polling_interval=(spec.polling_interval or 30) * SECOND,
        max_replicas=spec.max_replica_count or DEFAULT_MAX_REPLICAS,
        fallback=fallback,
        modifiers=modifiers,
        behavior=behavior.build() if behavior is not None else None,
        cached=frozenset(i for i, trigger in enumerate(spec.triggers) if trigger.use_cached_metrics),
        paused=_flag(annotations, PAUSED),
        paused_replicas=_annotation_replicas(annotations),
        epoch=epoch,
        hpa_config_name=hpa_config.name if hpa_config is not None else None,
    )


def _modifiers(spec: ScaledObjectSpecModel, scalers: tuple[Scaler, ...]) -> ScalingModifiers | None:
    """`advanced.scalingModifiers`, checked as the scalers cache's `validateScalingModifiers` checks it: a
    formula needs a target above 0 and reads only named triggers."""
    advanced = spec.advanced
    model = advanced.scaling_modifiers if advanced is not None else None
    if model is None or not model.formula:
        return None
    names = {scaler.name for scaler in scalers if scaler.name is not None}
    try:
        formula = parse(model.formula, names)
    except FormulaError as exc:
        raise ScaledObjectProblem("advanced.scalingModifiers.formula", str(exc), model.formula) from None
    try:
        target = float(model.target)
    except ValueError:
        raise ScaledObjectProblem(
            "advanced.scalingModifiers.target", "the target must be a number above 0", model.target
        ) from None
    if not target > 0:
        raise ScaledObjectProblem(
            "advanced.scalingModifiers.target", "the target must be a number above 0", model.target
        )
    try:
        activation = float(model.activation_target) if model.activation_target else 0.0
    except ValueError:
        raise ScaledObjectProblem(
            "advanced.scalingModifiers.activationTarget",
            "the activation target must be a number",
            model.activation_target,
        ) from None
    return ScalingModifiers(formula, target, activation, model.metric_type or AVERAGE_VALUE)
