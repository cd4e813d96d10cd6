"""The dashboard's application: the JSON API (`web.api`), its pages and their assets, over one run store.

Each page is a small HTML shell naming its view; `static/app.js` fetches the view's data from the
API and draws it (tables, and the report's plotly charts). Every asset is served from here, plotly
from the plotly package itself, so the dashboard works with no network.
"""

from __future__ import annotations

import html
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Any

import plotly  # type: ignore[import-untyped]
from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, HTMLResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline

from skenario.results.store import RunStore
from skenario.version import __version__
from skenario.web import api
from skenario.web.jobs import Jobs

STATIC = Path(str(resources.files("skenario.web") / "static"))
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"

PAGES = {
    "runs": "Runs",
    "run": "Run",
    "scheduler": "Scheduler",
    "queues": "Queues",
    "cluster": "Real cluster",
    "compare": "Compare",
    "sweeps": "Sweeps and tuning",
    "sweep": "Sweep",
    "editor": "Editor",
}
"""Each page's view (the function of app.js that draws it) and its title."""

PAGE_ROUTES = {
    "/": "runs",
    "/runs/{ref}": "run",
    "/runs/{ref}/scheduler": "scheduler",
    "/runs/{ref}/queues": "queues",
    "/runs/{ref}/cluster": "cluster",
    "/compare": "compare",
    "/sweeps": "sweeps",
    "/sweeps/{ref}": "sweep",
    "/editor": "editor",
}
"""Each page's address and its view."""

NAVIGATION = (("/", "Runs"), ("/compare", "Compare"), ("/sweeps", "Sweeps"), ("/editor", "Editor"))


def create_app(store: Path, *, files: Path | None = None, job_limit: int = 2) -> FastAPI:
    """The dashboard over the run store in `store`; scenarios from its editor name files under `files`
    (default: the working directory) and run at most `job_limit` at once."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        app.state.jobs.stop_all()  # the server is stopping: so are the runs it started

    app = FastAPIOffline(  # FastAPI, its API page (/docs) served from here, not from a CDN
        lifespan=lifespan,
        redoc_url=None,  # ReDoc's page fetches its logo from its CDN
        title="skenario",
        version=__version__,
        description="Runs, their charts and decisions, the scheduler's view, sweeps, and scenarios to run.",
    )
    app.state.store = RunStore(store)
    app.state.files = (files or Path.cwd()).resolve()
    app.state.loaded = api.LoadedRuns()
    app.state.jobs = Jobs(store, app.state.files, limit=job_limit)
    app.state.starter = (STATIC.parent / "starter.yaml").read_text(encoding="utf-8")
    app.include_router(api.router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/static-vendor/plotly.min.js", include_in_schema=False)
    def plotly_js() -> FileResponse:
        return FileResponse(PLOTLY_JS, media_type="text/javascript")

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> Response:
        return Response(status_code=204)

    for path, view in PAGE_ROUTES.items():
        app.add_api_route(path, _page(view), include_in_schema=False, response_class=HTMLResponse)

    return app


def _page(view: str) -> Callable[[Request], HTMLResponse]:
    """The page of `view`, its parameters from the address: the run or sweep it names, the runs compared, the run
    whose scenario the editor opens (`?from=`) and the largest scenario the editor takes."""

    def serve(request: Request) -> HTMLResponse:
        ref = request.path_params.get("ref")
        data: dict[str, Any]
        if view == "compare":
            data = {"runs": ",".join(request.query_params.getlist("runs"))}
        elif view == "editor":
            data = {"run": request.query_params.get("from", ""), "limit": api.MAX_SCENARIO_BYTES}
        elif ref is not None:
            data = {"sweep" if view == "sweep" else "run": ref}
        else:
            data = {}
        return HTMLResponse(shell(view, data))

    return serve


def shell(view: str, data: dict[str, Any]) -> str:
    """A page: the navigation, an empty main the view draws into, and the view's parameters as data attributes."""
    title = PAGES[view]
    attributes = " ".join(f'data-{html.escape(k)}="{html.escape(str(v))}"' for k, v in data.items())
    links = "".join(f'<a href="{href}">{html.escape(text)}</a>' for href, text in NAVIGATION)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>skenario: {html.escape(title)}</title>
<link rel="stylesheet" href="/static/app.css">
<script>window.PlotlyConfig = {{MathJaxConfig: 'local'}};</script>
<script src="/static/app.js" defer></script>
<script id="plotly" src="/static-vendor/plotly.min.js" async></script>
</head><body>
<nav><span class="brand">skenario</span>{links}<a href="/docs">API</a></nav>
<main id="app" data-view="{view}" {attributes}><p class="loading">Loading…</p></main>
</body></html>
"""
