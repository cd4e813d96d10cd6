"""The examples, mutated, through `skenario check` and `skenario run`: exit 0, or exit 2 with one line.

Every `kind: Scenario` file under examples/ is a starting point. A mutant changes one to three places
of one of its documents (a key dropped or misspelt, an unknown key, a value swapped for a wrong type,
a negative, huge, NaN or infinite number, an empty string, a list, a unit that is none such as
`10 parsecs`, deeply nested garbage), or changes its text (a key line written twice, a value only
YAML's text can hold such as `!!bool x` or a number of 5,000 digits, the file cut short as if
half-written, a stray token). 1,500 mutants go through `check`, which validates and estimates
without running; 300 go through `run`, the example shrunk to a few simulated seconds and the store
in a temporary folder, half of them only scaled (numbers and durations halved or doubled) so that
most of those run to the end. The verdicts are those of `test_fuzz_scenarios.verdict`; a key written
twice must be named as such.
"""

from __future__ import annotations

import copy
import math
import re
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.core.time import SECOND, format_duration, parse_duration
from skenario.scenario.format.kep import KEP_API_VERSION
from tests.cli.test_fuzz_scenarios import FUZZ, SIZES, Tally, nested, paths, safe_value, verdict

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _scenarios() -> dict[str, list[Any]]:
    """Each example whose first document is a Scenario, by its path under examples/, as its documents."""
    found = {}
    for path in sorted(EXAMPLES.rglob("*.yaml")):
        documents = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]
        first = documents[0] if documents else None
        # KEP-140's own Scenario (examples/kep140) is a different format, tested in tests/cli/test_kep_command.py.
        if isinstance(first, dict) and first.get("kind") == "Scenario" and first.get("apiVersion") != KEP_API_VERSION:
            found[path.relative_to(EXAMPLES).as_posix()] = documents
    return found


SCENARIOS = _scenarios()
# The folders the examples name files in (traces/, manifests/, plugins/, and those of an example in a folder of
# its own, such as calibration/espa-hpa/), linked beside each mutant.
_TOP = sorted(p for p in EXAMPLES.iterdir() if p.is_dir())
_NESTED = sorted(p for top in _TOP for p in top.iterdir() if p.is_dir() and p.name not in {t.name for t in _TOP})
FOLDERS = _TOP + [p for i, p in enumerate(_NESTED) if p.name not in {q.name for q in _NESTED[:i]}]

NAN, INF = float("nan"), float("inf")
JUNK: list[Any] = [
    None, True, False, 0, -1, -7, 1.5, -0.5, 2**31, 2**63, -(2**63) - 1, 10**30, 1e300, -1e300, NAN, INF, -INF,
    "", " ", "abc", "-", "10 parsecs", "5 fortnights", "3 widgets/s", "12 parsecs/s", "5mi", "1e3", "-5s", "-1",
    "0", "0s", "0ns", "1ns", "1e309", ".nan", "NaN", "inf", "∞", "名前", "[/x]", "a\nb", "\u0000", "%", "50%%",
    "99999999999999999999999d", "1e30/s", "2**63", "9223372036854775808", "0x10", "~", "null", "yes",
    [], [None], [1, "x"], {}, {"x": 1}, {"type": None}, [[[]]],
]  # fmt: skip
KEY_NOISE = ["x", "unknown", "", "名前", "1", "apiVersion", "type", "spec", "replicas", "$ref", "<<"]


def nudged(value: Any) -> list[Any]:
    """Values near the one written: its sign, scale and unit changed, or its type."""
    if isinstance(value, bool):
        return [not value, "yes", int(value), str(value).lower()]
    if isinstance(value, int | float):
        return [-value, 0, value * 10**9, value / 1e9, -1, str(value), [value], NAN, INF, math.nextafter(0.0, -1.0)]
    if isinstance(value, str):
        swapped = re.sub(r"[A-Za-zµμ%/]+\s*$", " parsecs", value)
        return [
            "-" + value, value + value, swapped, value.upper(), value.strip() + " x", value[:-1], [value], {value: 1},
            re.sub(r"\d+", "0", value), re.sub(r"\d+", "99999999999999", value), re.sub(r"\d+(\.\d+)?", "1e400", value),
        ]  # fmt: skip
    if isinstance(value, list):
        return [[], value * 2, value[:1], value[1:], {"items": value}, None]
    if isinstance(value, dict):
        return [{}, [value], None, "", {**value, "x-extra": 1}]
    return [None]


DURATION = re.compile(r"^(\d+(\.\d+)?(ns|us|ms|s|m|h))+$")


def scaled(value: Any, factor: float) -> Any:
    """A number or a duration times `factor`, still of its kind: most scenarios stay valid."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return max(1, round(value * factor))
    if isinstance(value, float) and value > 0:
        return value * min(factor, 1) if value <= 1 else value * factor  # one at most 1 may be a ratio
    if isinstance(value, str) and DURATION.match(value):
        return format_duration(max(1, round(parse_duration(value) * factor)))
    return value


@st.composite
def gentle(draw: st.DrawFn, document: Any, spare: tuple[str, ...]) -> list[str]:
    """Scale one to three numbers or durations by 1/2 or 2: a mutant that mostly still runs."""
    where = [path for path in paths(document) if not set(path) & set(spare)]
    done = []
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(where))
        holder: Any = document
        for key in path[:-1]:
            holder = holder[key]
        factor = draw(st.sampled_from([0.5, 2]))
        holder[path[-1]] = scaled(holder[path[-1]], factor)
        done.append(f"scale {'.'.join(map(str, path))} by {factor}")
    return done


@st.composite
def tree_mutations(draw: st.DrawFn, documents: list[Any], spare: tuple[str, ...] = ()) -> list[str]:
    """Change one to three places of one document in place, none under a key in `spare`; what was done."""
    index = 0 if len(documents) == 1 or draw(st.integers(0, 4)) else draw(st.integers(0, len(documents) - 1))
    done = []
    for _ in range(draw(st.sampled_from([1, 1, 1, 2, 3]))):
        document = documents[index]
        where = [path for path in paths(document) if not set(path) & set(spare)]
        kind = draw(st.sampled_from(["drop", "junk", "junk", "nudge", "nudge", "nudge", "key", "typo", "nest"]))
        if not where:
            kind = "key"
        path = draw(st.sampled_from(where)) if where else ()
        holder: Any = document
        for key in path[:-1]:
            holder = holder[key]
        key = path[-1] if path else None
        if kind == "drop":
            del holder[key]
        elif kind == "junk":
            holder[key] = copy.deepcopy(draw(st.sampled_from(JUNK)))
        elif kind == "nudge":
            holder[key] = draw(st.sampled_from(nudged(holder[key])))
        elif kind == "nest":
            holder[key] = nested(draw(st.integers(2, 60)), draw(st.sampled_from(["list", "map", "mixed"])))
        elif kind == "typo" and isinstance(holder, dict) and isinstance(key, str) and key:
            at = draw(st.integers(0, len(key) - 1))
            typo = draw(st.sampled_from([key[:at] + key[at + 1 :], key.upper(), key + "s", key[:at] + "_" + key[at:]]))
            holder[typo] = holder.pop(key)
        else:  # a key the format does not know, in some mapping
            mappings = [document, holder] if isinstance(holder, dict) else [document]
            target = draw(st.sampled_from(mappings))
            if isinstance(target, dict):
                target[draw(st.sampled_from(KEY_NOISE))] = copy.deepcopy(draw(st.sampled_from(JUNK)))
        done.append(f"{kind} {'.'.join(map(str, path))}")
    return done


KEY_LINE = re.compile(r"^(\s*)([A-Za-z_][\w.-]*): (?![|>&*!]).+$")
TOKENS = ["", ":", "- ", "{", "[", "'", '"', "\t", "&a ", "*a ", "!!python/object:os.system ", "\n---\n", "? ", "%"]
# Values only YAML's text can hold: tags, dates, sexagesimals, anchors, numbers past Python's 4,300 digits.
ODDITIES = [
    "!!int x", "!!float x", "!!bool x", "!!timestamp x", "!!binary abc", "!!set {1: 2}", "!!str", "!!null x",
    "!!map []", "!!omap [1]", "!!python/name:os.system", "2001-13-45", "2001-02-30", "2001-02-03 25:00:00",
    "2001-02-03", "190:20:30", "1:60", "0b2", "0x_", "0o9", ".inf", "-.inf", ".nan", "~", "*nowhere", "&a [*a]",
    "9" * 5000, "1" + "0" * 400 + "s", "1e999999999", "1e-999999999", "1e309", "-1e309", "9223372036854775808",
    "99999999999999999999999999999999Ei", "1" + "0" * 400, "1" + "0" * 400 + "/s", "'" + "5" * 100 + "%'",
]  # fmt: skip


@st.composite
def text_mutation(draw: st.DrawFn, text: str) -> tuple[str, str | None]:
    """The text changed: a key line written twice (that key returned), a value only YAML can write, the
    text cut short, or a stray token."""
    kind = draw(st.sampled_from(["twice", "twice", "cut", "token", "oddity", "oddity"]))
    lines = text.splitlines(keepends=True)
    candidates = [i for i, line in enumerate(lines) if KEY_LINE.match(line.rstrip("\n"))]
    if kind in ("twice", "oddity") and candidates:
        at = draw(st.sampled_from(candidates))
        match = KEY_LINE.match(lines[at].rstrip("\n"))
        assert match is not None
        if kind == "oddity":
            odd = f"{match.group(1)}{match.group(2)}: {draw(st.sampled_from(ODDITIES))}\n"
            return "".join([*lines[:at], odd, *lines[at + 1 :]]), None
        return "".join([*lines[: at + 1], lines[at], *lines[at + 1 :]]), match.group(2)
    at = draw(st.integers(0, len(text)))
    if kind == "cut":
        return text[:at], None
    return text[:at] + draw(st.sampled_from(TOKENS)) + text[at:], None


# In a run, a valid but enormous size runs as long as it says (the pre-flight lets up to four hours
# through): there, sizes stay small, as in test_fuzz_scenarios.
RUN_SIZES = SIZES | {"maxSize", "minSize", "maxScale", "minScale", "initialScale", "rateFrom", "rateTo"}
# In `check` too, one: cluster.py builds every node of spec.cluster.nodes while validating and checks
# their names pairwise, so `count: 100000` takes minutes (reported in #18).
CHECK_SIZES = {"count"}


def tame(document: Any, sizes: set[str], within: str | None = None) -> None:
    """Sizes in `sizes` (under a key `within`, if given) that are huge but valid made invalid (-1)."""
    for path in paths(document):
        if path[-1] in sizes and (within is None or within in path[:-1]):
            holder = document
            for key in path[:-1]:
                holder = holder[key]
            holder[path[-1]] = safe_value(path[-1], holder[path[-1]], sizes)


def dump(documents: list[Any]) -> str:
    return yaml.safe_dump_all(documents, allow_unicode=True, sort_keys=False, width=math.inf)


@st.composite
def mutants(draw: st.DrawFn, short: bool = False) -> tuple[str, str, list[str], str | None]:
    """(example, text, what was done, a key written twice or None)."""
    name = draw(st.sampled_from(sorted(SCENARIOS)))
    documents = copy.deepcopy(SCENARIOS[name])
    if short:
        shrink(documents[0], draw(st.sampled_from(["1s", "3s", "5s"])))
    twice = None
    # A plugin's options go to its own code (the example's does `period_s * SECOND`): not fuzzed in a run.
    spare = ("options",) if short else ()
    if short and draw(st.booleans()):  # half the runs only scaled: most of them run to the end
        done = draw(gentle(documents[0], (*spare, "seed", "duration")))
    else:
        done = draw(tree_mutations(documents, spare)) if draw(st.integers(0, 4)) else []
    for document in documents:
        if short:
            tame(document, RUN_SIZES)
        else:
            tame(document, CHECK_SIZES, within="cluster")
    text = dump(documents)
    if not done or (not done[0].startswith("scale") and draw(st.integers(0, 5)) == 0):
        text, twice = draw(text_mutation(text))
        done.append("text" if twice is None else f"twice {twice}")
    return name, text, done, twice


def shrink(document: dict[str, Any], duration: str) -> None:
    """The example cut to `duration` of simulated time, its events' times scaled down with it."""
    spec = document["spec"]
    done = [e["at"] for e in spec.get("events", []) if "done" in e and isinstance(e.get("at"), str)]
    written = spec.get("duration", done[0] if done else None)
    end = parse_duration(written) if isinstance(written, str) else None
    spec["duration"] = duration
    for event in spec.get("events", []):
        if end and isinstance(event.get("at"), str):
            event["at"] = format_duration(parse_duration(event["at"]) * parse_duration(duration) // end)
    traffic = spec.get("traffic")
    for entry in traffic if isinstance(traffic, list) else [traffic]:
        for key in ("start", "stop", "stepAt", "period"):
            if end and isinstance(entry, dict) and isinstance(entry.get(key), str):
                cut = parse_duration(entry[key]) * parse_duration(duration) // end
                entry[key] = format_duration(max(cut, SECOND // 1000))


def write(folder: Path, text: str | bytes) -> Path:
    """Write the mutant as mutant.yaml in `folder`, beside links to the folders the examples name files in."""
    for linked in FOLDERS:
        (folder / linked.name).symlink_to(linked, target_is_directory=True)
    scenario = folder / "mutant.yaml"
    scenario.write_bytes(text.encode() if isinstance(text, str) else text)
    return scenario


CHECKED, RUN = 1500, 300


def test_every_example_is_valid_as_written_and_shrunk() -> None:
    assert len(SCENARIOS) >= 15, sorted(SCENARIOS)
    for name, documents in SCENARIOS.items():
        verdict("check", dump(documents), write_to=write, expect_ok=True, label=name)
        short = copy.deepcopy(documents)
        shrink(short[0], "3s")
        verdict("run", dump(short), write_to=write, expect_ok=True, label=name)


def test_every_example_made_a_runaway_is_refused_by_run_at_once_and_leaves_no_run() -> None:
    """Ten million days of simulated time: the pre-flight refuses each (the movement budget would stop a run)."""
    for name, documents in SCENARIOS.items():
        runaway = copy.deepcopy(documents)
        spec = runaway[0]["spec"]
        spec["duration"] = "10000000d"
        spec["events"] = [event for event in spec.get("events", []) if "done" not in event]
        verdict("run", dump(runaway), write_to=write, refused=True, label=name)


def test_mutated_examples_through_check() -> None:
    tally = Tally()

    @settings(FUZZ, max_examples=CHECKED)
    @given(mutants())
    def one(mutant: tuple[str, str, list[str], str | None]) -> None:
        name, text, done, twice = mutant
        tally.add()
        verdict("check", text, write_to=write, twice=twice, label=f"{name}: {done}")

    one()
    assert tally.count >= CHECKED


def test_mutated_examples_through_run_leave_a_whole_run_or_none() -> None:
    tally = Tally()

    @settings(FUZZ, max_examples=RUN)
    @given(mutants(short=True))
    def one(mutant: tuple[str, str, list[str], str | None]) -> None:
        name, text, done, twice = mutant
        tally.add()
        verdict("run", text, write_to=write, twice=twice, label=f"{name}: {done}")

    one()
    assert tally.count >= RUN
