"""Knative autoscaling settings as Knative reads them: revision annotations and `config-autoscaler`.

A scenario's `type: kpa` takes `annotations` (the `autoscaling.knative.dev/*` keys of a revision
template), `config` (the keys of the `config-autoscaler` ConfigMap) and, optionally, a Knative
Service `manifest` whose template annotations and `containerConcurrency` are read. Values are
strings or numbers as in YAML; durations are Go durations (`60s`). Annotations override the
ConfigMap, as in Knative. An unknown key or a bad value is a ScenarioError naming the key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import fields
from typing import Any, Literal

from pydantic import ConfigDict

from skenario.autoscalers.kpa.config import (
    PANIC_THRESHOLD_PERCENTAGE_MAX,
    PANIC_THRESHOLD_PERCENTAGE_MIN,
    KPAConfig,
    KPAConfigError,
)
from skenario.core.time import parse_duration
from skenario.errors import ScenarioError, UnitError
from skenario.scenario.format.base import Loose, Spec

PREFIX = "autoscaling.knative.dev/"
KPA_CLASS = "kpa.autoscaling.knative.dev"


def _number(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError("expected a number")
    return float(value)


def _whole(value: Any) -> int:
    number = _number(value)
    if number != int(number):
        raise ValueError("expected a whole number")
    return int(number)


def _duration(value: Any) -> int:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return round(float(value) * 1e9)  # Knative reads a bare number of seconds for some keys
    return parse_duration(str(value))


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise ValueError("expected true or false")
    return text == "true"


def _text(value: Any) -> str:
    return str(value)


Parse = Callable[[Any], Any]

# key -> (KPAConfig field, parser); the `config-autoscaler` ConfigMap (config.go).
CONFIG_KEYS: dict[str, tuple[str, Parse]] = {
    "container-concurrency-target-percentage": ("container_concurrency_target_percentage", _number),
    "container-concurrency-target-default": ("container_concurrency_target_default", _number),
    "requests-per-second-target-default": ("rps_target_default", _number),
    "target-burst-capacity": ("target_burst_capacity", _number),
    "activator-capacity": ("activator_capacity", _number),
    "stable-window": ("stable_window", _duration),
    "panic-window-percentage": ("panic_window_percentage", _number),
    "panic-threshold-percentage": ("panic_threshold_percentage", _number),
    "max-scale-up-rate": ("max_scale_up_rate", _number),
    "max-scale-down-rate": ("max_scale_down_rate", _number),
    "enable-scale-to-zero": ("enable_scale_to_zero", _boolean),
    "scale-to-zero-grace-period": ("scale_to_zero_grace_period", _duration),
    "scale-to-zero-pod-retention-period": ("scale_to_zero_pod_retention_period", _duration),
    "scale-down-delay": ("scale_down_delay", _duration),
    "initial-scale": ("initial_scale", _whole),
    "allow-zero-initial-scale": ("allow_zero_initial_scale", _boolean),
    "min-scale": ("min_scale", _whole),
    "max-scale": ("max_scale", _whole),
    "pod-autoscaler-class": ("", _text),
}

# autoscaling.knative.dev/<key> -> (KPAConfig field, parser); the revision annotations.
ANNOTATION_KEYS: dict[str, tuple[str, Parse]] = {
    "class": ("", _text),
    "metric": ("scaling_metric", _text),
    "target": ("target", _number),
    "target-utilization-percentage": ("target_utilization_percentage", _number),
    "target-burst-capacity": ("target_burst_capacity", _number),
    "window": ("stable_window", _duration),
    "panic-window-percentage": ("panic_window_percentage", _number),
    "panic-threshold-percentage": ("panic_threshold_percentage", _number),
    "min-scale": ("min_scale", _whole),
    "minScale": ("min_scale", _whole),
    "max-scale": ("max_scale", _whole),
    "maxScale": ("max_scale", _whole),
    "initial-scale": ("initial_scale", _whole),
    "activation-scale": ("activation_scale", _whole),
    "scale-down-delay": ("scale_down_delay", _duration),
    "scale-to-zero-pod-retention-period": ("scale_to_zero_pod_retention_period", _duration),
    "metric-aggregation-algorithm": ("aggregation_algorithm", _text),
}

_FIELD_NAMES = {f.name for f in fields(KPAConfig)}

# Ranges `ValidateAnnotations` checks on annotations alone (the ConfigMap's `validate` does not).
ANNOTATION_RANGES: dict[str, tuple[float, float]] = {
    "panic-threshold-percentage": (PANIC_THRESHOLD_PERCENTAGE_MIN, PANIC_THRESHOLD_PERCENTAGE_MAX),
}


class KnativeServiceManifest(Spec):
    """A `serving.knative.dev/v1` Service; only the revision template's autoscaling is read."""

    model_config = ConfigDict(extra="allow", frozen=True)

    api_version: Literal["serving.knative.dev/v1"]
    kind: Literal["Service"]
    spec: Loose

    def template(self) -> tuple[dict[str, Any], int | None]:
        """The template's annotations and containerConcurrency."""
        template = (self.spec.model_extra or {}).get("template") or {}
        metadata = template.get("metadata") or {}
        annotations = metadata.get("annotations") or {}
        concurrency = (template.get("spec") or {}).get("containerConcurrency")
        return dict(annotations), concurrency


def kpa_config(
    annotations: Mapping[str, Any],
    config: Mapping[str, Any],
    *,
    container_concurrency: int | None = None,
    field: str,
    file: str | None = None,
) -> KPAConfig:
    """The KPAConfig of a revision: ConfigMap keys first, annotations over them, then validated."""
    values: dict[str, Any] = {}
    written: dict[str, tuple[str, Any]] = {}  # each setting's field and value as written, for errors
    for key, value in config.items():
        _apply(values, key, value, CONFIG_KEYS, f"{field}.config.{key}", file)
        written[CONFIG_KEYS[key][0]] = (f"{field}.config.{key}", value)
    for key, value in annotations.items():
        if not key.startswith(PREFIX):
            continue  # other annotations are not the autoscaler's
        short = key[len(PREFIX) :]
        _apply(values, short, value, ANNOTATION_KEYS, f"{field}.annotations.{key}", file)
        written[ANNOTATION_KEYS[short][0]] = (f"{field}.annotations.{key}", value)
        if short in ANNOTATION_RANGES:
            low, high = ANNOTATION_RANGES[short]
            if not low <= values[ANNOTATION_KEYS[short][0]] <= high:
                raise ScenarioError(
                    f"must be in [{low:g}, {high:g}]", field=f"{field}.annotations.{key}", value=value, file=file
                )
    if container_concurrency is not None:
        values["container_concurrency"] = container_concurrency
    pa_class = values.pop("", KPA_CLASS)
    if pa_class != KPA_CLASS:
        raise ScenarioError(
            f"only the KPA ({KPA_CLASS}) is simulated here; use type: hpa for the HPA class",
            field=f"{field}.annotations",
            value=pa_class,
            file=file,
        )
    try:
        return KPAConfig(**values)
    except KPAConfigError as exc:
        setting = CONFIG_KEYS.get(exc.field, ANNOTATION_KEYS.get(exc.field, ("", None)))[0]
        where, value = written.get(setting, (f"{field} ({exc.field})", exc.value))
        raise ScenarioError(exc.message, field=where, value=value, file=file) from None


def _apply(
    values: dict[str, Any], key: str, value: Any, known: dict[str, tuple[str, Parse]], where: str, file: str | None
) -> None:
    entry = known.get(key)
    if entry is None:
        raise ScenarioError(f"unknown key; known: {', '.join(sorted(known))}", field=where, value=key, file=file)
    name, parse = entry
    try:
        parsed = parse(value)
    except (ValueError, UnitError) as exc:
        raise ScenarioError(f"bad value: {exc}", field=where, value=value, file=file) from None
    assert name == "" or name in _FIELD_NAMES
    values[name] = parsed
