"""The `spec.events` schema: every mistake in a timeline is one ScenarioError at load, naming its field and line."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from skenario.errors import ScenarioError
from skenario.scenario.format.autoscalers import autoscaler_names
from skenario.scenario.format.events import merge_patch, split_target
from skenario.scenario.loader import parse_scenario
from skenario.scenario.simulation import Phase, Simulation

HEAD = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: events}
spec:
  duration: 60s
  workload:
    replicas: 2
    request: {cpuTime: 10ms}
  traffic: {type: constant, rate: 10/s}
  autoscalers:
    - {type: hpa, spec: {maxReplicas: 5}}
  events:
"""


def scenario(*events: str) -> str:
    return HEAD + "".join(f"    {event}\n" for event in events)


def error_for(text: str) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text, source="s.yaml")
    error = info.value
    assert error.file == "s.yaml"
    return error


def line_of(text: str, marker: str, occurrence: int = 1) -> int:
    """The 1-based line of the `occurrence`-th line containing `marker`."""
    found = [number for number, line in enumerate(text.splitlines(), start=1) if marker in line]
    return found[occurrence - 1]


# -- one operation per event -------------------------------------------------------------------


def test_an_event_with_no_operation_names_the_event_and_says_how_to_write_one() -> None:
    text = scenario("- {id: nothing, at: 1s}")
    error = error_for(text)
    assert error.field == "spec.events.0"
    assert error.line == line_of(text, "id: nothing")
    assert "exactly one operation" in error.message
    assert "found none" in error.message
    assert "done: {}" in error.message


def test_an_event_with_two_operations_names_both() -> None:
    text = scenario("- {id: ok, at: 1s, done: {}}", "- {id: both, at: 2s, delete: {target: traffic}, done: {}}")
    error = error_for(text)
    assert error.field == "spec.events.1"
    assert error.line == line_of(text, "id: both")
    assert "exactly one operation" in error.message
    assert "delete, done" in error.message


def test_duplicate_ids_name_the_second_event_and_its_line() -> None:
    text = scenario(
        "- {id: twice, at: 1s, delete: {target: metrics}}", "- {id: twice, at: 2s, create: {target: metrics}}"
    )
    error = error_for(text)
    assert "twice" in error.message
    # The second event is where the mistake is; the error points there, not at `spec:`.
    assert error.field == "spec.events.1.id"
    assert error.line == line_of(text, "id: twice", occurrence=2)


def test_a_negative_time_is_refused() -> None:
    text = scenario("- {id: early, at: -1s, done: {}}")
    error = error_for(text)
    assert error.field == "spec.events.0.at"
    assert error.line == line_of(text, "id: early")


# -- RFC 7386 ------------------------------------------------------------------------------------

# RFC 7386 (JSON Merge Patch), Appendix A "Example Test Cases", restated as data: (original, patch, result).
RFC_7386_APPENDIX_A: list[tuple[Any, Any, Any]] = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"a": "foo"}, None, None),
    ({"a": "foo"}, "bar", "bar"),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize(("original", "patch", "result"), RFC_7386_APPENDIX_A)
def test_merge_patch_gives_the_rfc_7386_appendix_a_results(original: Any, patch: Any, result: Any) -> None:
    before = copy.deepcopy(original)
    assert merge_patch(original, patch) == result
    assert original == before  # the document as written is never changed in place


def test_split_target() -> None:
    assert split_target("traffic") == ("traffic", None)
    assert split_target("autoscaler/web") == ("autoscaler", "web")
    assert split_target("replica/3") == ("replica", "3")


def test_a_patch_is_merged_onto_the_object_as_written() -> None:
    # The patch changes the rate only: type and window come from the traffic as written.
    text = scenario("- {id: rush, at: 10s, patch: {target: traffic, patch: {rate: 40/s}}}")
    assert parse_scenario(text).spec.events[0].patch is not None
    # Removing a required field with null makes an invalid object, named at its place in the patch.
    error = error_for(scenario("- {id: untyped, at: 10s, patch: {target: traffic, patch: {type: null}}}"))
    assert error.field is not None and error.field.startswith("spec.events.0.patch.patch")


# -- targets and the operations they take --------------------------------------------------------


def test_an_unknown_target_kind_lists_the_known_ones() -> None:
    text = scenario("- {id: pods, at: 1s, delete: {target: pod/web-1}}")
    error = error_for(text)
    assert error.field == "spec.events.0.delete.target"
    assert error.value == "pod/web-1"
    assert error.line == line_of(text, "id: pods")
    for kind in ("workload", "traffic", "metrics", "autoscaler/<name>", "replica", "node/<name>"):
        assert kind in error.message


def test_a_node_target_without_a_cluster_names_spec_cluster() -> None:
    error = error_for(scenario("- {id: drain, at: 1s, delete: {target: node/x}}"))
    assert error.field == "spec.events.0.delete.target"
    assert error.value == "node/x"
    assert error.message == "node events need spec.cluster"


@pytest.mark.parametrize(
    ("event", "field", "words"),
    [
        ("- {id: e, at: 1s, create: {target: workload, object: {}}}", "spec.events.0.create", "only patch, not create"),
        ("- {id: e, at: 1s, delete: {target: workload}}", "spec.events.0.delete", "only patch, not delete"),
        ("- {id: e, at: 1s, patch: {target: replica, patch: {}}}", "spec.events.0.patch", "only delete, not patch"),
        ("- {id: e, at: 1s, create: {target: replica/0}}", "spec.events.0.create", "only delete, not create"),
    ],
)
def test_an_operation_the_target_does_not_take(event: str, field: str, words: str) -> None:
    text = scenario(event)
    error = error_for(text)
    assert error.field == field
    assert words in error.message
    assert error.line == line_of(text, "id: e")


def test_an_autoscaler_target_needs_a_name() -> None:
    error = error_for(scenario("- {id: e, at: 1s, delete: {target: autoscaler}}"))
    assert error.field == "spec.events.0.delete.target"
    assert "autoscaler/<name>" in error.message


def test_a_patch_of_a_missing_autoscaler_names_the_ones_there() -> None:
    text = scenario("- {id: tune, at: 1s, patch: {target: autoscaler/kpa, patch: {config: {}}}}")
    error = error_for(text)
    assert error.field == "spec.events.0.patch.target"
    assert "'kpa'" in error.message
    assert "there are: hpa" in error.message
    assert error.line == line_of(text, "id: tune")


def test_a_create_of_an_existing_autoscaler() -> None:
    error = error_for(scenario("- {id: again, at: 1s, create: {target: autoscaler/hpa, object: {type: kpa}}}"))
    assert error.field == "spec.events.0.create.target"
    assert "'hpa' exists already" in error.message


def test_an_autoscaler_is_checked_against_the_timeline_so_far() -> None:
    # Created by an earlier event, it can be patched; deleted, it cannot.
    created = "- {id: add, at: 1s, create: {target: autoscaler/extra, object: {type: hpa, spec: {maxReplicas: 3}}}}"
    patched = "- {id: tune, at: 2s, patch: {target: autoscaler/extra, patch: {syncPeriod: 30s}}}"
    assert len(parse_scenario(scenario(created, patched)).spec.events) == 2
    deleted = "- {id: gone, at: 1s, delete: {target: autoscaler/hpa}}"
    text = scenario(deleted, "- {id: late, at: 2s, patch: {target: autoscaler/hpa, patch: {syncPeriod: 30s}}}")
    error = error_for(text)
    assert error.field == "spec.events.1.patch.target"
    assert "there are: none" in error.message
    # Order is by time, not by place in the file.
    reordered = scenario(patched.replace("2s", "3s"), created)
    assert len(parse_scenario(reordered).spec.events) == 2


def test_traffic_deleted_then_patched() -> None:
    text = scenario(
        "- {id: quiet, at: 10s, delete: {target: traffic}}",
        "- {id: rush, at: 20s, patch: {target: traffic, patch: {rate: 40/s}}}",
    )
    error = error_for(text)
    assert error.field == "spec.events.1.patch.target"
    assert "no traffic now" in error.message
    assert error.line == line_of(text, "id: rush")


def test_traffic_created_while_there_is_some() -> None:
    error = error_for(scenario("- {id: more, at: 1s, create: {target: traffic, object: {type: constant, rate: 1}}}"))
    assert error.field == "spec.events.0.create.target"
    assert "exists already" in error.message


def test_metrics_deleted_twice() -> None:
    text = scenario(
        "- {id: down, at: 10s, delete: {target: metrics}}", "- {id: down-again, at: 20s, delete: {target: metrics}}"
    )
    error = error_for(text)
    assert error.field == "spec.events.1.delete.target"
    assert "down already" in error.message
    assert error.line == line_of(text, "id: down-again")


def test_metrics_created_while_up() -> None:
    error = error_for(scenario("- {id: up, at: 10s, create: {target: metrics}}"))
    assert error.field == "spec.events.0.create.target"
    assert "is up" in error.message


def test_an_event_at_or_after_the_end_would_never_happen() -> None:
    text = scenario("- {id: late, at: 60s, delete: {target: metrics}}")
    error = error_for(text)
    assert error.field == "spec.events.0.at"
    assert error.line == line_of(text, "id: late")
    assert "'late'" in error.message and "never happen" in error.message
    # A done event ends the run earlier; anything after it is too late as well.
    error = error_for(scenario("- {id: end, at: 30s, done: {}}", "- {id: after, at: 40s, delete: {target: metrics}}"))
    assert error.field == "spec.events.1.at"


def test_an_invalid_patch_names_the_inner_field_and_its_line() -> None:
    text = HEAD + (
        "    - id: rush\n      at: 10s\n      patch:\n        target: traffic\n        patch:\n          rate: -4/s\n"
    )
    error = error_for(text)
    assert error.field == "spec.events.0.patch.patch.rate"
    assert error.line == line_of(text, "rate: -4/s")
    assert error.value == "-4/s"
    assert "spec.events.0.patch.patch.rate" in str(error) and "s.yaml:" in str(error)


def test_an_invalid_autoscaler_patch_names_the_inner_field() -> None:
    text = scenario("- {id: tune, at: 1s, patch: {target: autoscaler/hpa, patch: {syncPeriod: 0s}}}")
    error = error_for(text)
    assert error.field == "spec.events.0.patch.patch.syncPeriod"
    assert error.line == line_of(text, "id: tune")


def test_a_workload_patch_may_not_change_what_is_fixed_at_the_start() -> None:
    text = scenario("- {id: slow, at: 1s, patch: {target: workload, patch: {launch: {readiness: 10s}}}}")
    error = error_for(text)
    assert error.field == "spec.events.0.patch.patch"
    assert "cannot change launch during a run" in error.message
    assert "replicas" in error.message  # says what may change
    error = error_for(scenario("- {id: t, at: 1s, patch: {target: workload, patch: {request: {timeout: 1s}}}}"))
    assert "request.timeout" in error.message


def test_a_done_event_at_zero_is_a_scenario_error_or_an_empty_run() -> None:
    # `at` may be 0; a run that ends there either is refused as a mistake in the file, or ends at once.
    text = scenario("- {id: never, at: 0s, done: {}}")
    try:
        simulation = Simulation(parse_scenario(text, source="s.yaml"))
    except ScenarioError as error:
        assert error.field == "spec.events.0.at"
        return
    simulation.run()
    assert simulation.phase is Phase.COMPLETED and simulation.env.now() == 0


def test_an_inline_manifest_whose_name_is_not_a_string_is_named_by_its_type() -> None:
    """A manifest's metadata is read loosely: a name that is no string (a fuzzer's list) does not name the
    autoscaler, which is then named by its type, as with no name at all (it used to crash the check)."""
    manifest = (
        "{type: hpa, manifest: {apiVersion: autoscaling/v2, kind: HorizontalPodAutoscaler, metadata: {name: [[x]]}, "
        "spec: {scaleTargetRef: {kind: Deployment, name: web}, maxReplicas: 4}}}"
    )
    text = HEAD.replace("{type: hpa, spec: {maxReplicas: 5}}", manifest).replace("  events:\n", "")
    assert autoscaler_names(parse_scenario(text).spec.autoscalers) == ["hpa"]
