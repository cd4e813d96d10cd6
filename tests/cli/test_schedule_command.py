"""`skenario schedule` and `skenario run` with a cluster, as a user meets them."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from click.testing import CliRunner

from skenario.cli import cli

ROOT = Path(__file__).resolve().parents[2]
TRACES = ROOT / "examples" / "traces"
SLS = TRACES / "sls" / "inputsls.json"
SLS_NODES = TRACES / "sls" / "nodes-with-resources.json"
CLUSTER_EXAMPLE = ROOT / "examples" / "hpa-cluster-autoscaler.yaml"


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_sls_sample_replays_every_task(tmp_path: Path) -> None:
    pods = tmp_path / "pods.csv"
    results = tmp_path / "results.json"
    code, out, err = invoke(
        "schedule", str(SLS), "--format", "sls", "--nodes", str(SLS_NODES),
        "--json", "--pods", str(pods), "--results", str(results),
    )  # fmt: skip
    assert code == 0, err
    summary = json.loads(out)
    # The sample has 2 jobs with 3 + 2 tasks of the default 1 vcore / 1024 MB on 4 nodes: all fit.
    assert summary["pods"] == 5 and summary["bound"] == 5 and summary["pending"] == 0
    rows = list(csv.DictReader(pods.open()))
    assert len(rows) == 5 and all(row["end"] == "completed" for row in rows)
    document = json.loads(results.read_text())
    first = document["pods"][0]
    attempt = first["scheduleResult"][0]
    # Four nodes are candidates; each filter verdict names a plugin and "passed" or a reason.
    assert attempt["allCandidateNodes"] == 4
    assert set(attempt["pluginResults"]["filter"]) <= {"node1", "node2", "node3", "node4"}
    kinds = {event["kind"] for event in document["timeline"]}
    assert {"PodCreated", "PodScheduled", "PodFinished"} <= kinds


def test_heartbeats_delay_reuse_but_not_first_placement(tmp_path: Path) -> None:
    # Two pods of a whole 1-core node: the second can start only when the first's node is seen free.
    (tmp_path / "pods.csv").write_text("name,created,cpu,memory,duration\na,1s,1,1Gi,10s\nb,2s,1,1Gi,10s\n")
    (tmp_path / "nodes.csv").write_text("name,cpu,memory\nn,1,2Gi\n")
    args = ["schedule", str(tmp_path / "pods.csv"), "--nodes", str(tmp_path / "nodes.csv"), "--json"]
    code, _, err = invoke(*args, "--pods", str(tmp_path / "now.csv"))
    assert code == 0, err
    code, _, err = invoke(*args, "--heartbeat", "3s", "--heartbeat-delay", "500ms", "--pods", str(tmp_path / "hb.csv"))
    assert code == 0, err
    now = {r["pod"]: r for r in csv.DictReader((tmp_path / "now.csv").open())}
    beat = {r["pod"]: r for r in csv.DictReader((tmp_path / "hb.csv").open())}
    assert float(now["b"]["bound_s"]) == 11.0  # a ends at 1 + 10 s and is seen at once
    # With heartbeats every 3 s the end is seen at the next beat after 11 s, plus 0.5 s.
    assert 11.0 < float(beat["b"]["bound_s"]) <= 11.0 + 3.0 + 0.5
    assert float(beat["a"]["bound_s"]) == 1.0


def test_malformed_traces_exit_2_naming_file_record_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"job.id": "j", "job.tasks": [{"container.start.ms": 10, "container.end.ms": 5}]}')
    code, _, err = invoke("schedule", str(bad), "--format", "sls", "--nodes", str(SLS_NODES))
    assert code == 2
    assert "bad.json" in err and "task 0" in err and "container.end.ms" in err and "Traceback" not in err
    pods = tmp_path / "pods.csv"
    pods.write_text("name,created,cpu,memory\na,1s,lots,1Gi\n")
    code, _, err = invoke("schedule", str(pods), "--nodes", str(tmp_path / "missing.csv"))
    assert code == 2 and "Traceback" not in err
    (tmp_path / "nodes.csv").write_text("name,cpu,memory\nn,1,2Gi\n")
    code, _, err = invoke("schedule", str(pods), "--nodes", str(tmp_path / "nodes.csv"))
    assert code == 2 and "pods.csv" in err and "cpu" in err and "lots" in err


def test_bad_scheduler_file_exits_2(tmp_path: Path) -> None:
    config = tmp_path / "scheduler.yaml"
    config.write_text("profiles:\n  - plugins:\n      score:\n        enabled: [{name: NoSuchPlugin}]\n")
    code, _, err = invoke(
        "schedule", str(SLS), "--format", "sls", "--nodes", str(SLS_NODES), "--scheduler", str(config)
    )
    assert code == 2 and "NoSuchPlugin" in err


def test_run_with_a_cluster_writes_pod_results(tmp_path: Path) -> None:
    pods = tmp_path / "pods.csv"
    code, out, err = invoke("run", str(CLUSTER_EXAMPLE), "--no-store", "--json", "--pods", str(pods))
    assert code == 0, err
    scheduling = json.loads(out)["scheduling"]
    assert scheduling["bound"] + scheduling["pending"] <= scheduling["pods"]
    assert scheduling["scale-ups"] >= 1
    rows = list(csv.DictReader(pods.open()))
    assert len(rows) == scheduling["pods"]


def test_a_users_filter_plugin_keeps_pods_off_a_node(tmp_path: Path) -> None:
    (tmp_path / "avoid.py").write_text(
        "class Avoid:\n"
        "    def __init__(self, node):\n"
        "        self.node = node\n"
        "    def filter(self, pod, node):\n"
        "        return 'kept clear' if node.name == self.node else None\n"
    )
    config = tmp_path / "scheduler.yaml"
    config.write_text("customPlugins:\n  - {name: Avoid, plugin: avoid.py:Avoid, options: {node: node1}}\n")
    pods, results = tmp_path / "pods.csv", tmp_path / "results.json"
    code, _, err = invoke(
        "schedule", str(SLS), "--format", "sls", "--nodes", str(SLS_NODES), "--scheduler", str(config),
        "--pods", str(pods), "--results", str(results),
    )  # fmt: skip
    assert code == 0, err
    nodes = {row["node"] for row in csv.DictReader(pods.open())}
    assert "node1" not in nodes and nodes
    attempt = json.loads(results.read_text())["pods"][0]["scheduleResult"][0]
    assert attempt["pluginResults"]["filter"]["node1"]["Avoid"] == "kept clear"
    assert "node1" not in attempt["allFilteredNodes"]


def test_the_gpu_last_example_plugin_loads() -> None:
    code, out, err = invoke(
        "schedule", str(SLS), "--format", "sls", "--nodes", str(SLS_NODES),
        "--scheduler", str(ROOT / "examples" / "scheduling" / "gpu-last.yaml"), "--json",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["bound"] == 5  # no GPUs anywhere: the plugin scores every node alike


def test_results_for_names_the_pods_whose_plugin_results_are_written(tmp_path: Path) -> None:
    results = tmp_path / "results.json"
    code, _, err = invoke(
        "schedule", str(SLS), "--format", "sls", "--nodes", str(SLS_NODES),
        "--results", str(results), "--results-for", "job_1/*",
    )  # fmt: skip
    assert code == 0, err
    pods = json.loads(results.read_text())["pods"]
    # Every task fits at once: with --results-for only job_1's attempts keep their plugin results.
    kept = {p["pod"] for p in pods if p["scheduleResult"][0]["pluginResults"] is not None}
    assert kept == {p["pod"] for p in pods if p["pod"].startswith("job_1/")} and kept
    code, _, err = invoke(
        "schedule", str(SLS), "--format", "sls", "--nodes", str(SLS_NODES),
        "--results", str(results), "--plugin-results", "none",
    )  # fmt: skip
    assert code == 0, err
    assert all(p["scheduleResult"][0]["pluginResults"] is None for p in json.loads(results.read_text())["pods"])
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]  # the spill is gone


def test_a_bad_plugin_results_choice_exits_2() -> None:
    code, _, err = invoke("schedule", str(SLS), "--format", "sls", "--plugin-results", "some")
    assert code == 2 and "--plugin-results" in err and "Traceback" not in err


def test_sls_sample_through_the_capacity_scheduler(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs.csv"
    config = TRACES / "sls" / "capacity-scheduler.xml"
    code, out, err = invoke(
        "schedule", str(SLS), "--format", "sls", "--nodes", str(SLS_NODES),
        "--capacity-scheduler", str(config), "--jobs", str(jobs), "--json",
    )  # fmt: skip
    assert code == 0, err
    summary = json.loads(out)
    # Two jobs of 3 and 2 maps, each with its AM: 7 containers, every job done, in the queue it names.
    assert summary["jobs"] == 2 and summary["finished"] == 2 and summary["containers"] == 7
    assert summary["queues"]["root.sls_queue_1"]["jobs"] == 1 and summary["queues"]["root.sls_queue_3"]["jobs"] == 0
    rows = list(csv.DictReader(jobs.open()))
    assert [r["state"] for r in rows] == ["finished", "finished"]
    assert all(float(r["wait_s"]) < 1 for r in rows)  # an idle cluster starts an AM at the next heartbeat


def test_capacity_scheduler_mistakes_exit_2_and_write_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "capacity-scheduler.xml"
    bad.write_text(
        "<configuration><property><name>yarn.scheduler.capacity.root.queues</name><value>a</value></property>"
        "<property><name>yarn.scheduler.capacity.root.a.capacity</name><value>90</value></property></configuration>",
        encoding="utf-8",
    )
    jobs = tmp_path / "jobs.csv"
    code, _, err = invoke(
        "schedule", str(SLS), "--format", "sls", "--nodes", str(SLS_NODES),
        "--capacity-scheduler", str(bad), "--jobs", str(jobs),
    )  # fmt: skip
    assert code == 2 and "sum to 90, not 100" in err and "Traceback" not in err
    assert not jobs.exists()
    code, _, err = invoke("schedule", str(SLS), "--capacity-scheduler", str(bad))
    assert code == 2 and "--format sls" in err


def test_sls_sample_through_the_fair_scheduler(tmp_path: Path) -> None:
    config = TRACES / "sls" / "fair-scheduler.xml"
    code, out, err = invoke(
        "schedule", str(SLS), "--format", "sls", "--nodes", str(SLS_NODES), "--fair-scheduler", str(config), "--json",
    )  # fmt: skip
    assert code == 0, err
    summary = json.loads(out)
    assert summary["scheduler"] == "FairScheduler" and summary["finished"] == 2 and summary["containers"] == 7
    code, _, err = invoke(
        "schedule", str(SLS), "--format", "sls", "--fair-scheduler", str(config),
        "--capacity-scheduler", str(TRACES / "sls" / "capacity-scheduler.xml"),
    )  # fmt: skip
    assert code == 2 and "not both" in err


def test_kueue_example_admits_by_cluster_queue(tmp_path: Path) -> None:
    kueue = ROOT / "examples" / "kueue"
    code, out, err = invoke(
        "schedule", str(kueue / "pods.csv"), "--nodes", str(kueue / "nodes.csv"),
        "--kueue", str(kueue / "manifests.yaml"), "--json",
    )  # fmt: skip
    assert code == 0, err
    summary = json.loads(out)
    assert summary["kueue"]["workloads"] == 12 and summary["kueue"]["evictions"] == 4
    assert set(summary["kueue"]["clusterQueues"]) == {"team-a", "team-b"}
    # Evicted workloads run again as new pods: 13 in the trace, 4 more.
    assert summary["pods"] == 17


def test_kueue_mistakes_exit_2(tmp_path: Path) -> None:
    kueue = ROOT / "examples" / "kueue"
    pods = tmp_path / "pods.csv"
    pods.write_text("name,created,cpu,memory,labels\np,0,1,1Gi,kueue.x-k8s.io/queue-name=nope\n", encoding="utf-8")
    code, _, err = invoke(
        "schedule", str(pods), "--nodes", str(kueue / "nodes.csv"), "--kueue", str(kueue / "manifests.yaml"),
    )  # fmt: skip
    assert code == 2 and "LocalQueue default/nope" in err and "Traceback" not in err


def test_queues_series_and_why_for_yarn_and_kueue(tmp_path: Path) -> None:
    queues = tmp_path / "queues.csv"
    code, out, err = invoke(
        "schedule", str(SLS), "--format", "sls", "--nodes", str(SLS_NODES),
        "--capacity-scheduler", str(TRACES / "sls" / "capacity-scheduler.xml"),
        "--queues", str(queues), "--why", "job_1", "--json",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["why"] == {"job_1": "finished"}
    rows = list(csv.DictReader(queues.open()))
    assert {r["queue"] for r in rows} == {"root.sls_queue_1", "root.sls_queue_2", "root.sls_queue_3"}
    assert float(rows[-1]["allocated.memory"]) == 0.0  # everything ended
    code, _, err = invoke(
        "schedule", str(SLS), "--format", "sls", "--nodes", str(SLS_NODES),
        "--capacity-scheduler", str(TRACES / "sls" / "capacity-scheduler.xml"), "--why", "job_9",
    )  # fmt: skip
    assert code == 2 and "no job 'job_9'" in err
    kueue = ROOT / "examples" / "kueue"
    code, out, err = invoke(
        "schedule", str(kueue / "pods.csv"), "--nodes", str(kueue / "nodes.csv"),
        "--kueue", str(kueue / "manifests.yaml"), "--until", "700s", "--why", "b-0", "--json",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["why"] == {"b-0": "admitted to ClusterQueue team-b"}  # it runs 600 s to 1,201 s
    code, _, err = invoke(
        "schedule", str(kueue / "pods.csv"), "--nodes", str(kueue / "nodes.csv"),
        "--kueue", str(kueue / "manifests.yaml"), "--queues", str(queues),
    )  # fmt: skip
    assert code == 0, err
    assert {r["clusterQueue"] for r in csv.DictReader(queues.open())} == {"team-a", "team-b"}


def test_yarn_site_switches_the_fair_schedulers_preemption_on(tmp_path: Path) -> None:
    code, out, err = invoke(
        "schedule", str(SLS), "--format", "sls", "--nodes", str(SLS_NODES),
        "--fair-scheduler", str(TRACES / "sls" / "fair-scheduler.xml"),
        "--yarn-site", str(TRACES / "sls" / "yarn-site.xml"), "--json",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["finished"] == 2  # an idle cluster: nothing to preempt
    code, _, err = invoke("schedule", str(SLS), "--format", "sls", "--yarn-site", str(TRACES / "sls" / "yarn-site.xml"))
    assert code == 2 and "give --fair-scheduler" in err
