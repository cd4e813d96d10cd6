"""Scenario files: what valid files mean, and the one clear error each kind of mistake gives."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.core.random import Constant, Exponential
from skenario.core.time import MILLISECOND, MINUTE
from skenario.errors import ScenarioError
from skenario.model.cpu.node import QoSClass, qos_class
from skenario.model.disruption import DisruptionBudget
from skenario.scenario.loader import load_scenario, parse_scenario

VALID = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata:
  name: test
spec:
  duration: 10m
  seed: 7
  workload:
    replicas: 2
    request:
      cpuTime:
        distribution: exponential
        mean: 200ms
  traffic:
    type: poisson
    rate: 300/m
"""


def test_valid_scenario_values(examples_dir: Path) -> None:
    scenario = parse_scenario(VALID)
    spec = scenario.spec
    assert spec.duration == 10 * MINUTE
    assert spec.seed == 7
    assert spec.traffic.rate == 5.0  # 300 per minute
    cluster = spec.cluster_spec()
    assert cluster.requests.cpu_time == Exponential(200 * MILLISECOND)
    assert cluster.requests.io_time is None
    assert cluster.initial_replicas == 2
    assert cluster.replica.cpu_request == 1000  # Kubernetes-like default request of one core
    # No limit and no spec.cluster: the pod may use all of the implicit 4-core node it runs alone on.
    assert cluster.replica.cpu_capacity == 4000
    assert load_scenario(examples_dir / "quickstart.yaml").metadata.name == "quickstart"


def test_cpu_time_shorthand_is_a_constant() -> None:
    scenario = parse_scenario(
        VALID.replace(
            "      cpuTime:\n        distribution: exponential\n        mean: 200ms",
            "      cpuTime: 150ms\n      ioTime: 5ms",
        )
    )
    requests = scenario.spec.cluster_spec().requests
    assert requests.cpu_time == Constant(150 * MILLISECOND)
    assert requests.io_time == Constant(5 * MILLISECOND)


@pytest.mark.parametrize(
    ("written", "millicores"),
    [("500m", 500), ("1", 1000), ("0.25", 250), ("2", 2000), ("1500m", 1500)],
)
def test_cpu_quantities_read_as_kubernetes_writes_them(written: str, millicores: int) -> None:
    text = VALID.replace("    replicas: 2\n", f"    replicas: 2\n    resources: {{requests: {{cpu: '{written}'}}}}\n")
    assert parse_scenario(text).spec.cluster_spec().replica.cpu_request == millicores


def test_cpu_limit_is_the_capacity_and_may_not_be_below_the_request() -> None:
    resources = "    resources: {requests: {cpu: 500m}, limits: {cpu: 2}}\n"
    spec = parse_scenario(VALID.replace("    replicas: 2\n", "    replicas: 2\n" + resources)).spec.cluster_spec()
    assert (spec.replica.cpu_request, spec.replica.cpu_capacity) == (500, 2000)
    below = "    resources: {requests: {cpu: 500m}, limits: {cpu: 100m}}\n"
    error = error_for(VALID.replace("    replicas: 2\n", "    replicas: 2\n" + below))
    assert error.field is not None and error.field.startswith("spec.workload.resources")
    assert "100m" in error.message and "500m" in error.message


def test_a_limit_above_the_implicit_node_is_capped_by_the_node_and_the_node_can_be_sized() -> None:
    resources = "    resources: {requests: {cpu: 500m}, limits: {cpu: 8}}\n"
    spec = parse_scenario(VALID.replace("    replicas: 2\n", "    replicas: 2\n" + resources)).spec.cluster_spec()
    assert spec.replica.cpu_capacity == 4000  # the default implicit node: 4 cores
    sized = resources + "    node: {cpu: 16}\n"
    spec = parse_scenario(VALID.replace("    replicas: 2\n", "    replicas: 2\n" + sized)).spec.cluster_spec()
    assert spec.replica.cpu_capacity == 8000  # now the limit binds


def test_the_cfs_quota_is_for_pods_alone_on_their_nodes() -> None:
    quota = "    cfsQuotaPeriod: 100ms\n"
    spec = parse_scenario(VALID.replace("    replicas: 2\n", "    replicas: 2\n" + quota)).spec.cluster_spec()
    assert spec.replica.cfs_quota_period == 100 * MILLISECOND
    cluster = "  cluster: {nodes: [{name: a, cpu: 4, memory: 8Gi}]}\n"
    error = error_for(VALID.replace("    replicas: 2\n", "    replicas: 2\n" + quota) + cluster)
    assert "cfsQuotaPeriod" in error.message


def test_a_disruption_budget_reaches_the_model_and_bad_ones_are_refused() -> None:
    budget = "  disruptionBudget: {maxUnavailable: '25%'}\n"
    spec = parse_scenario(VALID + budget).spec.cluster_spec()
    assert spec.disruption_budget == DisruptionBudget(max_unavailable="25%")
    for bad in ("{minAvailable: 1, maxUnavailable: 1}", "{minAvailable: half}", "{minAvailable: -1}", "{}"):
        error = error_for(VALID + f"  disruptionBudget: {bad}\n")
        assert error.field is not None and error.field.startswith("spec.disruptionBudget")


def test_negative_memory_is_refused_with_its_field_and_value() -> None:
    resources = "    resources: {requests: {cpu: 500m, memory: -1Gi}}\n"
    error = error_for(VALID.replace("    replicas: 2\n", "    replicas: 2\n" + resources))
    assert error.field == "spec.workload.resources.requests.memory"
    assert error.value == "-1Gi"


def test_launch_stages_default_to_five_seconds_and_zero_stages_are_dropped() -> None:
    stages = parse_scenario(VALID).spec.cluster_spec().replica.launch
    assert [s.name for s in stages] == ["containerStart", "readiness"]
    assert sum(s.duration.mean() for s in stages) == 5 * 1e9  # the Go Skenario's launch delay
    custom = VALID.replace(
        "    replicas: 2\n",
        "    replicas: 2\n    launch: {imagePull: {distribution: exponential, mean: 3s}, readiness: 0s}\n",
    )
    stages = parse_scenario(custom).spec.cluster_spec().replica.launch
    assert [s.name for s in stages] == ["imagePull", "containerStart"]
    assert stages[0].duration == Exponential(3e9)


def with_workload(lines: str) -> str:
    return VALID.replace("    replicas: 2\n", "    replicas: 2\n" + lines)


def test_memory_reads_requests_limits_and_working_set_in_bytes() -> None:
    lines = (
        "    resources: {requests: {cpu: 500m, memory: 256Mi}, limits: {memory: 1G}}\n"
        "    memory: {baseline: 200Mi, perRequest: {distribution: uniform, min: 1Mi, max: 3Mi}}\n"
        "    node: {memory: 8Gi}\n"
    )
    replica = parse_scenario(with_workload(lines)).spec.cluster_spec().replica
    assert (replica.memory_request, replica.memory_limit) == (256 * 2**20, 10**9)
    assert replica.cpu_limit is None  # limits.memory alone leaves the CPU unlimited
    assert replica.memory is not None
    assert replica.memory.baseline == Constant(200 * 2**20)
    assert replica.memory.per_request is not None and replica.memory.per_request.mean() == 2 * 2**20
    assert replica.memory.node_memory == 8 * 2**30


def test_a_memory_request_left_out_defaults_to_the_limit() -> None:
    lines = "    resources: {requests: {cpu: 500m}, limits: {memory: 512Mi}}\n"
    replica = parse_scenario(with_workload(lines)).spec.cluster_spec().replica
    assert replica.memory_request == replica.memory_limit == 512 * 2**20
    assert replica.memory is None  # no working set given: memory use is not modelled


@pytest.mark.parametrize(
    ("lines", "requests", "limits", "qos"),
    [
        ("", (1000, None), (None, None), QoSClass.BURSTABLE),  # no resources at all: skenario's 1000m
        ("    resources: {}\n", (0, None), (None, None), QoSClass.BEST_EFFORT),  # as in a Pod spec
        ("    resources: {requests: {}}\n", (0, None), (None, None), QoSClass.BEST_EFFORT),
        ("    resources: {requests: {memory: 1Gi}}\n", (0, 2**30), (None, None), QoSClass.BURSTABLE),
        # The API server defaults a request left out to its limit: Guaranteed.
        ("    resources: {limits: {cpu: 2, memory: 1Gi}}\n", (2000, 2**30), (2000, 2**30), QoSClass.GUARANTEED),
    ],
)
def test_resources_read_as_a_pod_spec_writes_them_best_effort_included(
    lines: str, requests: tuple[int, int | None], limits: tuple[int | None, int | None], qos: QoSClass
) -> None:
    replica = parse_scenario(with_workload(lines)).spec.cluster_spec().replica
    assert (replica.cpu_request, replica.memory_request) == requests
    assert (replica.cpu_limit, replica.memory_limit) == limits
    assert qos_class(replica.cpu_request, replica.cpu_limit, replica.memory_request, replica.memory_limit) is qos


@pytest.mark.parametrize(
    ("lines", "field", "needle"),
    [
        (
            "    resources: {requests: {cpu: 500m, memory: 1Gi}, limits: {memory: 512Mi}}\n",
            "spec.workload.resources",
            "limits.memory (536870912 bytes) must not be below requests.memory (1073741824 bytes)",
        ),
        ("    memory: {baseline: -5Mi}\n", "spec.workload.memory.baseline", "greater than or equal to 0"),
        ("    memory: {baseline: 100Mi, perRequest: lots}\n", "spec.workload.memory.perRequest", "quantity"),
        ("    node: {memory: 0}\n", "spec.workload.node.memory", "greater than 0"),
    ],
)
def test_bad_memory_is_refused_naming_the_field(lines: str, field: str, needle: str) -> None:
    error = error_for(with_workload(lines))
    assert error.field is not None and error.field.startswith(field), error.field
    assert needle in error.message, error.message


def error_for(text: str) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text, source="s.yaml")
    return info.value


def test_bad_yaml_names_the_line() -> None:
    error = error_for(VALID.replace("  seed: 7", "  seed: [7"))
    assert error.file == "s.yaml"
    assert error.line is not None and error.line >= 7
    assert "YAML" in str(error)


def test_unknown_field_is_named_with_its_line() -> None:
    error = error_for(VALID.replace("    replicas: 2", "    replicas: 2\n    replica: 3"))
    assert error.field == "spec.workload.replica"
    assert error.line == VALID.splitlines().index("    replicas: 2") + 2
    assert "not a known field" in str(error)


def test_negative_rate_names_field_and_value() -> None:
    error = error_for(VALID.replace("rate: 300/m", "rate: -5"))
    assert error.field == "spec.traffic.rate"
    assert error.value == -5
    assert "-5" in str(error) and "spec.traffic.rate" in str(error) and "s.yaml" in str(error)


def test_wrong_unit_names_field_and_value() -> None:
    error = error_for(VALID.replace("duration: 10m", "duration: 5 parsecs"))
    assert error.field == "spec.duration"
    assert error.value == "5 parsecs"
    assert "5 parsecs" in str(error)


def test_bare_number_duration_asks_for_a_unit() -> None:
    error = error_for(VALID.replace("duration: 10m", "duration: 600"))
    assert error.field == "spec.duration"
    assert "unit" in str(error)


def test_missing_field_inside_a_union_names_the_user_path() -> None:
    error = error_for(VALID.replace("    rate: 300/m\n", ""))
    assert error.field == "spec.traffic.rate"
    assert "required" in str(error)


def test_unknown_traffic_type_is_named() -> None:
    error = error_for(VALID.replace("type: poisson", "type: gaussian"))
    assert error.field is not None and error.field.startswith("spec.traffic")
    assert "gaussian" in str(error)


def test_uniform_min_above_max() -> None:
    error = error_for(
        VALID.replace(
            "distribution: exponential\n        mean: 200ms", "distribution: uniform\n        min: 2s\n        max: 1s"
        )
    )
    assert error.field == "spec.workload.request.cpuTime"
    assert "min" in str(error)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("", "empty"),
        ("- a\n- b\n", "mapping"),
        (VALID.replace("skenario.dev/v1alpha1", "v2"), "apiVersion"),
        (VALID.replace("kind: Scenario", "kind: Deployment"), "kind"),
    ],
)
def test_document_level_mistakes(text: str, needle: str) -> None:
    assert needle in str(error_for(text))


def test_missing_file_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario(tmp_path / "nope.yaml")
    assert "nope.yaml" in str(info.value)


yaml_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-10, 10**6), st.floats(allow_nan=True), st.text(max_size=12)
)
yaml_values = st.recursive(
    yaml_scalars,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(
    path=st.sampled_from(
        [
            ("spec", "duration"),
            ("spec", "seed"),
            ("spec", "workload", "replicas"),
            ("spec", "workload", "request", "cpuTime"),
            ("spec", "workload", "request", "cpuTime", "mean"),
            ("spec", "workload", "resources", "requests", "cpu"),
            ("spec", "routing", "policy"),
            ("spec", "metrics", "lag"),
            ("spec", "traffic"),
            ("spec", "traffic", "rate"),
            ("spec", "traffic", "type"),
            ("metadata",),
            ("spec",),
            ("spec", "workload", "queueCapacity"),
            ("kind",),
        ]
    ),
    value=yaml_values,
)
def test_fuzzed_fields_give_a_scenario_or_a_scenario_error(path: tuple[str, ...], value: object) -> None:
    """Whatever a user puts in a field, loading ends in a Scenario or a ScenarioError, never a crash."""
    data = yaml.safe_load(VALID)
    node = data
    for key in path[:-1]:
        node = node.setdefault(key, {})  # a section left to its defaults is created to be fuzzed
    node[path[-1]] = value
    try:
        parse_scenario(yaml.safe_dump(data), source="fuzz.yaml")
    except ScenarioError as error:
        assert str(error).startswith("fuzz.yaml")


def test_a_key_written_twice_is_refused_with_its_line() -> None:
    text = (
        "apiVersion: skenario.dev/v1alpha1\nkind: Scenario\nmetadata: {name: d}\nspec:\n  duration: 1m\n"
        "  duration: 2m\n  workload: {replicas: 1, request: {cpuTime: 10ms}}\n  traffic: {type: constant, rate: 1/s}\n"
    )
    with pytest.raises(ScenarioError) as raised:
        parse_scenario(text)
    assert (raised.value.line, raised.value.field) == (6, "spec.duration")
    assert "twice" in str(raised.value)


@pytest.mark.parametrize(("value", "needle"), [(".nan", "nan is not a duration"), ("[1, 2]", "not a list")])
def test_a_duration_that_is_no_number_says_so_without_a_nonsense_suggestion(value: str, needle: str) -> None:
    text = (
        f"apiVersion: skenario.dev/v1alpha1\nkind: Scenario\nmetadata: {{name: d}}\nspec:\n  duration: {value}\n"
        "  workload: {replicas: 1, request: {cpuTime: 10ms}}\n  traffic: {type: constant, rate: 1/s}\n"
    )
    with pytest.raises(ScenarioError) as raised:
        parse_scenario(text)
    assert needle in str(raised.value) and "nans" not in str(raised.value)
