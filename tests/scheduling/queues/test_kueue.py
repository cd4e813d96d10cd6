"""Kueue in front of kube-scheduler, on a replay: admission, borrowing, reclaim, queueing strategies."""

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.core.time import SECOND
from skenario.errors import SkenarioError
from skenario.scheduling.objects import NodeSpec, PodSpec
from skenario.scheduling.queues.kueue import ADMISSION_GATE, GROUP_LABEL, QUEUE_LABEL
from skenario.scheduling.queues.kueue_config import KueueConfigError, read_kueue_config
from skenario.scheduling.replay import BatchReplay
from skenario.scheduling.traces import TracePod
from skenario.scheduling.traces.base import ListedPods, sorted_pods
from skenario.scheduling.traces.csvpods import CsvPods
from skenario.scheduling.traces.sls import SlsTrace

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "kueue"
GIB = 1024**3


def manifests(tmp_path: Path, queues: str) -> Path:
    path = tmp_path / "kueue.yaml"
    path.write_text(
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: f}\n---\n" + queues,
        encoding="utf-8",
    )
    return path


def cluster_queue(name: str, cpus: int, extra: str = "", cohort: str | None = None) -> str:
    cohort_line = f"  cohort: {cohort}\n" if cohort else ""
    return (
        f"apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {{name: {name}}}\nspec:\n"
        f"  namespaceSelector: {{}}\n{cohort_line}{extra}"
        "  resourceGroups:\n  - coveredResources: [cpu, memory]\n    flavors:\n    - name: f\n      resources:\n"
        f"      - {{name: cpu, nominalQuota: {cpus}}}\n      - {{name: memory, nominalQuota: 64Gi}}\n---\n"
        f"apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {{name: {name}, namespace: default}}\n"
        f"spec: {{clusterQueue: {name}}}\n---\n"
    )


def pod(name: str, at_s: float, cpus: float, queue: str | None, duration_s: float = 100, priority: int = 0) -> TracePod:
    labels = {QUEUE_LABEL: queue} if queue else {}
    spec = PodSpec(name, cpu=int(cpus * 1000), memory=GIB, labels=labels, priority=priority, movable=False)
    return TracePod(spec, int(at_s * SECOND), int(duration_s * SECOND))


NODES = [NodeSpec(f"n{i}", cpu=8000, memory=64 * GIB) for i in range(2)]


def test_the_example_two_teams_reclaim_their_quota(tmp_path: Path) -> None:
    trace = CsvPods(EXAMPLE / "pods.csv", EXAMPLE / "nodes.csv")
    replay = BatchReplay(trace.nodes(), trace.pods(), kueue=read_kueue_config(EXAMPLE / "manifests.yaml"))
    replay.run()
    assert replay.admission is not None
    kueue = replay.admission.summary()
    queues = kueue["clusterQueues"]
    assert isinstance(queues, dict)
    # team-a borrowed team-b's 8 CPUs while it was idle; team-b's four 2-CPU jobs take them back by
    # evicting four of team-a's, which run again later. Every workload is admitted in the end.
    assert kueue["evictions"] == 4 and queues["team-b"]["admitted"] == 4 and queues["team-a"]["admitted"] == 8
    assert queues["team-b"]["maxAdmissionWaitSeconds"] == 0
    ended = {p.name: p.end for p in replay.controller.pods.values()}
    assert sum(1 for e in ended.values() if e is not None and e.value == "preempted") == 4
    assert all(e is not None for e in ended.values())
    assert replay.controller.pods["unmanaged"].bound_at is not None  # no queue: kube-scheduler alone
    # team-a admitted all 16 CPUs of the cohort at its peak (8 borrowed); team-b its own 8; both end at 0.
    assert queues["team-a"]["cpuAdmittedPeak"] == 16 and queues["team-b"]["cpuAdmittedPeak"] == 8
    rows = replay.admission.queue_rows()
    last = {r["clusterQueue"]: r for r in rows}
    assert last["team-a"]["cpu"] == last["team-b"]["cpu"] == 0 and last["team-a"]["pending.workloads"] == 0
    assert max(r["cpu"] for r in rows if r["clusterQueue"] == "team-a") == 16


def test_within_nominal_quota_then_waiting_for_freed_quota(tmp_path: Path) -> None:
    config = read_kueue_config(manifests(tmp_path, cluster_queue("q", 4)))
    pods = [pod(f"p{k}", 0, 2, "q") for k in range(3)]
    replay = BatchReplay(NODES, pods, kueue=config)
    replay.run()
    bound = sorted(p.bound_at for p in replay.controller.pods.values())
    # Two fit the 4-CPU quota at once; the third waits for one to end at 100 s (nodes have room).
    assert bound == [1, 1, 100 * SECOND + 1]  # (a trace's time 0 is 1 ns: 0 belongs to the run's start)


@pytest.mark.parametrize(("strategy", "small_admitted"), [("BestEffortFIFO", True), ("StrictFIFO", False)])
def test_a_workload_that_never_fits_blocks_only_a_strict_fifo_queue(
    tmp_path: Path, strategy: str, small_admitted: bool
) -> None:
    config = read_kueue_config(manifests(tmp_path, cluster_queue("q", 4, f"  queueingStrategy: {strategy}\n")))
    pods = [pod("big", 0, 6, "q"), pod("small", 1, 1, "q")]
    replay = BatchReplay(NODES, pods, kueue=config)
    replay.run()
    assert replay.controller.pods["big"].bound_at is None
    assert (replay.controller.pods["small"].bound_at is not None) is small_admitted


def test_an_unknown_local_queue_is_one_clear_error(tmp_path: Path) -> None:
    config = read_kueue_config(manifests(tmp_path, cluster_queue("q", 4)))
    with pytest.raises(SkenarioError, match="names LocalQueue default/nope, which") as caught:
        BatchReplay(NODES, [pod("p", 0, 1, "nope")], kueue=config)
    assert caught.value.field == QUEUE_LABEL


def test_a_flavor_no_node_offers_is_one_clear_error(tmp_path: Path) -> None:
    path = manifests(tmp_path, cluster_queue("q", 4))
    path.write_text(
        path.read_text().replace("metadata: {name: f}", "metadata: {name: f}\nspec: {nodeLabels: {pool: gpu}}")
    )
    config = read_kueue_config(path)
    with pytest.raises(SkenarioError, match="ResourceFlavor f is offered by no node: none has the labels pool=gpu"):
        BatchReplay(NODES, [pod("p", 0, 1, "q")], kueue=config)
    labelled = [NodeSpec("g0", cpu=8000, memory=64 * GIB, labels={"pool": "gpu"})]
    BatchReplay(labelled, [pod("p", 0, 1, "q")], kueue=config)  # a node with the labels offers it


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n", "skenario reads Kueue's"),
        (cluster_queue("q", 4).replace("nominalQuota: 4", "nominalQuota: lots"), "nominalQuota is not a quantity"),
        (
            cluster_queue("q", 4).replace("name: f\n      resources", "name: g\n      resources"),
            "no ResourceFlavor 'g'",
        ),
        (cluster_queue("q", 4, "  queueingStrategy: Random\n"), "queueingStrategy is one of"),
        (
            cluster_queue("q", 4, "  preemption: {borrowWithinCohort: {policy: LowerPriority}}\n", cohort="c"),
            "borrowWithinCohort needs reclaimWithinCohort",
        ),
        (cluster_queue("q", 4).replace("nominalQuota: 4}", "nominalQuota: 4, borrowingLimit: 2}"), "needs a cohort"),
    ],
)
def test_manifest_mistakes_name_the_file_and_the_field(tmp_path: Path, text: str, words: str) -> None:
    with pytest.raises(KueueConfigError, match=words):
        read_kueue_config(manifests(tmp_path, text))


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 300), st.sampled_from(["a", "b"]), st.integers(1, 6), st.integers(-1, 1)),
        min_size=1,
        max_size=12,
    )
)
def test_quota_is_never_exceeded_and_everything_ends(tmp_path_factory: pytest.TempPathFactory, specs: list) -> None:
    preempt = "  preemption: {reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}\n"
    text = cluster_queue("a", 4, preempt, cohort="c") + cluster_queue("b", 6, preempt, cohort="c")
    config = read_kueue_config(manifests(tmp_path_factory.mktemp("kueue"), text))
    pods = [pod(f"p{k}", at, cpus, q, priority=prio) for k, (at, q, cpus, prio) in enumerate(specs)]
    replay = BatchReplay(NODES, pods, kueue=config)
    admission = replay.admission
    assert admission is not None
    cycle = admission._cycle

    def checked_cycle() -> None:
        cycle()
        cpu = {q: admission.book.usage[q][("f", "cpu")] for q in ("a", "b")}
        assert all(u >= 0 for u in cpu.values()) and sum(cpu.values()) <= 10 * 1000  # the cohort's 10 CPUs

    admission._cycle = checked_cycle  # type: ignore[method-assign]
    replay.run()
    assert all(sum(c.values()) == 0 for c in admission.book.usage.values())  # all quota returned
    for p in replay.controller.pods.values():
        assert ADMISSION_GATE not in p.spec.scheduling_gates or p.end is not None or p.bound_at is None
    # Every workload fits the cohort (at most 6 of its 10 CPUs), so every one is admitted and finishes.
    finished = [r for r in admission.runs.values() if r.finished_at is not None]
    assert len(finished) == len(admission.runs)


@pytest.mark.parametrize(
    ("strategy", "reason"),
    [
        ("BestEffortFIFO", "inadmissible in ClusterQueue q: insufficient quota for cpu in flavor f, 2000 more needed"),
        ("StrictFIFO", "at the head of ClusterQueue q: insufficient quota for cpu in flavor f, 2000 more needed"),
    ],
)
def test_why_a_workload_is_not_admitted(tmp_path: Path, strategy: str, reason: str) -> None:
    config = read_kueue_config(manifests(tmp_path, cluster_queue("q", 4, f"  queueingStrategy: {strategy}\n")))
    replay = BatchReplay(NODES, [pod("big", 0, 6, "q"), pod("small", 1, 1, "q")], kueue=config)
    replay.run()
    assert replay.admission is not None
    assert replay.admission.why("big") == reason
    small = replay.admission.why("small")
    assert small == (
        "finished" if strategy == "BestEffortFIFO" else "waiting in ClusterQueue q behind 1 workload(s), the head big"
    )


def grouped(name: str, at_s: float, cpus: float, group: str, duration_s: float) -> TracePod:
    labels = {QUEUE_LABEL: "q", GROUP_LABEL: group}
    return TracePod(
        PodSpec(name, cpu=int(cpus * 1000), memory=GIB, labels=labels, movable=False),
        int(at_s * SECOND),
        int(duration_s * SECOND),
    )


def test_a_pod_group_is_admitted_whole_and_frees_its_quota_when_its_last_pod_ends(tmp_path: Path) -> None:
    config = read_kueue_config(manifests(tmp_path, cluster_queue("q", 4)))
    pods = [
        grouped("g1-a", 0, 2, "g1", 50),
        grouped("g1-b", 10, 2, "g1", 100),  # the group is complete at 10 s
        grouped("g2-a", 0, 2, "g2", 10),
        grouped("g2-b", 0, 2, "g2", 10),
        grouped("g2-c", 0, 2, "g2", 10),  # 6 CPUs together: never within the 4-CPU quota
        pod("solo", 20, 1, "q"),
    ]
    replay = BatchReplay(NODES, pods, kueue=config)
    replay.run()
    bound = {p.name: p.bound_at for p in replay.controller.pods.values()}
    assert bound["g1-a"] == bound["g1-b"] == 10 * SECOND  # both pods let through together
    assert bound["g2-a"] is None and bound["g2-b"] is None and bound["g2-c"] is None
    # g1 holds all 4 CPUs until its last pod ends at 110 s, though g1-a ended at 60 s.
    assert bound["solo"] == 110 * SECOND
    assert replay.admission is not None
    assert replay.admission.why("g2") == (
        "inadmissible in ClusterQueue q: insufficient quota for cpu in flavor f, 2000 more needed"
    )


def sls_example(tmp_path: Path) -> tuple[SlsTrace, BatchReplay]:
    """The SLS example's two jobs in front of Kueue, one LocalQueue of 2 CPUs for each job's queue, replayed."""
    queues = cluster_queue("sls_queue_1", 2) + cluster_queue("sls_queue_2", 2)
    config = read_kueue_config(manifests(tmp_path, queues))
    trace = SlsTrace(
        ROOT / "examples" / "traces" / "sls" / "inputsls.json",
        ROOT / "examples" / "traces" / "sls" / "nodes-with-resources.json",
    )
    replay = BatchReplay(trace.nodes(), trace.pods(), kueue=config)
    replay.run()
    return trace, replay


def test_an_sls_job_is_one_workload_in_the_queue_it_names(tmp_path: Path) -> None:
    _, replay = sls_example(tmp_path)
    assert replay.admission is not None
    summary = replay.admission.summary()
    # job_1 asks 3 containers of 1 vcore: 3 CPUs, above sls_queue_1's 2; job_2 asks 2 and is admitted.
    assert set(replay.admission.runs) == {"job_1", "job_2"}
    assert summary["clusterQueues"]["sls_queue_1"]["neverAdmitted"] == 1  # type: ignore[index]
    assert summary["clusterQueues"]["sls_queue_2"]["admitted"] == 1  # type: ignore[index]


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 300),
            st.sampled_from(["a", "b", None]),
            st.integers(1, 6),
            st.integers(-1, 1),
            st.sampled_from([None, "g1", "g2"]),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_a_stream_read_twice_admits_as_the_pods_held(tmp_path_factory: pytest.TempPathFactory, specs: list) -> None:
    """Kueue's replay of a `PodStream` reads it twice (its LocalQueues checked and its pod groups counted, then
    replayed) and lets go of what is over: the same summaries and workloads as the pods held in a list, and a
    finished workload holds no pod."""
    preempt = "  preemption: {reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}\n"
    text = cluster_queue("a", 4, preempt, cohort="c") + cluster_queue("b", 6, preempt, cohort="c")
    config = read_kueue_config(manifests(tmp_path_factory.mktemp("kueue"), text))
    pods = []
    for k, (at, queue, cpus, prio, group) in enumerate(specs):
        made = pod(f"p{k}", at, cpus, queue, priority=prio)
        pods.append(replace(made, job=group) if queue is not None else made)  # a group in one queue
    pods = [p for p in pods if p.job is None or p.spec.labels[QUEUE_LABEL] == "a"]
    if not pods:
        return
    held = BatchReplay(NODES, pods, kueue=config)
    streamed = BatchReplay(NODES, ListedPods(sorted_pods(pods)), kueue=config, release=True)
    assert held.run() == streamed.run()
    assert held.admission is not None and streamed.admission is not None
    assert streamed.admission.summary() == held.admission.summary()
    assert streamed.admission.workloads_table() == held.admission.workloads_table()
    assert all(not r.pods for r in streamed.admission.runs.values() if r.finished_at is not None)


def test_a_trace_pod_kueue_admits_carries_its_queue_and_group_on_its_labels(tmp_path: Path) -> None:
    """As Kueue's pod integration reads them: the trace's queue and job become the pod's queue-name and
    pod-group-name labels; a pod that names no queue is left as it is."""
    trace, replay = sls_example(tmp_path)
    labels = {p.name: p.spec.labels for p in replay.controller.pods.values()}
    read = {p.spec.name: p for p in trace.pods()}
    assert labels.keys() == read.keys() and all(
        labels[name][QUEUE_LABEL] == read[name].queue and labels[name][GROUP_LABEL] == read[name].job for name in labels
    )
    assert replay.kueue is not None
    plain = BatchReplay(NODES, [pod("p", 0, 1, None)], kueue=replay.kueue)
    assert plain.controller.pods["p"].spec.labels == {}
