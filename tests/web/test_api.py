"""The JSON API through FastAPI's test client: what each route returns, and the rules a web client cannot pass."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from fastapi.testclient import TestClient

from skenario.core.time import SECOND, format_clock
from skenario.results.store import FinishedRun, RunStore
from skenario.scenario.format.jsonschema import batch_json_schema, scenario_json_schema
from skenario.web.api import MAX_SCENARIO_BYTES
from skenario.web.app import create_app
from tests.web.conftest import EXAMPLES, World


@pytest.fixture(scope="module")
def client(world: World) -> Iterator[TestClient]:
    with TestClient(create_app(world.store, files=EXAMPLES)) as test_client:
        yield test_client


def test_the_runs_list_has_every_run_with_its_headline_figures(client: TestClient, world: World) -> None:
    listed = client.get("/api/runs").json()
    stored = RunStore(world.store).runs()
    assert [r["run"] for r in listed] == [r["run"] for r in stored]
    for row, record in zip(listed, stored, strict=True):
        summary = record["summary"] or {}
        if summary.get("requests_arrived"):
            assert row["error_rate"] == summary["requests_failed"] / summary["requests_arrived"]
            assert row["p99_ms"] == summary["latency_p99_ns"] / 1e6
    assert [r["run"] for r in client.get("/api/runs", params={"sweep": world.sweep}).json()] == list(world.sweep_runs)


def test_a_run_has_its_overview_charts_and_decisions(client: TestClient, world: World) -> None:
    run = client.get(f"/api/runs/{world.cluster}").json()
    assert run["kind"] == "scenario" and run["has_cluster"] and not run["has_replay"]
    titles = [section["title"] for section in run["sections"]]
    assert titles[0] == "What happened" and "Cost and limits" in titles and "Scheduling" in titles
    figures = client.get(f"/api/runs/{world.cluster}/charts").json()
    ids = [f["id"] for f in figures]
    assert {"chart-replicas", "chart-latency", "chart-hpa-0", "chart-cluster", "chart-pods"} <= set(ids)
    assert all(f["figure"]["data"] for f in figures if f["id"] != "chart-decisions")
    # What the bound pods ask for, of the nodes' allocatable, sampled at each recording: never above the peak
    # the scheduler's summary takes over every change of it.
    allocation = next(f for f in figures if f["id"] == "chart-allocation")["figure"]["data"]
    peak = RunStore(world.store).load(world.cluster).documents["scheduling"]["allocationPeak"]
    assert [t["name"] for t in allocation] == ["CPU", "memory"]
    for trace, resource in zip(allocation, ("cpu", "memory"), strict=True):
        assert 0 < max(v for v in trace["y"] if v is not None) <= peak[resource] + 1e-12
    decisions = client.get(f"/api/runs/{world.cluster}/decisions").json()
    assert decisions["decisions"] and decisions["explained"][0]["kind"] == "hpa"
    # As of one decision's time, the explanation is of that moment: `skenario explain --at`.
    first = decisions["decisions"][0]
    early = client.get(f"/api/runs/{world.cluster}/decisions", params={"at": first["time_s"]}).json()
    assert early["explained"][0]["at"] == first["clock"]


def test_the_scheduler_view_counts_every_pod_and_node(client: TestClient, world: World) -> None:
    data = RunStore(world.store).load(world.cluster)
    view = client.get(f"/api/runs/{world.cluster}/scheduler").json()
    assert len(view["pods"]) == data.documents["scheduling"]["pods"] == len(data.documents["pods"])
    assert {n["node"] for n in view["nodes"]} == {n["node"] for n in data.documents["nodes"]}


def test_a_pods_verdicts_are_kep140s_per_plugin_results(client: TestClient, world: World) -> None:
    """The KEP-140 example taints node a, then asks for a 3-CPU pod that fits neither node: TaintToleration
    fails on a (as the taint says), NodeResourcesFit on b (4 CPUs, 3 of them bound to web-1)."""
    pod = client.get(f"/api/runs/{world.kep}/pods/web-2").json()
    (attempt,) = pod["attempts"]
    assert attempt["selected"] is None and attempt["feasible"] == []
    verdicts = {
        row["node"]: dict(zip(attempt["filter"]["plugins"], row["results"], strict=True))
        for row in attempt["filter"]["nodes"]
    }
    assert "untolerated taint {maintenance: }" in verdicts["a"]["TaintToleration"]
    assert verdicts["b"]["TaintToleration"] == "passed"
    assert "Insufficient cpu" in verdicts["b"]["NodeResourcesFit"]
    assert client.get(f"/api/runs/{world.kep}/pods/no-such-pod").status_code == 404


def test_a_batch_replays_jobs_and_why_one_waited(client: TestClient, world: World) -> None:
    jobs = client.get(f"/api/runs/{world.batch}/jobs").json()["jobs"]
    waited = max(jobs, key=lambda job: job["wait_s"] or 0)
    assert waited["wait_s"] > 0 and waited["why"] is None  # it waited, then started
    detail = client.get(f"/api/runs/{world.batch}/jobs/{waited['job']}").json()
    assert detail["queue"] == waited["queue"]
    # The scheduler's reason the instant before it started: still waiting, for its AM's container.
    assert detail["why"].startswith("waiting for its AM container")
    assert detail["why_at"] == format_clock(round(waited["started_s"] * SECOND) - 1)
    submitted = detail["queue_state"]["submitted"]
    assert submitted["time_s"] <= waited["submitted_s"] and "allocated.memory" in submitted["figures"]
    prompt = min((j for j in jobs if j["wait_s"] == 0), key=lambda j: j["submitted_s"], default=None)
    if prompt is not None:
        assert "did not wait" in client.get(f"/api/runs/{world.batch}/jobs/{prompt['job']}").json()["why"]


def test_kueues_workloads_and_their_cluster_queues(client: TestClient, world: World) -> None:
    data = client.get(f"/api/runs/{world.kueue}/jobs").json()
    assert data["queues"] == ["team-a", "team-b"]
    stored = RunStore(world.store).load(world.kueue).documents["jobs"]
    assert [w["workload"] for w in data["jobs"]] == [w["workload"] for w in stored]
    detail = client.get(f"/api/runs/{world.kueue}/jobs/{stored[-1]['workload']}").json()
    assert (
        detail["queue"] == stored[-1]["clusterQueue"]
        and "admitted.workloads" in detail["queue_state"]["submitted"]["figures"]
    )


def test_a_studys_front_is_over_its_objectives(client: TestClient, world: World) -> None:
    """Both objectives minimised: a trial is on the front unless another is no worse on both and better on one."""
    study = client.get(f"/api/sweeps/{world.study}").json()
    assert study["kind"] == "study" and study["axes"] == ["replica_hours", "p99_ms"]
    means = [(p["figures"]["replica_hours"]["mean"], p["figures"]["p99_ms"]["mean"]) for p in study["points"]]
    for (hours, p99), point in zip(means, study["points"], strict=True):
        beaten = any(h <= hours and q <= p99 and (h, q) != (hours, p99) for h, q in means)
        assert point["front"] == (not beaten)


def test_a_replay_shows_its_comparison_with_the_cluster(client: TestClient, world: World) -> None:
    replay = client.get(f"/api/runs/{world.replay}/replay").json()
    stored = RunStore(world.store).load(world.replay).documents["replay"]
    assert replay["observed"] == sorted(stored["observed"])
    assert replay["figures"]["replicas"]["mae"] == pytest.approx(stored["replicas"]["mae"])
    shown = {row["label"]: row["value"] for row in replay["rows"]}
    assert shown["replicas: mae"] == f"{stored['replicas']['mae']:,.3g}"
    assert client.get(f"/api/runs/{world.cluster}/replay").status_code == 404


def test_compare_gives_each_figures_difference_from_the_baseline(client: TestClient, world: World) -> None:
    first, second = world.sweep_runs[:2]
    compared = client.get("/api/compare", params={"runs": [first, second], "baseline": second}).json()
    assert compared["baseline"] == 1
    stored = [RunStore(world.store).record(r)["summary"] for r in (first, second)]
    arrived = next(f for f in compared["figures"] if f["key"] == "requests_arrived")
    assert arrived["values"] == [s["requests_arrived"] for s in stored]
    assert arrived["deltas"] == [stored[0]["requests_arrived"] - stored[1]["requests_arrived"], 0]
    charts = client.get("/api/compare/charts", params={"runs": [first, second]}).json()
    assert all(len(c["figure"]["data"]) == 2 for c in charts)
    assert client.get("/api/compare", params={"runs": [first], "baseline": second}).status_code == 400


def test_a_sweeps_table_and_its_front(client: TestClient, world: World) -> None:
    sweep = client.get(f"/api/sweeps/{world.sweep}").json()
    assert sweep["kind"] == "sweep" and len(sweep["points"]) == 3
    assert sorted(r for p in sweep["points"] for r in p["runs_made"]) == list(world.sweep_runs)
    assert any(p["front"] for p in sweep["points"])
    refused = client.get(f"/api/sweeps/{world.sweep}", params={"x": "height"})
    assert refused.status_code == 400 and "field 'x'" in refused.json()["detail"]


def test_tags_are_set_and_a_run_deleted(world: World, tmp_path: Path) -> None:
    """On a copy of one run, so the other tests' store is untouched."""
    store = tmp_path / "store"
    RunStore(store).keep(_record(world), None, wall_s=None)
    with TestClient(create_app(store)) as client:
        assert client.put("/api/runs/1/tags", json={"tags": ["baseline", "baseline", "x"]}).json()["tags"] == [
            "baseline",
            "x",
        ]
        assert client.get("/api/runs", params={"tag": "baseline"}).json()[0]["run"] == 1
        bad = client.put("/api/runs/1/tags", json={"tags": ["7"]})
        assert bad.status_code == 400 and "field 'tags'" in bad.json()["detail"]
        assert client.delete("/api/runs/1").json() == {"deleted": [1]}
        assert client.get("/api/runs/1").status_code == 404
        assert client.get("/api/runs").json() == []


def _record(world: World) -> FinishedRun:
    record = RunStore(world.store).record(world.kep)
    return FinishedRun(
        name=record["scenario"],
        scenario_text=record["scenario_text"],
        seed=record["seed"],
        phase="Completed",
        message=record["message"],
        digest=record["digest"],
        simulated_ns=record["simulated_ns"],
        wall_s=None,
    )


def test_the_editor_checks_a_scenario_with_the_line_and_field_of_a_mistake(client: TestClient) -> None:
    starter = client.get("/api/starter").json()["text"]
    assert client.post("/api/validate", json={"text": starter}).json() == {
        "valid": True,
        "kind": "scenario",
        "problems": [],
    }
    broken = starter.replace("rate: 50/s", "rate: fifty")
    (problem,) = client.post("/api/validate", json={"text": broken}).json()["problems"]
    line = next(n for n, text in enumerate(broken.splitlines(), 1) if "fifty" in text)
    assert problem["line"] == line and problem["field"] == "spec.traffic.1.rate" and problem["value"] == "fifty"


def test_the_schemas_are_skenario_schemas(client: TestClient) -> None:
    assert client.get("/api/schema").json() == scenario_json_schema()
    assert client.get("/api/schema", params={"kind": "BatchReplay"}).json() == batch_json_schema()


def test_a_scenario_naming_a_plugin_is_refused_and_its_code_never_runs(client: TestClient, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    plugin = tmp_path / "policy.py"
    plugin.write_text(f"from pathlib import Path\nPath({str(marker)!r}).write_text('ran')\n\nclass Policy:\n    pass\n")
    text = (EXAMPLES / "plugin.yaml").read_text()
    scenario = yaml.safe_load(text)
    autoscalers = scenario["spec"]["autoscalers"]
    plugin_entry = next(a for a in autoscalers if a.get("type") == "plugin")
    plugin_entry["plugin"] = f"{plugin}:Policy"
    written = yaml.safe_dump(scenario)
    checked = client.post("/api/validate", json={"text": written}).json()
    assert not checked["valid"] and "plugin" in checked["problems"][0]["message"]
    refused = client.post("/api/scenarios/run", json={"text": written})
    assert refused.status_code == 400
    assert not marker.exists()


def test_a_scenario_past_the_size_limit_is_refused(client: TestClient) -> None:
    text = "# " + "x" * MAX_SCENARIO_BYTES
    assert client.post("/api/validate", json={"text": text}).status_code == 413
    assert client.post("/api/scenarios/run", json={"text": text}).status_code == 413


def test_a_run_name_is_a_label_never_a_path(world: World, tmp_path: Path) -> None:
    """A name like a path lands in the store as the run's name; nothing is written outside the store."""
    store = tmp_path / "a" / "b" / "store"
    with TestClient(create_app(store, files=EXAMPLES)) as client:
        starter = client.get("/api/starter").json()["text"].replace("duration: 30m", "duration: 1m")
        job = client.post("/api/scenarios/run", json={"text": starter, "name": "../../outside"}).json()
        ended = _events(client, job["job"])[-1]
        assert ended["state"] == "done", ended
        assert client.get(f"/api/runs/{ended['run']}").json()["name"] == "web-step"
        assert RunStore(store).record(ended["run"])["name"] == "../../outside"
        for name in ("7", " padded", "bad\x07"):
            assert client.post("/api/scenarios/run", json={"text": starter, "name": name}).status_code == 400
    assert all(p.is_relative_to(store) or p in store.parents for p in tmp_path.rglob("*"))
    assert not any(p.suffix == ".yaml" for p in (store / "web").iterdir())  # the job's copy removed


def _events(client: TestClient, job: str) -> list[dict[str, object]]:
    """The job's server-sent events, read until the stream ends (the run's end)."""
    events = []
    with client.stream("GET", f"/api/jobs/{job}/events") as stream:
        for line in stream.iter_lines():
            if line.startswith("data: "):
                events.append(json.loads(line.removeprefix("data: ")))
    return events


def test_unknown_things_are_404s_saying_what(client: TestClient) -> None:
    for path in ("/api/runs/999", "/api/jobs/nothing", "/api/sweeps/999"):
        answer = client.get(path)
        assert answer.status_code == 404 and answer.json()["detail"], path


def test_every_asset_is_served_here(client: TestClient) -> None:
    """No page loads anything from another host: the dashboard works offline."""
    assert client.get("/redoc").status_code == 404  # ReDoc's page would fetch its logo from a CDN
    for path in ("/", "/runs/1", "/editor", "/docs"):
        page = client.get(path).text
        for source in [*_attribute(page, "src"), *_attribute(page, "href")]:
            assert source.startswith(("/", "#")) or source == "", (path, source)
            if source.startswith("/static"):
                assert client.get(source).status_code == 200, source


def _attribute(page: str, name: str) -> list[str]:
    return re.findall(rf'{name}="([^"]*)"', page) + re.findall(rf"{name}='([^']*)'", page)


def test_a_calibrated_replay_shows_its_fitted_values_and_held_out_error(client: TestClient, world: World) -> None:
    """The replayed example was held out of its calibration: its own replay is the held-out error."""
    calibration = client.get(f"/api/runs/{world.replay}/calibration").json()
    body = yaml.safe_load((EXAMPLES / "calibration" / "flink-hpa-70.calibrated.yaml").read_text())["spec"]["workload"]
    assert calibration["values"]["workload.request.cpuTime"] == body["request"]["cpuTime"]
    assert calibration["held_out"] == ["flink-hpa-70.yaml"]
    (replay,) = calibration["replays"]
    stored = RunStore(world.store).load(world.replay).documents["replay"]["replicas"]
    assert (replay["run"], replay["set"], replay["replica_mae"]) == (world.replay, "held-out", stored["mae"])
    assert client.get(f"/api/runs/{world.cluster}/calibration").status_code == 404
