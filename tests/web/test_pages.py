"""Every page in a real browser (Debian's Chromium through Playwright): it loads with no error, and a user's
clicks do what they say: a pod's verdicts, two runs compared, a scenario edited, checked, run and cancelled."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import ConsoleMessage, Page, expect

from skenario.results.store import RunStore
from skenario.web.api import MAX_SCENARIO_BYTES
from tests.web.conftest import EXAMPLES, World, serving

expect.set_options(timeout=0)  # `expect` waits for what it waits for: no wall-clock limit (pytest-timeout is the net)


class Errors(list[str]):
    """What the page said went wrong: console errors and uncaught exceptions."""

    def __init__(self, page: Page) -> None:
        super().__init__()
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.append(f"uncaught: {error}"))

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.append(f"console: {message.text}")


@pytest.fixture
def errors(browser_page: Page) -> Errors:
    return Errors(browser_page)


def open_page(page: Page, address: str) -> None:
    """Go to the page, and wait until its view is drawn and every chart on it too (scrolled to, as a reader does)."""
    page.goto(address)
    page.locator("main[data-ready=true]").wait_for()
    charts = page.locator(".chart")
    for index in range(charts.count()):
        charts.nth(index).scroll_into_view_if_needed()
        page.locator(f".chart >> nth={index}").and_(page.locator("[data-drawn=true]")).wait_for()


def pages(world: World) -> list[str]:
    return [
        "/",
        f"/runs/{world.cluster}",
        f"/runs/{world.cluster}/scheduler",
        f"/runs/{world.kep}",
        f"/runs/{world.kep}/scheduler",
        f"/runs/{world.batch}",
        f"/runs/{world.batch}/queues",
        f"/runs/{world.replay}",
        f"/runs/{world.replay}/cluster",
        f"/compare?runs={world.sweep_runs[0]}&runs={world.sweep_runs[2]}",
        f"/runs/{world.kueue}",
        f"/runs/{world.kueue}/queues",
        "/sweeps",
        f"/sweeps/{world.sweep}",
        f"/sweeps/{world.study}",
        "/editor",
        f"/editor?from={world.cluster}",
    ]


def test_every_page_loads_with_no_errors(world: World, served: str, browser_page: Page, errors: Errors) -> None:
    for path in pages(world):
        open_page(browser_page, served + path)
        assert browser_page.locator("main h1").count() == 1, path
        assert not browser_page.locator("main .error").count(), (
            path,
            browser_page.locator("main .error").all_text_contents(),
        )
        assert errors == [], path
    browser_page.goto(served + "/docs")  # the API's own page, from the copy served here
    expect(browser_page.locator(".swagger-ui .info .title")).to_contain_text("skenario")
    assert errors == []


def test_a_run_page_draws_the_reports_charts(world: World, served: str, browser_page: Page) -> None:
    open_page(browser_page, f"{served}/runs/{world.cluster}")
    for chart in ("chart-replicas", "chart-latency", "chart-hpa-0", "chart-cluster", "chart-pods"):
        assert browser_page.locator(f"#{chart} svg.main-svg").count() > 0, chart
    ticks = browser_page.locator("#chart-replicas .xtick text").all_text_contents()
    assert ticks and all(re.fullmatch(r"\d\d:\d\d", tick) for tick in ticks)


def test_clicking_a_decision_explains_it(world: World, served: str, browser_page: Page) -> None:
    open_page(browser_page, f"{served}/runs/{world.cluster}")
    first = browser_page.locator("#decision-list tbody tr").first
    clock = first.locator("td").first.inner_text()
    first.click()
    expect(browser_page.locator("#explained h3").first).to_contain_text(f"as of {clock}")
    expect(browser_page.locator("#explained")).to_contain_text("ScalingActive")  # an HPA's conditions


def test_clicking_a_pod_shows_its_verdicts(world: World, served: str, browser_page: Page) -> None:
    """The KEP-140 example's web-2 fits no node: node a is tainted, node b short of CPU."""
    open_page(browser_page, f"{served}/runs/{world.kep}/scheduler")
    browser_page.locator("#pods tbody tr", has_text="web-2").click()
    verdicts = browser_page.locator("#verdicts")
    expect(verdicts.locator("h3")).to_contain_text("unschedulable")
    row_a = verdicts.locator("table.verdicts tbody tr", has=browser_page.locator("th", has_text=re.compile(r"^a$")))
    expect(row_a.locator("td.failed")).to_contain_text("untolerated taint")
    row_b = verdicts.locator("table.verdicts tbody tr", has=browser_page.locator("th", has_text=re.compile(r"^b$")))
    expect(row_b.locator("td.failed")).to_contain_text("Insufficient cpu")


def test_comparing_two_runs_shows_both(world: World, served: str, browser_page: Page) -> None:
    first, second = world.sweep_runs[0], world.sweep_runs[2]
    browser_page.goto(served + "/")
    browser_page.locator("main[data-ready=true]").wait_for()
    for run in (first, second):
        browser_page.locator(f"input.pick[data-run='{run}']").check()
    browser_page.locator("#compare").click()
    browser_page.wait_for_url(re.compile(r"/compare\?"))
    browser_page.locator("main[data-ready=true]").wait_for()
    heads = browser_page.locator("#compared thead th").all_text_contents()
    assert any(f"run {first}" in h for h in heads) and any(f"run {second}" in h for h in heads)
    open_page(browser_page, browser_page.url)
    legend = browser_page.locator("#chart-compare-replicas .legendtext").all_text_contents()
    assert legend == [f"run {first}: hpa-sweep", f"run {second}: hpa-sweep"]


def test_a_sweep_point_opens_its_run(world: World, served: str, browser_page: Page) -> None:
    open_page(browser_page, f"{served}/sweeps/{world.sweep}")
    assert browser_page.locator("#points tbody tr").count() == 3
    point = browser_page.locator("#chart-pareto .scatterlayer path.point").first
    box = point.bounding_box()
    assert box is not None
    browser_page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    browser_page.wait_for_url(re.compile(r"/runs/\d+$"))
    assert int(browser_page.url.rsplit("/", 1)[1]) in world.sweep_runs


@pytest.fixture
def own(own_store: Path) -> Iterator[str]:
    with serving(own_store) as address:
        yield address


def test_a_scenario_run_from_the_editor_finishes_and_appears_in_the_list(
    own: str, own_store: Path, browser_page: Page, errors: Errors
) -> None:
    browser_page.goto(own + "/editor")
    browser_page.locator("main[data-ready=true]").wait_for()
    text = browser_page.locator("#scenario")
    expect(browser_page.locator("#problems .valid")).to_be_visible()
    # A mistake is found as it is typed, with its line and field.
    starter = text.input_value()
    text.fill(starter.replace("rate: 50/s", "rate: fifty"))
    line = next(n for n, row in enumerate(starter.splitlines(), 1) if "rate: 50/s" in row)
    expect(browser_page.locator("#problems li")).to_contain_text(f"line {line}, field spec.traffic.1.rate")
    text.fill(starter.replace("duration: 30m", "duration: 3m"))
    expect(browser_page.locator("#problems .valid")).to_be_visible()
    browser_page.locator("#run-name").fill("from-the-editor")
    browser_page.locator("#run").click()
    link = browser_page.locator("#run-link")
    link.wait_for()
    run = int(link.inner_text().rsplit(" ", 1)[1])
    assert browser_page.locator("#progress").evaluate("bar => bar.value") == 1
    browser_page.goto(own + "/")
    browser_page.locator("#filter").fill("from-the-editor")
    rows = browser_page.locator("#runs tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.locator("td").nth(1)).to_have_text(str(run))
    assert RunStore(own_store).record(run)["phase"] == "Completed"
    assert errors == []


def test_a_run_from_the_editor_is_cancelled(own: str, own_store: Path, browser_page: Page) -> None:
    browser_page.goto(own + "/editor")
    browser_page.locator("main[data-ready=true]").wait_for()
    text = browser_page.locator("#scenario")
    text.fill(text.input_value().replace("duration: 30m", "duration: 400h"))
    expect(browser_page.locator("#problems .valid")).to_be_visible()
    browser_page.locator("#run").click()
    browser_page.wait_for_function("document.querySelector('#progress').value > 0")  # under way: a stretch written
    browser_page.locator("#cancel").click()
    expect(browser_page.locator("#run-status")).to_have_attribute("data-state", "cancelled")
    run = int(browser_page.locator("#run-link").inner_text().rsplit(" ", 1)[1])
    assert RunStore(own_store).record(run)["phase"] == "Failed"


def test_runs_are_tagged_sorted_and_deleted(world: World, own: str, own_store: Path, browser_page: Page) -> None:
    browser_page.goto(own + "/")
    browser_page.locator("main[data-ready=true]").wait_for()
    browser_page.locator(f"input.pick[data-run='{world.kep}']").check()
    browser_page.locator("#tags-input").fill("keep, kep")
    browser_page.locator("#set-tags").click()
    expect(browser_page.locator("#runs-status")).to_have_text("tags set on 1 run(s)")
    assert RunStore(own_store).record(world.kep)["tags"] == ["keep", "kep"]
    browser_page.locator("#filter").fill("keep")
    expect(browser_page.locator("#runs tbody tr")).to_have_count(1)
    browser_page.locator("#filter").fill("")
    browser_page.locator("#runs th", has_text="run").first.click()  # ascending by number
    numbers = [int(n) for n in browser_page.locator("#runs tbody tr td:nth-child(2)").all_text_contents()]
    assert numbers == sorted(numbers)
    browser_page.locator("#delete").click()
    browser_page.locator("#delete").click()  # the second click confirms
    expect(browser_page.locator("#runs-status")).to_have_text("deleted")
    assert world.kep not in [r["run"] for r in RunStore(own_store).runs()]


def test_an_uploaded_scenario_is_checked_and_one_too_large_refused(
    served: str, browser_page: Page, tmp_path: Path
) -> None:
    browser_page.goto(served + "/editor")
    browser_page.locator("main[data-ready=true]").wait_for()
    mistaken = tmp_path / "mistaken.yaml"
    mistaken.write_text((EXAMPLES / "quickstart.yaml").read_text().replace("duration: 30m", "duration: soon"))
    browser_page.locator("#upload").set_input_files(str(mistaken))
    expect(browser_page.locator("#scenario")).to_have_value(mistaken.read_text())
    expect(browser_page.locator("#problems li")).to_contain_text("field spec.duration")
    huge = tmp_path / "huge.yaml"
    huge.write_text("#" * (MAX_SCENARIO_BYTES + 1))
    browser_page.locator("#upload").set_input_files(str(huge))
    expect(browser_page.locator("#problems .error")).to_contain_text("larger than 1,000,000 bytes")
    expect(browser_page.locator("#scenario")).to_have_value(mistaken.read_text())  # kept as it was
