"""The layering docs/background/layout.md draws, checked on every module's imports (read with ast, nothing run).

A module may import its own layer and the layers below (`LAYERS`), never one above; packages side
by side in one layer (`PEERS`) are independent rooms: neither imports the other. Function-local
imports count as imports; besides, only the lazy loads of heavy libraries (pandas, matplotlib,
plotly, and the modules of ours that load them) may be function-local. The page's picture is
checked against `LAYERS` too, so the two cannot drift apart.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src"

# (prefix, layer); the longest matching prefix wins. Scenario's jobs are half-layers, in order.
LAYERS: tuple[tuple[str, float], ...] = (
    ("skenario", 7),  # the package's __init__: the Python API (sweep, tune), loaded lazily
    ("skenario.version", 0),
    ("skenario.__main__", 7),
    ("skenario.errors", 0),
    ("skenario.scenario.io", 0),
    ("skenario.core", 1),
    ("skenario.queueing", 2),
    ("skenario.model", 2),
    ("skenario.model.apiserver", 3),  # the controllers behind the API server: they drive the scheduler
    ("skenario.model.admission", 3),  # the kubelet refuses pods: writes the scheduler's timeline
    ("skenario.model.drain", 3),  # kubectl drain: cordons and removes nodes
    ("skenario.model.nodeconditions", 3),  # conditions to taints: updates nodes
    ("skenario.workloads", 2),
    ("skenario.autoscalers", 3),
    ("skenario.scheduling", 3),
    ("skenario.recording", 4),
    ("skenario.validation", 4),
    ("skenario.scenario", 5),
    ("skenario.scenario.format", 5.0),
    ("skenario.scenario.bundle", 5.1),
    ("skenario.scenario.wiring", 5.2),
    ("skenario.scenario.dryrun", 5.3),
    ("skenario.scenario.preflight", 5.3),
    ("skenario.scenario.loader", 5.4),
    ("skenario.scenario.simulation", 5.5),
    ("skenario.scenario.faketime", 5.6),
    ("skenario.results", 6),
    ("skenario.runs", 6.2),
    ("skenario.sweeps", 6.5),
    ("skenario.web", 6.8),
    ("skenario.cli", 7),
)

# Rooms of one layer that must not import each other.
PEERS = (
    ("skenario.queueing", "skenario.model", "skenario.workloads"),
    ("skenario.autoscalers", "skenario.scheduling"),
    ("skenario.recording", "skenario.validation"),
)

HEAVY = (
    "pandas",
    "matplotlib",
    "plotly",
    "distributed",  # the sweep extra's: loaded only where a sweep or study needs them
    "optuna",
    "scipy",
    "skenario.results.analysis",
    "skenario.results.explain",
    "skenario.results.plot",
    "skenario.results.report",
    "skenario.sweeps.api",
    "fastapi",  # the web extra's: loaded only by `skenario serve`
    "uvicorn",
    "skenario.web.app",
    "skenario.web.sweeps",  # the sweep extra's SciPy, for a sweep's page only
)
"""What may be imported inside a function: heavy libraries, and our modules that import them at their top."""


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    target: str  # the imported module (for `from a import b`, also tried as `a.b`)
    line: int
    local: bool  # inside a function or method


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def layer(module: str) -> float:
    matches = [(len(prefix), rank) for prefix, rank in LAYERS if _within(module, prefix)]
    assert matches, f"{module} is in no layer: add it to LAYERS (and to the picture in docs/background/layout.md)"
    return max(matches)[1]


def _module_name(path: Path, root: Path = SOURCE) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, root: Path = SOURCE) -> Iterator[Import]:
    module = _module_name(path, root)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    local_nodes = {
        id(node)
        for function in ast.walk(tree)
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
        for node in ast.walk(function)
    }
    for node in ast.walk(tree):
        local = id(node) in local_nodes
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(module, alias.name, node.lineno, local)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            for alias in node.names:
                yield Import(module, target, node.lineno, local)
                yield Import(module, f"{target}.{alias.name}", node.lineno, local)


def _all_imports() -> list[Import]:
    return [found for path in sorted(SOURCE.rglob("*.py")) for found in _imports(path)]


def _modules() -> set[str]:
    return {_module_name(path) for path in SOURCE.rglob("*.py")}


def _ours(found: Import, modules: set[str]) -> bool:
    return found.target in modules


def test_every_module_has_a_layer() -> None:
    for module in _modules():
        layer(module)


def test_no_module_imports_a_layer_above_its_own() -> None:
    modules = _modules()
    upward = [
        f"{found.module}:{found.line} imports {found.target} (layer {layer(found.target)} > {layer(found.module)})"
        for found in _all_imports()
        if _ours(found, modules) and layer(found.target) > layer(found.module)
    ]
    assert upward == []


def test_rooms_of_one_layer_do_not_import_each_other() -> None:
    modules = _modules()
    crossing = []
    for found in _all_imports():
        if not _ours(found, modules):
            continue
        for rooms in PEERS:
            home = [room for room in rooms if _within(found.module, room)]
            away = [room for room in rooms if _within(found.target, room)]
            if home and away and home != away:
                crossing.append(f"{found.module}:{found.line} imports {found.target}")
    assert crossing == []


def test_function_local_imports_are_only_lazy_loads_of_heavy_libraries() -> None:
    statements: dict[tuple[str, int], list[str]] = {}
    for found in _all_imports():
        if found.local:
            statements.setdefault((found.module, found.line), []).append(found.target)
    # `from a import b` yields a and a.b: a statement is a lazy load if either names a heavy module.
    local = [
        f"{module}:{line} imports {targets[0]} inside a function"
        for (module, line), targets in statements.items()
        if not any(_within(target, heavy) for target in targets for heavy in HEAVY)
    ]
    assert local == []


@pytest.mark.parametrize(
    ("module", "expected"),
    [
        ("skenario.scenario.io", 0),
        ("skenario.scenario.format.manifests.hpa", 5.0),
        ("skenario.scenario.wiring.traffic", 5.2),
        ("skenario.model.cpu", 2),
        ("skenario.model.apiserver", 3),
        ("skenario.cli.run", 7),
    ],
)
def test_the_longest_prefix_names_the_layer(module: str, expected: float) -> None:
    assert layer(module) == expected


def test_the_checks_catch_an_upward_import(tmp_path: Path) -> None:
    """The walk sees a function-local import, and an upward one fails the rule (the test can fail)."""
    (tmp_path / "skenario" / "model").mkdir(parents=True)
    source = tmp_path / "skenario" / "model" / "probe.py"
    source.write_text("def f():\n    from skenario.scenario.simulation import Simulation\n", encoding="utf-8")
    found = [i for i in _imports(source, tmp_path) if i.target == "skenario.scenario.simulation"]
    assert found and found[0].local and found[0].module == "skenario.model.probe"
    assert layer(found[0].target) > layer(found[0].module)


PICTURE = SOURCE.parent / "docs" / "background" / "layout.md"
_PICTURE_LINE = re.compile(r"^(\d+(?:\.\d+)?)\s+(.+?)\s{2,}(.*)$")


def _picture() -> list[tuple[float, list[str], str]]:
    """The layers the layout page draws: (rank, the modules named, what it says of them)."""
    text = PICTURE.read_text(encoding="utf-8")
    block = text[text.index("## Layers") :].split("```")[1]
    rows = []
    for line in block.strip().splitlines():
        match = _PICTURE_LINE.match(line)
        assert match, f"a line of the layers picture is not `rank  names  what`: {line!r}"
        names = [n.strip() for n in re.split(r"[|,]", match.group(2))]
        modules = [
            "skenario" if n == "skenario's own names" else "skenario." + n.removesuffix(".py").replace("/", ".")
            for n in names
        ]
        rows.append((float(match.group(1)), modules, match.group(3)))
    return rows


def test_the_layout_pages_picture_draws_the_layers_checked_here() -> None:
    ranks = dict(LAYERS)
    drawn = {module: rank for rank, modules, _ in _picture() for module in modules}
    assert all(ranks.get(module) == rank for module, rank in drawn.items()), {
        module: (rank, ranks.get(module)) for module, rank in drawn.items() if ranks.get(module) != rank
    }
    # Every package directly under skenario, and every module placed apart from its package, is drawn.
    half_layers = {prefix for prefix, rank in LAYERS if prefix.startswith("skenario.scenario.") and 5 <= rank < 6}
    placed = {
        prefix
        for prefix, rank in LAYERS
        if prefix.count(".") == 1 or (prefix.count(".") == 2 and rank != ranks[prefix.rpartition(".")[0]])
    } - half_layers
    assert placed - {"skenario.__main__"} <= set(drawn)
    # The scenario's half-layers are drawn in their order.
    (says,) = [what for _, modules, what in _picture() if modules == ["skenario.scenario"]]
    steps = [[f"skenario.scenario.{n.strip()}" for n in step.split(",")] for step in says.split("<")]
    drawn_ranks = [sorted({ranks[m] for m in step}) for step in steps]
    assert drawn_ranks == [[r] for r in sorted({ranks[m] for step in steps for m in step})]
