"""The test suite does not depend on the machine's speed (the house rule: no wall-clock limit in a test).

Every test file is read as Python and refused where it reads the clock, arms an alarm or a timer,
sleeps (only tests/processes.py polls, at a pace), gives a wait a `timeout`, gives Hypothesis a
`deadline`, keeps Playwright's default timeouts (a browser test takes conftest's `browser_page`,
which turns them off), or marks a test with its own pytest-timeout. A hang is
caught by a budget the simulation counts (`MovementBudget`), by waiting for the real event, and by
the one net checked last here: pytest-timeout, generous, in its thread method.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

TESTS = Path(__file__).resolve().parent
POLLER = TESTS / "processes.py"

CLOCK_READS = {"monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns", "time", "time_ns", "process_time"}
ALARMS = {"alarm", "setitimer"}
# Calls that wait for something, by name: `timeout=` on one of these is a wall-clock limit.
WAITS = {
    "run", "communicate", "wait", "join", "get", "put", "wait_for", "wait_for_workers", "Client", "connect",
    "check_output", "check_call", "call", "result", "acquire", "urlopen", "create_connection", "select", "poll",
    "recv", "Popen", "goto", "click", "fill", "expect", "screenshot", "wait_for_selector", "wait_for_load_state",
    "wait_for_event", "wait_for_function", "wait_for_url",
}  # fmt: skip
PLAYWRIGHT_DEFAULTS = {"set_default_timeout", "set_default_navigation_timeout"}


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _imports_playwright(node: ast.AST) -> bool:
    if isinstance(node, ast.Import):
        return any(alias.name.split(".")[0] == "playwright" for alias in node.names)
    return isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "playwright"


def _imported_names(node: ast.AST) -> set[str]:
    return {alias.name for alias in node.names} if isinstance(node, ast.Import | ast.ImportFrom) else set()


def _takes_fixture(node: ast.AST, fixture: str) -> bool:
    """Whether `node` is a test or a fixture (what pytest hands fixtures to) with a parameter `fixture`."""
    if not isinstance(node, ast.FunctionDef) or fixture not in {a.arg for a in node.args.args}:
        return False
    decorators = {_name(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list}
    return node.name.startswith("test") or "fixture" in decorators


def _no_limits(scope: ast.AST) -> bool:
    """Whether the code in `scope` turns Playwright's default timeouts off (`set_default_timeout(0)`)."""
    return any(
        isinstance(node, ast.Call)
        and _name(node.func) == "set_default_timeout"
        and len(node.args) == 1
        and _no_limit(node.args[0])
        for node in ast.walk(scope)
    )


def _no_limit(node: ast.expr) -> bool:
    """`None`, or 0 (Playwright's and a queue's "no limit" / "do not wait")."""
    return isinstance(node, ast.Constant) and node.value in (None, 0) and not isinstance(node.value, bool)


def _number(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool)


def wall_clock_uses(source: str, name: str, *, may_sleep: bool = False) -> list[str]:
    """Each place in a test file's source that makes a test depend on the wall clock, as `name:line: what`."""
    tree = ast.parse(source, filename=name)
    found: list[str] = []

    def refuse(node: ast.AST, what: str) -> None:
        found.append(f"{name}:{getattr(node, 'lineno', '?')}: {what}")

    called_names = {_name(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    for node in ast.walk(tree):
        # Playwright waits 30 s for an action or a page, and 5 s for an `expect`, unless told otherwise.
        if _takes_fixture(node, "page") and not _no_limits(node):
            refuse(node, "takes pytest-playwright's `page`, whose waits stop at 30 s: take `browser_page` (conftest)")
        if isinstance(node, ast.Call) and _name(node.func) in ("new_page", "new_context") and not _no_limits(tree):
            refuse(node, "a browser page with Playwright's 30 s waits: call set_default_timeout(0) on it")
        if _imports_playwright(node) and "expect" in _imported_names(node) and "set_options" not in called_names:
            refuse(node, "a browser test keeps Playwright's 5 s `expect`: call expect.set_options(timeout=...)")
        if isinstance(node, ast.ImportFrom) and node.module in ("time", "signal"):
            for alias in node.names:
                if alias.name in CLOCK_READS | ALARMS | {"sleep"}:
                    refuse(node, f"from {node.module} import {alias.name}")
        if isinstance(node, ast.Attribute) and node.attr == "timeout" and _name(node.value) == "mark":
            refuse(node, "a test's own time limit: pytest.mark.timeout (the net is one, in pyproject.toml)")
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            owner, attr = node.value.id, node.attr
            if owner == "time" and attr in CLOCK_READS:
                refuse(node, f"reads the clock: time.{attr}")
            if owner == "time" and attr == "sleep" and not may_sleep:
                refuse(node, "sleeps (wait for the event itself: tests/processes.py)")
            if owner == "signal" and attr in ALARMS:
                refuse(node, f"arms an alarm: signal.{attr}")
            if owner == "threading" and attr == "Timer":
                refuse(node, "arms a timer: threading.Timer")
        if not isinstance(node, ast.Call):
            continue
        called = _name(node.func)
        for keyword in node.keywords:
            if keyword.arg == "timeout" and called in WAITS and not _no_limit(keyword.value):
                refuse(node, f"a wait with a time limit: {called}(timeout=...)")
            if keyword.arg == "deadline" and not _no_limit(keyword.value):
                refuse(node, f"a Hypothesis deadline: {called}(deadline=...), where it must be None")
        if called in ("wait", "join", "wait_for") and any(_number(arg) for arg in node.args):
            refuse(node, f"a wait with a time limit: {called}(<seconds>)")
        if called in PLAYWRIGHT_DEFAULTS and not all(_no_limit(arg) for arg in node.args):
            refuse(node, f"a browser's time limit: {called}(...), where it must be 0 (none)")
    return found


def test_no_test_file_holds_a_wall_clock_limit() -> None:
    files = sorted(TESTS.rglob("*.py"))
    assert POLLER in files and len(files) > 100
    found = [
        use
        for path in files
        for use in wall_clock_uses(
            path.read_text(encoding="utf-8"), str(path.relative_to(TESTS.parent)), may_sleep=path == POLLER
        )
    ]
    assert found == [], "\n".join(found)


@pytest.mark.parametrize(
    ("source", "what"),
    [
        ("import time\nstarted = time.perf_counter()", "reads the clock: time.perf_counter"),
        ("from time import monotonic", "from time import monotonic"),
        ("import time\ntime.sleep(0.5)", "sleeps"),
        ("import signal\nsignal.setitimer(signal.ITIMER_REAL, 30)", "arms an alarm: signal.setitimer"),
        ("import subprocess\nsubprocess.run(['true'], timeout=120)", "run(timeout=...)"),
        ("process.communicate(timeout=30)", "communicate(timeout=...)"),
        ("process.wait(30)", "wait(<seconds>)"),
        ("settings(max_examples=5, deadline=200)", "a Hypothesis deadline"),
        ("page.set_default_timeout(30_000)", "set_default_timeout"),
        ("import pytest\n@pytest.mark.timeout(5)\ndef test(): pass", "pytest.mark.timeout"),
        ("def test_page(page):\n    page.goto('file:///x')", "takes pytest-playwright's `page`"),
        ("@pytest.fixture\ndef drawn(page):\n    return page", "takes pytest-playwright's `page`"),
        ("page = browser.new_page()", "a browser page with Playwright's 30 s waits"),
        ("from playwright.sync_api import expect", "Playwright's 5 s `expect`"),
    ],
)
def test_each_kind_of_limit_is_found(source: str, what: str) -> None:
    """The check above finds what it says it refuses (and so its passing means something)."""
    [found] = wall_clock_uses(source, "probe.py")
    assert what in found


@pytest.mark.parametrize(
    "source",
    [
        "RequestSpec(Constant(10), timeout=None)",  # a request's timeout, in simulated time
        "build_requests(arrivals=[1], timeout=1 * SECOND)",
        "settings(max_examples=5, deadline=None)",
        "process.communicate()",
        "', '.join(parts)",
        "def browser_page(page):\n    page.set_default_timeout(0)\n    return page",
        "def test_chart(browser_page):\n    browser_page.goto('file:///x')",
        "def _figure(page: str) -> str:\n    return page",  # a page of HTML, not a browser's
        "context = browser.new_context()\ncontext.set_default_timeout(0)",
        "from playwright.sync_api import expect\nexpect.set_options(timeout=3_600_000)",
    ],
)
def test_what_is_no_wall_clock_limit_passes(source: str) -> None:
    assert wall_clock_uses(source, "probe.py") == []


def test_the_one_net_is_pytest_timeout_generous_and_in_its_thread_method(pytestconfig: pytest.Config) -> None:
    """The thread method, because a signal (SIGALRM) raises in whatever frame is running: inside
    PyYAML's scanner that made pytest's report fail (INTERNALERROR), and Hypothesis takes the
    exception for a failing example and replays it with no alarm left."""
    assert pytestconfig.pluginmanager.hasplugin("timeout"), "pytest-timeout is not installed: pip install -e '.[test]'"
    assert pytestconfig.getini("timeout_method") == "thread"
    assert float(pytestconfig.getini("timeout")) >= 1800


def test_hypothesis_neither_times_examples_nor_their_generation() -> None:
    assert settings.default.deadline is None
    assert HealthCheck.too_slow in settings.default.suppress_health_check
