"""The dashboard's JSON API, `/api/...`: runs, their charts and decisions, the scheduler's view, comparisons,
sweeps, and scenarios validated and run; FastAPI documents it at `/docs` (OpenAPI at `/openapi.json`).

A thin layer, as the CLI is: it finds what a request names in the store (`RunStore`, as `skenario
show` does) and returns what `web.views` reads of it. Every client (the pages, a script, another
tool) gets the same data. A mistake in a request is a 4xx with `detail` saying what and where,
never a traceback.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, HTTPException, Query, Request, Response
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, Field

from skenario.errors import SkenarioError
from skenario.results.rundata import RunData
from skenario.results.store import RunStore, StoreError, check_label
from skenario.runs import open_run
from skenario.scenario.format.jsonschema import batch_json_schema, scenario_json_schema
from skenario.scenario.wiring.plugins import refused
from skenario.web import views
from skenario.web.jobs import FINISHED, Job, Jobs, TooManyJobs

MAX_SCENARIO_BYTES = 1_000_000
"""The largest scenario the editor takes: a scenario is a page or two of YAML; its traces are files it names."""
CACHED_RUNS = 8
"""Runs kept loaded between requests: a page asks for a run's overview, charts and decisions one after another."""

router = APIRouter(prefix="/api")


class ScenarioText(BaseModel):
    """A scenario as the editor sends it."""

    text: str = Field(description="The scenario file's text (YAML), as `skenario run` reads a file.")


class RunRequest(ScenarioText):
    """A scenario to run into the store."""

    name: str | None = Field(default=None, description="A name to refer to the run by, as `skenario run --name`.")
    tags: list[str] = Field(default_factory=list, description="Tags to find the run by, as `--tag`.")


class Tags(BaseModel):
    tags: list[str]


class Problem(BaseModel):
    """A mistake in a scenario: where it is and what is wrong."""

    line: int | None
    field: str | None
    value: str | None
    message: str


class Validation(BaseModel):
    valid: bool
    kind: str | None = None
    problems: list[Problem] = Field(default_factory=list)


@dataclass
class Loaded:
    """One run read from the store, while its row says the same (`stamp`), and what was made of it (`made`)."""

    stamp: tuple[Any, ...]
    data: RunData
    made: dict[str, str] = field(default_factory=dict)
    making: threading.Lock = field(default_factory=threading.Lock)  # one thing made of it at a time


class LoadedRuns:
    """The runs loaded lately, by id: a page asks for a run's overview, charts and decisions at once, and a
    day-long run takes a second to read and chart. A Running run is read afresh each time. One run is
    loaded at a time, so two requests for it at once read it once; what is made of a run is made apart,
    so its overview is not held up behind its charts."""

    def __init__(self) -> None:
        self._runs: OrderedDict[int, Loaded] = OrderedDict()
        self._lock = threading.Lock()
        self._loading = threading.Lock()

    def get(self, store: RunStore, ref: str) -> tuple[Loaded, dict[str, Any]]:
        record = found(lambda: store.record(ref))
        stamp = (record["phase"], record["finished_at"], record["simulated_ns"])
        with self._loading:
            with self._lock:
                cached = self._runs.get(record["run"])
                if cached is not None and cached.stamp == stamp and record["phase"] != "Running":
                    self._runs.move_to_end(record["run"])
                    return cached, record
            loaded = Loaded(stamp, found(lambda: store.load(record["run"])))
            with self._lock:
                self._runs[record["run"]] = loaded
                while len(self._runs) > CACHED_RUNS:
                    self._runs.popitem(last=False)
        return loaded, record

    def made(self, store: RunStore, ref: str, what: str, make: Callable[[RunData], str]) -> str:
        """`make(run)`, made once per run loaded (`what` names it)."""
        loaded, _ = self.get(store, ref)
        with loaded.making:
            if what not in loaded.made:
                loaded.made[what] = make(loaded.data)
            return loaded.made[what]

    def forget(self, run_id: int) -> None:
        with self._lock:
            self._runs.pop(run_id, None)


def found(read: Any) -> Any:
    """`read()`, a reference that names nothing a 404 and any other mistake a 400, each saying why."""
    try:
        return read()
    except StoreError as exc:
        raise HTTPException(404 if "no such" in exc.message else 400, detail=str(exc)) from None
    except SkenarioError as exc:
        raise HTTPException(400, detail=str(exc)) from None


def there(result: dict[str, Any] | None, missing: str) -> dict[str, Any]:
    """What a view found, or a 404 saying what is `missing`."""
    if result is None:
        raise HTTPException(404, detail=missing)
    return result


def store_of(request: Request) -> RunStore:
    store: RunStore = request.app.state.store
    return store


def loaded(request: Request, ref: str) -> tuple[RunData, dict[str, Any]]:
    cache: LoadedRuns = request.app.state.loaded
    entry, record = cache.get(store_of(request), ref)
    return entry.data, record


def made(request: Request, ref: str, what: str, make: Callable[[RunData], str]) -> Response:
    """JSON made of a run once (plotly's figures, written already), kept while the run is."""
    cache: LoadedRuns = request.app.state.loaded
    return json_text(cache.made(store_of(request), ref, what, make))


def json_text(text: str) -> Response:
    """JSON already written (plotly's figures)."""
    return Response(content=text, media_type="application/json")


@router.get("/runs", summary="The stored runs, oldest first")
def list_runs(
    request: Request,
    name: str | None = None,
    tag: str | None = None,
    phase: str | None = None,
    sweep: int | None = None,
    last: Annotated[int | None, Query(ge=1)] = None,
) -> list[dict[str, Any]]:
    records = found(lambda: store_of(request).runs(name=name, tag=tag, phase=phase, sweep=sweep, last=last))
    return [views.run_record(r) for r in records]


@router.get("/runs/{ref}", summary="A run: what it was, its verdict, what happened, what it cost, its events")
def run_overview(request: Request, ref: str) -> dict[str, Any]:
    data, record = loaded(request, ref)
    return views.run_overview(data, record)


@router.get("/runs/{ref}/charts", summary="A run's charts as plotly figures, as the static report draws them")
def run_charts(request: Request, ref: str) -> Response:
    return made(request, ref, "charts", views.charts_json)


@router.get("/runs/{ref}/decisions", summary="Every autoscaler decision, and why each autoscaler decided as of `at`")
def run_decisions(
    request: Request, ref: str, at: Annotated[float | None, Query(ge=0)] = None, autoscaler: str | None = None
) -> Response:
    if at is None and autoscaler is None:  # what the run's page asks first: kept
        return made(request, ref, "decisions", lambda data: json.dumps(views.decisions(data)))
    data, _ = loaded(request, ref)
    return JSONResponse(found(lambda: views.decisions(data, at, autoscaler)))


@router.get("/runs/{ref}/scheduler", summary="Nodes and pods as the scheduler saw them")
def run_scheduler(request: Request, ref: str) -> dict[str, Any]:
    data, _ = loaded(request, ref)
    return views.scheduler(data)


@router.get("/runs/{ref}/pods/{pod}", summary="A pod's scheduling attempts with every plugin's results (KEP-140)")
def run_pod(request: Request, ref: str, pod: str) -> dict[str, Any]:
    data, _ = loaded(request, ref)
    return there(views.pod_attempts(data, pod), f"run {data.id} has no pod {pod!r} with KEP-140 results")


@router.get("/runs/{ref}/jobs", summary="A batch replay's jobs or workloads, with their queues and waits")
def run_jobs(request: Request, ref: str) -> dict[str, Any]:
    data, _ = loaded(request, ref)
    return views.jobs(data)


@router.get("/runs/{ref}/jobs/{job}", summary="Why a job waited: its record and its queue's state then")
def run_job(request: Request, ref: str, job: str) -> dict[str, Any]:
    data, _ = loaded(request, ref)
    return there(views.job_detail(data, job), f"run {data.id} has no job {job!r}")


@router.get("/runs/{ref}/replay", summary="A replay's comparison with the real cluster it replays")
def run_replay(request: Request, ref: str) -> dict[str, Any]:
    data, _ = loaded(request, ref)
    return there(views.replay(data), f"run {data.id} is not a replay (`skenario replay` makes one)")


@router.get("/runs/{ref}/calibration", summary="A calibrated replay's fitted values, and its scenarios' errors")
def run_calibration(request: Request, ref: str) -> dict[str, Any]:
    from skenario.web.sweeps import calibration_view  # the sweep extra's, only for this page

    data, _ = loaded(request, ref)
    return there(
        calibration_view(store_of(request), data), f"run {data.id}'s scenario is not one `skenario calibrate` wrote"
    )


@router.put("/runs/{ref}/tags", summary="Replace a run's tags")
def put_tags(request: Request, ref: str, body: Tags) -> dict[str, Any]:
    store = store_of(request)
    tags = found(lambda: store.set_tags(ref, body.tags))
    return {"run": found(lambda: store.resolve(ref)), "tags": tags}


@router.delete("/runs/{ref}", summary="Delete a run and everything it recorded")
def delete_run(request: Request, ref: str) -> dict[str, Any]:
    store = store_of(request)
    removed = found(lambda: store.remove([ref]))
    for run_id in removed:
        request.app.state.loaded.forget(run_id)
    return {"deleted": removed}


def _compared(request: Request, runs: list[str] | None) -> list[RunData]:
    if not runs:
        raise HTTPException(400, detail="name the runs to compare: ?runs=1&runs=2")
    return [loaded(request, ref)[0] for ref in runs]


@router.get("/compare", summary="Runs side by side, each figure's difference from the baseline run")
def compare(
    request: Request,
    runs: Annotated[list[str] | None, Query()] = None,
    baseline: str | None = None,
) -> dict[str, Any]:
    datas = _compared(request, runs)
    index = None
    if baseline is not None:
        ids = [d.id for d in datas]
        base_id = loaded(request, baseline)[0].id
        if base_id not in ids:
            raise HTTPException(400, detail=f"the baseline (run {base_id}) is not among the runs compared")
        index = ids.index(base_id)
    return views.compare(datas, index)


@router.get("/compare/charts", summary="The compared runs' series overlaid, as plotly figures")
def compare_charts(request: Request, runs: Annotated[list[str] | None, Query()] = None) -> Response:
    return json_text(views.compare_charts_json(_compared(request, runs)))


@router.get("/sweeps", summary="The stored sweeps and studies")
def list_sweeps(request: Request) -> list[dict[str, Any]]:
    return views.plain(found(lambda: store_of(request).sweeps()))  # type: ignore[no-any-return]


@router.get("/sweeps/{ref}", summary="A sweep's table with intervals, and its Pareto front over two figures")
def sweep(
    request: Request, ref: str, baseline: int | None = None, x: str | None = None, y: str | None = None
) -> dict[str, Any]:
    from skenario.web.sweeps import sweep_view  # the sweep extra's scipy, only for this page

    return found(lambda: sweep_view(store_of(request), ref, baseline, x, y))  # type: ignore[no-any-return]


@router.get("/schema", summary="The JSON Schema of scenario files, or of batch replays (`skenario schema`)")
def schema(kind: Literal["Scenario", "BatchReplay"] = "Scenario") -> dict[str, Any]:
    return scenario_json_schema() if kind == "Scenario" else batch_json_schema()


@router.post("/validate", summary="Check a scenario as `skenario run` reads it, running nothing")
def validate(request: Request, body: Annotated[ScenarioText, Body()]) -> Validation:
    checked = _checked(request, body.text)
    if isinstance(checked, Validation):
        return checked
    return Validation(valid=True, kind=checked)


VALIDATING = threading.Lock()
"""One scenario checked at a time: the plugin policy `refused` sets is the process's, so two checks at once
could end one's refusal while the other is still reading."""


def _checked(request: Request, text: str) -> Validation | str:
    """The kind of run `text` is, or what is wrong with it; plugins refused (never run)."""
    if len(text.encode()) > MAX_SCENARIO_BYTES:
        raise HTTPException(413, detail=f"a scenario from the dashboard is at most {MAX_SCENARIO_BYTES:,} bytes")
    try:
        with VALIDATING, refused():
            run = open_run(text, base_dir=request.app.state.files, plugins="refuse")
    except SkenarioError as exc:
        return Validation(valid=False, problems=[_problem(exc)])
    return run.kind


def _problem(exc: SkenarioError) -> Problem:
    return Problem(
        line=exc.line,
        field=exc.field,
        value=None if exc.value is None else str(exc.value),
        message=exc.message,
    )


@router.post("/scenarios/run", status_code=202, summary="Run a scenario into the store; follow it at /api/jobs/{job}")
def run_scenario(request: Request, body: RunRequest) -> dict[str, Any]:
    try:
        name = None if body.name in (None, "") else check_label(body.name, "name")
        tags = [check_label(tag, "tags") for tag in body.tags]
    except StoreError as exc:
        raise HTTPException(400, detail=str(exc)) from None
    checked = _checked(request, body.text)
    if isinstance(checked, Validation):
        raise HTTPException(400, detail=checked.model_dump())
    jobs: Jobs = request.app.state.jobs
    try:
        job = jobs.start(body.text, name=name, tags=tags)
    except TooManyJobs as exc:
        raise HTTPException(429, detail=str(exc)) from None
    return job.as_dict()


def _job(request: Request, job_id: str) -> Job:
    job: Job | None = request.app.state.jobs.get(job_id)
    if job is None:
        raise HTTPException(404, detail=f"no such run from the dashboard: {job_id!r}")
    return job


@router.get("/jobs", summary="The runs started from the dashboard")
def list_jobs(request: Request) -> list[dict[str, Any]]:
    return [job.as_dict() for job in request.app.state.jobs.all()]


@router.get("/jobs/{job_id}", summary="A run started from the dashboard: how far it got")
def get_job(request: Request, job_id: str) -> dict[str, Any]:
    return _job(request, job_id).as_dict()


@router.post("/jobs/{job_id}/cancel", summary="Stop a run started from the dashboard (kept as Failed)")
def cancel_job(request: Request, job_id: str) -> dict[str, Any]:
    job = _job(request, job_id)
    request.app.state.jobs.cancel(job_id)
    return job.as_dict()


@router.get("/jobs/{job_id}/events", summary="A run's progress as server-sent events, until it ends")
def job_events(request: Request, job_id: str) -> StreamingResponse:
    job = _job(request, job_id)
    jobs: Jobs = request.app.state.jobs

    def stream() -> Iterator[str]:
        seen = 0
        while True:
            events = jobs.wait(job, seen, timeout=10.0)
            seen += len(events)
            if events:
                yield f"event: progress\ndata: {json.dumps(job.as_dict())}\n\n"
            elif job.state not in FINISHED:
                yield ": still running\n\n"  # a comment keeps the connection open
            if job.state in FINISHED and len(job.events) <= seen:
                yield f"event: end\ndata: {json.dumps(job.as_dict())}\n\n"
                return

    return StreamingResponse(stream(), media_type="text/event-stream", headers={"Cache-Control": "no-store"})


@router.get("/starter", summary="A scenario to begin from in the editor")
def starter(request: Request) -> dict[str, str]:
    return {"text": request.app.state.starter}
