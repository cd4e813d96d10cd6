"""The hostile corpus: inputs and stores an adversarial user tried, each given to the real command line
(`python -m skenario`, a process of its own) and each ending in one clear line and exit status 2,
with nothing stored, within a budget of CPU time the test counts (a slow machine only waits longer).

The deeper tests of each defence live beside its code (tests/scenario/test_io.py, tests/results/store/,
tests/cli/test_terminal.py, tests/runs/test_supervise.py); this file holds the attacks end to end.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.processes import communicate_within_cpu
from tests.workloads import write_archive

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = (ROOT / "examples" / "quickstart.yaml").read_text()
HPA_STEP = (ROOT / "examples" / "hpa-step.yaml").read_text()
SMALL = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: small}
spec:
  duration: 1m
  workload: {replicas: 1, request: {cpuTime: 10ms}}
  traffic: TRAFFIC
"""
CPU_BUDGET_S = 30.0
"""CPU seconds any case may take: starting Python and skenario costs about one; the attacks took minutes."""


def laughs(levels: int = 9, indent: str = "") -> str:
    """The billion laughs: ten aliases of the level below at each level, 10**levels leaves from ~600 bytes."""
    lines = ['l0: &l0 "lol"'] + [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, levels + 1)]
    return "\n".join(indent + line for line in lines)


def bomb_in(text: str, old: str, new: str) -> str:
    assert old in text
    return f"x-laughs:\n{laughs(indent='  ')}\n" + text.replace(old, new, 1)


@dataclass(frozen=True)
class Case:
    """One attack: the files it writes in a folder, and the command it runs there (FOLDER stands for it)."""

    files: Callable[[Path], None]
    command: tuple[str, ...]
    says: str  # what the one line says


def scenario(text: str) -> Callable[[Path], None]:
    def write(folder: Path) -> None:
        (folder / "s.yaml").write_text(text)

    return write


def hpa_manifest(manifest: str) -> Callable[[Path], None]:
    def write(folder: Path) -> None:
        (folder / "s.yaml").write_text(HPA_STEP.replace("manifest: manifests/web-hpa.yaml", f"manifest: {manifest}"))
        (folder / "hpa.yaml").write_text(
            f"x-laughs:\n{laughs()}\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\n"
            "metadata: {name: web}\nspec:\n  maxReplicas: 5\n  metrics: *l9\n"
        )

    return write


def fifo(folder: Path) -> None:
    os.mkfifo(folder / "s.yaml")  # opening it would wait for a writer that never comes


def comments(folder: Path) -> None:
    with open(folder / "s.yaml", "w") as file:
        file.write(QUICKSTART)
        line = "# " + "x" * 98 + "\n"
        file.write(line * (40 * 2**20 // len(line)))  # 40 MB of comments


def archive(folder: Path) -> None:
    write_archive(folder / "counts.tbz2", b"1 2\n" + b"7" * (20 << 20))  # 20 MiB without a space
    (folder / "s.yaml").write_text(SMALL.replace("TRAFFIC", "{type: nasa, file: counts.tbz2}"))


CASES = {
    "alias bomb in a duration": Case(
        scenario(bomb_in(QUICKSTART, "duration: 30m", "duration: *l9")), ("check", "s.yaml"), "alias"
    ),
    "alias bomb as the traffic": Case(
        scenario(bomb_in(QUICKSTART, "\n  traffic:", "\n  traffic: *l9\n  x-traffic:")), ("run", "s.yaml"), "alias"
    ),
    "alias bomb in an HPA's metrics": Case(hpa_manifest("hpa.yaml"), ("run", "s.yaml"), "alias"),
    "a manifest that is /dev/zero": Case(hpa_manifest("/dev/zero"), ("run", "s.yaml"), "not a regular file"),
    "checking /dev/zero": Case(lambda folder: None, ("check", "/dev/zero"), "not a regular file"),
    "a scenario that is a FIFO": Case(fifo, ("run", "s.yaml"), "not a regular file"),
    "40 MB of comments": Case(comments, ("check", "s.yaml"), "larger than"),
    "deep nesting": Case(scenario("a: " + "[" * 100_000 + "]" * 100_000), ("check", "s.yaml"), "nests too deeply"),
    "an archive member with no whitespace": Case(archive, ("run", "s.yaml"), "not a file of counts"),
    "escape sequences in a key": Case(
        scenario(QUICKSTART.replace("  duration: 30m", '  duration: 30m\n  "\\e[2J\\e]0;owned\\a": 1')),
        ("check", "s.yaml"),
        "\\x1b[2J",
    ),
}


def run_cli(folder: Path, *args: str) -> tuple[int, str, str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "skenario", *args],
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ | {"SKENARIO_STORE": str(folder / "store"), "COLUMNS": "200"},
    )
    out, err = communicate_within_cpu(process, CPU_BUDGET_S, f"skenario {' '.join(args)}")
    return process.returncode, out, err


@pytest.mark.parametrize("name", list(CASES))
def test_each_attack_on_the_input_ends_in_one_line_and_stores_nothing(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    case.files(tmp_path)
    code, out, err = run_cli(tmp_path, *case.command)
    assert code == 2, (code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert case.says in lines[0], lines[0]
    assert "\x1b" not in err and "Traceback" not in err + out
    assert not (tmp_path / "store").exists()  # nothing stored, not even an empty store


def test_another_applications_database_at_the_store_path_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    (tmp_path / "store").mkdir()
    foreign = tmp_path / "store" / "runs.sqlite"
    with closing(sqlite3.connect(foreign)) as db, db:
        db.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY, owner TEXT)")
        db.execute("INSERT INTO runs (owner) VALUES ('someone else')")
    before = hashlib.sha256(foreign.read_bytes()).hexdigest()
    (tmp_path / "s.yaml").write_text(QUICKSTART.replace("duration: 30m", "duration: 1m"))
    for command in (("run", "s.yaml", "--no-progress"), ("runs",), ("show", "latest"), ("runs", "gc", "--keep", "0")):
        code, _out, err = run_cli(tmp_path, *command)
        assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, (command, err)
        assert "not a skenario run store" in err, err
    assert hashlib.sha256(foreign.read_bytes()).hexdigest() == before


def test_a_plugin_naming_a_module_the_user_did_not_allow_touches_nothing(tmp_path: Path) -> None:
    """`logging:FileHandler` with `mode: w` truncated the file it named; `antigravity` opened a browser."""
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me")
    marker = tmp_path / "browser-ran"
    for plugin, options in (
        ("logging:FileHandler", f"{{filename: {victim}, mode: w}}"),
        ("logging.handlers:SysLogHandler", "{}"),
        ("antigravity:X", "{}"),
    ):
        autoscaler = f"\n  autoscalers: [{{type: plugin, plugin: '{plugin}', options: {options}}}]\n"
        (tmp_path / "s.yaml").write_text(SMALL.replace("TRAFFIC", "{type: constant, rate: 1/s}") + autoscaler)
        process = subprocess.Popen(
            [sys.executable, "-m", "skenario", "run", "s.yaml"],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=os.environ | {"SKENARIO_STORE": str(tmp_path / "store"), "BROWSER": f"touch {marker}"},
        )
        _out, err = communicate_within_cpu(process, CPU_BUDGET_S, plugin)
        assert process.returncode == 2 and len(err.strip().splitlines()) == 1, (plugin, err)
        assert "--allow-plugin-module" in err and "s.yaml" in err, err
    assert victim.read_text() == "keep me" and not marker.exists()
    assert not (tmp_path / "store").exists()
