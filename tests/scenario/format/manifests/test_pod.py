"""A pod manifest read as kube-scheduler reads it: its requests (containers, init containers,
sidecars, overhead) and the fields the plugins use.

The request cases restate component-helpers/resource/helpers_test.go (`TestPodResourceRequests`)
and the Kubernetes documentation's worked examples (Sidecar containers: "Resource sharing within
containers"); the values are worked out by hand from the rule: max(sum of containers and
sidecars, the largest init stage) + overhead, where a stage is an init container plus the
sidecars started before it.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from skenario.scenario.format.manifests.pod import PodManifest
from skenario.scheduling.snapshot import DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST

Mi = 1024 * 1024


def container(name: str, cpu: str | None = None, memory: str | None = None, **extra: Any) -> dict[str, Any]:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    return {"name": name, "image": f"{name}:1", "resources": {"requests": requests}, **extra}


def pod(containers: list[dict[str, Any]], init: list[dict[str, Any]] = (), **spec: Any) -> PodManifest:  # type: ignore[assignment]
    return PodManifest.model_validate(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "labels": {"app": "web"}},
            "spec": {"containers": containers, "initContainers": list(init), **spec},
        }
    )


def build(manifest: PodManifest):  # type: ignore[no-untyped-def]
    return manifest.spec.build("p", "default", manifest.metadata.labels, 0, "PreemptLowerPriority", controlled=False)


# (case, containers, init containers, overhead, expected cpu millicores, expected memory MiB)
REQUEST_CASES = [
    # TestPodResourceRequests "nil options, larger init container": init 4 > container 2.
    ("larger init container", [container("c", "2")], [container("i", "4")], {}, 4000, None),
    # "nil options, larger containers": containers 2 + 3 > init 4.
    ("larger containers", [container("a", "2"), container("b", "3")], [container("i", "4")], {}, 5000, None),
    # "pod overhead excluded"/"included": overhead added on top.
    ("overhead", [container("c", "2", "1Gi")], [], {"cpu": "1", "memory": "5Gi"}, 3000, 6 * 1024),
    # "restartable init container": a sidecar 1 adds to container 1.
    ("sidecar adds", [container("c", "1")], [container("s", "1", restartPolicy="Always")], {}, 2000, None),
    # "multiple restartable init containers": sidecars 1+2+3 with container 1 = 7.
    (
        "sidecars add",
        [container("c", "1")],
        [
            container("s1", "1", restartPolicy="Always"),
            container("s2", "2", restartPolicy="Always"),
            container("s3", "3", restartPolicy="Always"),
        ],
        {},
        7000,
        None,
    ),
    # "init containers and restartable init containers": init 5 after sidecar 1 is a stage of 6 > 1+1.
    (
        "init stage counts the sidecars before it",
        [container("c", "1")],
        [container("s", "1", restartPolicy="Always"), container("i", "5")],
        {},
        6000,
        None,
    ),
    # An init container before the sidecar does not count it: stage 5 vs sum 1+1 -> 5.
    (
        "init stage before the sidecar",
        [container("c", "1")],
        [container("i", "5"), container("s", "1", restartPolicy="Always")],
        {},
        5000,
        None,
    ),
]


@pytest.mark.parametrize(
    ("containers", "init", "overhead", "cpu", "memory_mib"),
    [case[1:] for case in REQUEST_CASES],
    ids=[case[0] for case in REQUEST_CASES],
)
def test_the_request_is_what_kube_scheduler_counts(
    containers: list[dict[str, Any]],
    init: list[dict[str, Any]],
    overhead: dict[str, str],
    cpu: int,
    memory_mib: int | None,
) -> None:
    spec = build(pod(containers, init, overhead=overhead))
    assert spec.cpu == cpu
    assert spec.memory == (None if memory_mib is None else memory_mib * Mi)


def test_the_documentation_example_of_init_and_app_memory() -> None:
    """Kubernetes docs, init containers: init 200 Mi and 150 Mi, apps 120 Mi and 140 Mi -> 260 Mi;
    inits 300 and 500, apps 250 and 200, overhead 50 -> 550 Mi."""
    first = build(
        pod(
            [container("a", memory="120Mi"), container("b", memory="140Mi")],
            [container("i", memory="200Mi"), container("j", memory="150Mi")],
        )
    )
    assert first.memory == 260 * Mi
    second = build(
        pod(
            [container("a", memory="250Mi"), container("b", memory="200Mi")],
            [container("i", memory="300Mi"), container("j", memory="500Mi")],
            overhead={"memory": "50Mi"},
        )
    )
    assert second.memory == 550 * Mi


def test_a_limit_without_a_request_is_the_request() -> None:
    """The API server defaults a missing request to the limit (`SetDefaults_Pod`)."""
    manifest = pod([{"name": "c", "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}}}])
    spec = build(manifest)
    assert (spec.cpu, spec.memory) == (500, 1024 * Mi)


def test_scores_count_each_missing_request_as_the_default() -> None:
    """`NonMissingContainerRequests`: a container without a cpu request counts 100m in the scores, one
    with 0 counts 0; the filter counts neither."""
    spec = build(pod([container("a", "1", "1Gi"), {"name": "b"}, container("c", "0", "0")]))
    assert spec.cpu == 1000
    assert spec.non_zero == (1000 + DEFAULT_MILLI_CPU_REQUEST, 1024 * Mi + DEFAULT_MEMORY_REQUEST)


def test_the_fields_the_plugins_read() -> None:
    manifest = pod(
        [container("web", "1", ports=[{"containerPort": 80, "hostPort": 8080}, {"containerPort": 9090}])],
        [
            container("setup"),
            container(
                "proxy", ports=[{"containerPort": 15001, "hostPort": 15001, "protocol": "UDP"}], restartPolicy="Always"
            ),
        ],
        schedulingGates=[{"name": "wait-for-quota"}],
        volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "data-0"}}, {"name": "tmp", "emptyDir": {}}],
        affinity={
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": "topology.kubernetes.io/zone", "labelSelector": {"matchLabels": {"app": "web"}}}
                ]
            }
        },
        command=["ignored"],
    )
    spec = build(manifest)
    assert [(p.port, p.protocol, p.host_ip) for p in spec.host_ports] == [
        (8080, "TCP", "0.0.0.0"),
        (15001, "UDP", "0.0.0.0"),
    ]
    assert spec.images == ("setup:1", "proxy:1", "web:1")
    assert spec.claims == ("data-0",)
    assert spec.scheduling_gates == ("wait-for-quota",)
    (term,) = spec.pod_anti_affinity.required
    assert term.topology_key == "topology.kubernetes.io/zone"
    assert term.label_selector is not None and term.label_selector.matches({"app": "web"})


def test_match_label_keys_join_the_selector_with_the_pods_own_values() -> None:
    """`matchLabelKeys` (KEP-3633): the API server adds `key In (the pod's value)` to the selector."""
    manifest = pod(
        [container("c")],
        affinity={
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": "zone", "labelSelector": {"matchLabels": {"app": "web"}}, "matchLabelKeys": ["app"]}
                ]
            }
        },
    )
    (term,) = build(manifest).pod_affinity.required
    assert term.label_selector is not None
    assert [(r.key, r.operator, r.values) for r in term.label_selector.match_expressions] == [("app", "In", ("web",))]


@pytest.mark.parametrize(
    ("selector", "bad"),
    [
        ({"matchLabels": {"app": "web app"}}, "web app"),
        ({"matchExpressions": [{"key": "app", "operator": "In", "values": ["-web"]}]}, "-web"),
        ({"matchLabels": {"app": "x" * 64}}, "x" * 64),
        ({"matchLabels": {"bad key!": "web"}}, "bad key!"),
    ],
)
def test_an_invalid_label_in_a_selector_is_an_error_not_a_non_match(selector: dict[str, Any], bad: str) -> None:
    """`labels.NewRequirement` / `ValidateLabelSelector`: values are label values (63 characters,
    alphanumeric at both ends), keys qualified names."""
    anti = {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "zone", "labelSelector": selector}]}
    with pytest.raises(ValidationError, match="label"):
        pod([container("c")], affinity={"podAntiAffinity": anti})


def test_spread_match_label_keys_join_the_selector_with_the_pods_own_values() -> None:
    """Topology spread's `matchLabelKeys` (KEP-3243): `key In (the pod's value)` joins the selector; a key
    the pod has not is ignored (`mergeLabelSetWithSelector`)."""
    spread = {
        "maxSkew": 1,
        "topologyKey": "zone",
        "labelSelector": {"matchLabels": {"app": "web"}},
        "matchLabelKeys": ["pod-template-hash", "absent"],
    }
    manifest = PodManifest.model_validate(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "labels": {"app": "web", "pod-template-hash": "abc"}},
            "spec": {"containers": [container("c")], "topologySpreadConstraints": [spread]},
        }
    )
    (constraint,) = build(manifest).spread
    selector = constraint.label_selector
    assert selector.matches({"app": "web", "pod-template-hash": "abc"})
    assert not selector.matches({"app": "web", "pod-template-hash": "old"})


def test_spread_match_label_keys_need_a_selector() -> None:
    """ValidateTopologySpreadConstraints refuses matchLabelKeys without a labelSelector."""
    with pytest.raises(ValidationError, match="matchLabelKeys needs a labelSelector"):
        pod([container("c")], topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "z", "matchLabelKeys": ["a"]}])


def test_a_toleration_with_seconds_is_read() -> None:
    """Every pod of a real cluster carries `tolerationSeconds: 300` for not-ready and unreachable nodes."""
    toleration = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}
    manifest = pod([container("c")], tolerations=[{**toleration, "tolerationSeconds": 300}])
    (read,) = build(manifest).tolerations
    assert read.key == "node.kubernetes.io/not-ready"


# `ValidatePodSpec` checks `nodeSelector` with `ValidateLabels`: each key a qualified name (an
# optional lowercase DNS-subdomain prefix and `/`, then at most 63 characters, alphanumeric at both
# ends with `-`, `_`, `.` between), each value empty or the same shape of at most 63 characters.
VALID_NODE_SELECTORS = [
    {"disktype": "ssd"},
    {"topology.kubernetes.io/zone": "eu-west-1a"},
    {"app": ""},  # an empty value is a valid label value
    {"tier": "a" * 63},
    {"k": "A.b_c-9"},
]
INVALID_NODE_SELECTORS = [
    ({"app": "bad value!"}, "app"),
    ({"app": "-web"}, "app"),
    ({"app": "web."}, "app"),
    ({"app": "a" * 64}, "app"),
    ({"bad key!": "x"}, "bad key!"),
    ({"Example.COM/zone": "a"}, "Example.COM/zone"),  # the prefix must be lowercase
    ({"/zone": "a"}, "/zone"),
]


@pytest.mark.parametrize("selector", VALID_NODE_SELECTORS)
def test_a_valid_node_selector_is_read(selector: dict[str, str]) -> None:
    assert dict(build(pod([container("c")], nodeSelector=selector)).affinity.node_selector) == selector


@pytest.mark.parametrize(("selector", "key"), INVALID_NODE_SELECTORS)
def test_a_node_selector_is_validated_as_labels_and_its_key_named(selector: dict[str, str], key: str) -> None:
    with pytest.raises(ValidationError) as caught:
        pod([container("c")], nodeSelector=selector)
    (error,) = caught.value.errors()
    assert error["loc"][:3] == ("spec", "nodeSelector", key)
    assert "label" in error["msg"]
