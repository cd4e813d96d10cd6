"""`skenario check`, `skenario run --dry-run` and `skenario run` agree on whether a scenario is valid.

Each scenario goes through all three: check; the dry run, which must print exactly what check prints;
and a real run (no store), kept short by simulated time (the examples cut to a few seconds, as the fuzz
tests cut them). They agree when:

- check refuses (exit 2): the run refuses with the same error line, so the same file, line and field;
- check accepts and says the estimate is over a limit: the run refuses it, unless --force;
- check accepts otherwise: the run completes (exit 0).

The one disagreement allowed is what only a plugin's own code can tell, which check never runs: the
run may refuse a plugin whose class does not take its options, at the plugin's field.

The scenarios: every example in examples/, and cases of every fuzz generator the suite has, imported
from the fuzz tests (the mutated base scenario and its trace, raw text and bytes, mutated examples,
examples at the schema's bounds and scenarios written from the schema alone). The last two are
generated for `check` only and may be long, so before both commands see them they are cut as the
examples are: a few seconds of simulated time, sizes that make a run long made invalid.
"""

from __future__ import annotations

import copy
import re
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.cli import cli
from tests.cli.test_fuzz_examples import RUN_SIZES, SCENARIOS, dump, mutants, shrink, tame, write
from tests.cli.test_fuzz_scenarios import FUZZ, TMP, Tally, mutated, plain, raw, traces
from tests.cli.test_fuzz_schema import example_with_boundaries, from_the_schema

Writer = Callable[[Path, str | bytes], Path]

# What only running a plugin's code can say (`wiring.plugins`): the run's words for it.
PLUGIN_CODE_ONLY = ("the plugin does not take these options",)
FIELD = re.compile(r"field '([^']*)'")


def invoke(*args: str) -> Result:
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code in (0, 2), (args, result.output)
    assert "Traceback" not in result.output, result.output
    return result


def agree(content: str | bytes, *, write_to: Writer = plain, trace: bytes | None = None, label: str = "") -> str:
    """Put one scenario through check, run --dry-run and run; assert they agree; what they said ("valid",
    "over", "invalid" or "plugin")."""
    with tempfile.TemporaryDirectory(dir=TMP) as name:
        folder = Path(name)
        scenario = write_to(folder, content)
        if trace is not None:
            (folder / "trace.csv").write_bytes(trace)
        checked = invoke("check", str(scenario))
        dry = invoke("run", str(scenario), "--dry-run", "--no-store")
        assert (dry.exit_code, dry.stdout, dry.stderr) == (checked.exit_code, checked.stdout, checked.stderr), label
        ran = invoke("run", str(scenario), "--no-store", "--no-progress")
    if checked.exit_code == 2:
        assert ran.exit_code == 2, (label, checked.stderr, ran.stdout[-300:])
        assert ran.stderr == checked.stderr, (label, checked.stderr, ran.stderr)
        assert _field(checked.stderr) == _field(ran.stderr)
        return "invalid"
    if "over the limit" in checked.stdout:
        assert ran.exit_code == 2 and "refused: the run would take" in ran.stderr, (label, ran.output[-300:])
        return "over"
    if ran.exit_code == 2:
        line = ran.stderr.splitlines()[-1]
        plugin = (_field(line) or "").endswith(".plugin") and any(words in line for words in PLUGIN_CODE_ONLY)
        assert plugin, (label, "check accepts what run refuses", line)
        return "plugin"
    assert "digest:" in ran.stdout, (label, ran.stdout[-300:])
    return "valid"


def _field(stderr: str) -> str | None:
    found = FIELD.search(stderr)
    return found.group(1) if found else None


def bounded(text: str) -> str:
    """A scenario generated for `check` only, cut to a few seconds of simulated time and kept small, so that
    the run is as short as a fuzzed run; text that is no list of YAML mappings is left as it is."""
    try:
        documents = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError:
        return text
    first = documents[0] if documents else None
    if not isinstance(first, dict) or not isinstance(first.get("spec"), dict):
        return text
    spec = first["spec"]
    try:
        shrink(first, "3s")
    except (AttributeError, TypeError, ValueError, KeyError, ZeroDivisionError):
        spec["duration"] = "3s"  # events and windows left as written: check and run judge them alike
    for document in documents:
        tame(document, RUN_SIZES)
    return dump(documents)


def test_every_example_as_written_and_cut_short() -> None:
    """Each example: check, as written; then cut to 3 s, through check, the dry run and a run."""
    said = {}
    for name, documents in SCENARIOS.items():
        assert invoke("check", str(Path(__file__).resolve().parents[2] / "examples" / name)).exit_code == 0, name
        short = copy.deepcopy(documents)
        shrink(short[0], "3s")
        said[name] = agree(dump(short), write_to=write, label=name)
    assert set(said.values()) == {"valid"}, said


def sample(strategy: st.SearchStrategy[Any], count: int, judge: Callable[[Any], str]) -> Counter[str]:
    """`count` cases of a fuzz strategy, each judged by `agree` through `judge`; how many got each verdict."""
    tally, seen = Tally(), Counter[str]()

    @settings(FUZZ, max_examples=count)
    @given(strategy)
    def one(case: Any) -> None:
        tally.add()
        seen[judge(case)] += 1

    one()
    assert tally.count >= count
    return seen


def test_the_mutated_base_scenario_with_its_trace() -> None:
    seen = sample(st.tuples(mutated(), traces()), MUTATED, lambda case: agree(case[0], trace=case[1]))
    assert seen["valid"] and seen["invalid"], seen  # both kinds were put through


def test_raw_text_bytes_and_documents() -> None:
    assert sample(raw(), RAW, agree)["invalid"]


def test_mutated_examples() -> None:
    def judge(mutant: tuple[str, str, list[str], str | None]) -> str:
        name, text, done, _ = mutant
        return agree(text, write_to=write, label=f"{name}: {done}")

    seen = sample(mutants(short=True), EXAMPLES, judge)
    assert seen["valid"] and seen["invalid"], seen


def test_examples_at_the_schemas_bounds() -> None:
    def judge(mutant: tuple[str, list[str]]) -> str:
        text, done = mutant
        return agree(bounded(text), write_to=write, label=str(done))

    seen = sample(example_with_boundaries(), BOUNDARIES, judge)
    assert seen["valid"] and seen["invalid"], seen


def test_scenarios_from_the_schema_alone() -> None:
    sample(from_the_schema(), GENERATED, lambda text: agree(bounded(text), write_to=write, label="from the schema"))


# Cases per generator: a sample of each, so that the three commands over all of them stay a few minutes.
MUTATED, RAW, EXAMPLES, BOUNDARIES, GENERATED = 150, 60, 150, 120, 60
