"""What a sweep varies: settings, ranges, and the paths that put their values into a scenario.

```text
--set  autoscalers[0].spec.metrics[0].resource.target.averageUtilization=50,60,70   a Setting: listed values
--space autoscalers[0].manifest.spec.behavior.scaleDown.stabilizationWindowSeconds=0..600:int   a Range
--space spec.autoscalers[0].syncPeriod=5s..1m:log                                   a Range of durations
```

A path is the scenario's own camelCase keys as written, `.` between keys and `[N]` for a list's
entry; a key holding a dot or a bracket (a Knative annotation) is quoted in brackets:
`...metadata.annotations["autoscaling.knative.dev/target"]`. It is relative to `spec` unless it
starts with `spec` or `metadata`. A path may go through a string that names a manifest file
(`autoscalers[0].manifest`): `apply` reads that file, relative to the scenario, and inlines it,
which the scenario format accepts as well as the file's name.

Values are YAML scalars read as the scenario file reads them (`50` an int, `0.5` a float, `30s` a
string, `true` a bool), split on commas: a value cannot hold a comma. Nothing here checks a value
against the schema; the scenario loader does, on the document `apply` returns.
"""

from __future__ import annotations

import copy
import functools
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

import yaml

from skenario.core.time import MICROSECOND, MILLISECOND, SECOND, format_duration, parse_duration
from skenario.errors import SkenarioError
from skenario.scenario.io import read_text, yaml_documents

Scale = Literal["float", "int", "log"]
SCALES: tuple[str, ...] = ("float", "int", "log")
ROOTS = ("spec", "metadata")
"""A path's first key that makes it absolute; any other is a key of `spec`."""

_LONGEST = 64  # characters in one end of a range, as in a scenario's quantities (Python reads no int of 4,300 digits)
_NUMBER = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$")
_INTEGER = re.compile(r"^[+-]?\d+$")
_RANGE = re.compile(r"^(?P<low>.+?)\.\.(?P<high>[^.].*?)(?::(?P<scale>[A-Za-z]+))?$")
_PATH_TOKEN = re.compile(
    r"(?P<dot>\.)?(?P<key>[^.\[\]]+)"  # a bare key (after a dot, unless first)
    r"|\[(?P<index>-?\d+)\]"  # a list index
    r"|\[\"(?P<dq>[^\"]*)\"\]|\['(?P<sq>[^']*)'\]"  # a quoted key
)
# A duration range keeps the precision its ends are written in, to the second at the coarsest:
# 30s..5m samples whole seconds, 250ms..2s whole milliseconds (a 12-digit nanosecond count helps no one).
_DURATION_STEPS = (SECOND, MILLISECOND, MICROSECOND, 1)


class SweepError(SkenarioError):
    """A sweep's or a study's options are wrong: one line naming the option and what was written."""


@dataclass(frozen=True)
class Setting:
    """A path and the values a grid gives it, in the order written."""

    path: str
    values: tuple[Any, ...]


@dataclass(frozen=True)
class Range:
    """A path and the interval a design samples it from.

    `low` and `high` are numbers, or integer nanoseconds when `duration` (both ends written as
    durations); `scale` says how a unit sample maps onto the interval (`value_for`).
    """

    path: str
    low: float
    high: float
    scale: Scale = "float"
    duration: bool = False


def parse_setting(text: str, option: str = "--set") -> Setting:
    """`PATH=V1,V2,...` as a Setting; each value a YAML scalar (so no value can hold a comma)."""
    path, _, written = _split(text, option, "PATH=V1,V2,...")
    parse_path(path, option=option)
    values: list[Any] = []
    for item in written.split(","):
        value = _scalar(item.strip(), text, option)
        if any(type(value) is type(seen) and value == seen for seen in values):
            raise _refused(text, option, f"{item.strip()} is given twice")
        values.append(value)
    return Setting(path.strip(), tuple(values))


def parse_range(text: str, option: str = "--space") -> Range:
    """`PATH=LO..HI`, `PATH=LO..HI:int` or `PATH=LO..HI:log` as a Range: numbers or durations (`30s..5m`)."""
    path, _, written = _split(text, option, "PATH=LO..HI[:int|:log]")
    parse_path(path, option=option)
    match = _RANGE.match(written.strip())
    if match is None or len(match["low"]) > _LONGEST or len(match["high"]) > _LONGEST:
        raise _not_a_range(text, written, option)
    low: float
    high: float
    low_text, high_text = match["low"].strip(), match["high"].strip()
    scale = match["scale"] or "float"
    if scale not in SCALES:
        raise _refused(text, option, f"unknown scale ':{scale}'; write :int or :log after the range")
    duration = not (_NUMBER.match(low_text) and _NUMBER.match(high_text))
    if duration:
        low, high = _duration_ends(low_text, high_text, text, written, option)
        if scale == "int":
            raise _refused(text, option, "a range of durations takes :log or nothing, not :int")
    else:
        if scale == "int" and not (_INTEGER.match(low_text) and _INTEGER.match(high_text)):
            bad = low_text if not _INTEGER.match(low_text) else high_text
            raise _refused(text, option, f"an :int range needs whole-number ends, not {bad}")
        low, high = (int(low_text), int(high_text)) if scale == "int" else (float(low_text), float(high_text))
        if not (math.isfinite(low) and math.isfinite(high)):
            raise _not_a_range(text, written, option)
    if not low < high:
        raise _refused(text, option, f"the low end {low_text} is not below the high end {high_text}")
    if scale == "log" and low <= 0:
        raise _refused(text, option, f"a :log range needs a low end above 0, not {low_text}")
    return Range(path.strip(), low, high, cast(Scale, scale), duration)


def parse_set(text: str, option: str = "--set") -> Setting | Range:
    """A `--set` of a sweep: a Range when the value is one `LO..HI[:scale]` of numbers or durations
    (`--design lhs` or `sobol` samples it), else a Setting (so a value such as `../x.yaml` stays a value)."""
    _, _, written = _split(text, option, "PATH=V1,V2,... or PATH=LO..HI")
    match = _RANGE.match(written.strip())
    if (
        match is not None
        and "," not in written
        and _looks_like_a_bound(match["low"])
        and _looks_like_a_bound(match["high"])
    ):
        return parse_range(text, option)
    return parse_setting(text, option)


def value_for(space: Range, unit: float) -> Any:
    """The range's value at `unit` in [0, 1): linear, log-uniform for `log`, and for `int` each whole
    number of [low, high] an equal share of [0, 1) (rounding would give the ends half a share);
    a duration comes back as a string the scenario reads (`'1m30s'`), at its ends' precision."""
    low, high = space.low, space.high
    if space.scale == "int":
        return int(min(high, math.floor(low + unit * (high - low + 1))))
    if space.scale == "log":
        value = math.exp(math.log(low) + unit * (math.log(high) - math.log(low)))
    else:
        value = low + unit * (high - low)
    if space.duration:
        step = next(s for s in _DURATION_STEPS if int(low) % s == 0 and int(high) % s == 0)
        return format_duration(int(min(high, max(low, round(value / step) * step))))
    return float(min(high, max(low, value)))  # exp(log(x)) may land a hair outside


def parse_path(path: str, *, option: str | None = None) -> list[str | int]:
    """The path's keys and indexes from the document's root: `workload.replicas` is
    `['spec', 'workload', 'replicas']`, `metadata.name` stays `['metadata', 'name']`."""
    parts = _written(path, option)
    return parts if parts[0] in ROOTS else ["spec", *parts]


def _written(path: str, option: str | None) -> list[str | int]:
    """The path's keys and indexes as written (without the `spec` a relative path implies)."""
    text = path.strip()
    parts: list[str | int] = []
    position = 0
    while position < len(text):
        token = _PATH_TOKEN.match(text, position)
        if token is None or (token["key"] is not None and bool(token["dot"]) == (position == 0)):
            raise _bad_path(path, option, f"cannot read it at {_quoted(text[position:])}")
        if token["index"] is not None:
            if int(token["index"]) < 0:
                raise _bad_path(path, option, f"[{token['index']}] is not an index; they count from 0")
            parts.append(int(token["index"]))
        else:
            parts.append(next(token[group] for group in ("key", "dq", "sq") if token[group] is not None))
        position = token.end()
    if not parts or not isinstance(parts[0], str):
        raise _bad_path(path, option, "a path starts with a key, such as workload.replicas")
    return parts


def apply(document: dict[str, Any], values: Mapping[str, Any], *, base_dir: Path) -> dict[str, Any]:
    """A deep copy of the scenario document with each path set to its value.

    A missing key is added (with the mappings on its way), for the schema to judge; an index past
    a list's end, or a path through a number, is an error. A string on the way that names a
    manifest file is read relative to `base_dir` and inlined, so a sweep reaches into manifests.
    """
    result = copy.deepcopy(document)
    for path, value in values.items():
        written, parts = _written(path, None), parse_path(path)
        _set(result, parts, copy.deepcopy(value), base_dir, _render(written), len(parts) - len(written))
    return result


def _set(document: Any, parts: list[str | int], value: Any, base_dir: Path, path: str, hidden: int) -> None:
    """Walk `parts` from the root and set the last; `hidden` leading parts the user did not write (`spec`)."""

    def error(depth: int, reason: str) -> SweepError:
        where = _render(parts[hidden : depth + 1]) or path
        suffix = "" if where == path else f" (setting {path})"
        return SweepError(f"{where} {reason}{suffix}", value=_kept(path))

    node = document
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        if isinstance(part, int):
            if not isinstance(node, list):
                raise error(depth - 1, f"is a mapping, not a list: it has no entry [{part}]")
            if part >= len(node):
                raise error(depth, f"is past the end: {_count(parts[depth - 1], len(node))}")
        elif not isinstance(node, dict):
            raise error(depth - 1, f"is a list: give an index, such as [0], before .{part}")
        if last:
            node[part] = value
            return
        following = parts[depth + 1]
        child = node[part] if isinstance(part, int) else node.get(part)
        if child is None and isinstance(part, str):
            if isinstance(following, int):
                raise error(depth, f"is not in the scenario, so it has no entry [{following}]")
            child = node[part] = {}
        elif isinstance(child, str) and isinstance(following, str):
            child = node[part] = _manifest(child, base_dir, functools.partial(error, depth))
        elif not isinstance(child, dict | list):
            raise error(depth, f"is {_quoted(child)}, a value: the path cannot go into it")
        node = child


def _manifest(name: str, base_dir: Path, error: Callable[[str], SweepError]) -> dict[str, Any]:
    """The manifest file a string names, read as one YAML mapping."""
    file = base_dir / name
    if not file.is_file():
        raise error(f"is {_quoted(name)}, neither a mapping nor a manifest file ({file} does not exist)")
    try:
        documents = yaml_documents(read_text(file), str(file))
    except SkenarioError as exc:
        raise error(f"is {_quoted(name)}, a manifest that cannot be read: {exc}") from None
    if len(documents) != 1 or not isinstance(documents[0][0], dict):
        raise error(f"is {_quoted(name)}, whose file {file} is not one YAML mapping")
    manifest: dict[str, Any] = documents[0][0]
    return manifest


def _count(key: str | int, length: int) -> str:
    """`there is 1 autoscaler`, `there are 2 metrics`, `traffic has 3 entries`: the list's length, in words."""
    if isinstance(key, str) and key.endswith("s") and not key.endswith("ss"):
        if length == 0:
            return f"there are no {key}"
        return f"there is 1 {key[:-1]}" if length == 1 else f"there are {length} {key}"
    entries = "1 entry" if length == 1 else f"{length} entries"
    return f"{key} has {entries}" if isinstance(key, str) else f"the list has {entries}"


def _render(parts: list[str | int]) -> str:
    """Parts back as a path: keys joined by dots, indexes and keys holding `.`, `[` or `]` in brackets."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif re.search(r"[.\[\]]", part):
            text += f'["{part}"]' if '"' not in part else f"['{part}']"
        else:
            text += f".{part}" if text else part
    return text


def _split(text: str, option: str, shape: str) -> tuple[str, str, str]:
    path, equals, value = text.partition("=")
    if not equals or not path.strip() or not value.strip():
        raise _refused(text, option, f"write {shape}")
    return path, equals, value


def _scalar(item: str, text: str, option: str) -> Any:
    """One value as the scenario file would read it; only a scalar (a list or mapping needs a comma)."""
    if not item:
        raise _refused(text, option, "an empty value; write PATH=V1,V2,...")
    try:
        value = yaml.safe_load(item)
    except (yaml.YAMLError, ValueError):
        raise _refused(text, option, f"{_quoted(item)} is not a YAML value") from None
    if value is not None and not isinstance(value, str | int | float | bool):
        kind = type(value).__name__
        raise _refused(text, option, f"{_quoted(item)} reads as a {kind}, not a scalar; quote it")
    if isinstance(value, float) and not math.isfinite(value):
        raise _refused(text, option, f"{_quoted(item)} is not a finite number")
    return value


def _looks_like_a_bound(text: str) -> bool:
    """A number or a duration: what a range's end is written as."""
    text = text.strip()
    if _NUMBER.match(text):
        return True
    try:
        parse_duration(text)
    except ValueError:
        return False
    return True


def _duration_ends(low: str, high: str, text: str, written: str, option: str) -> tuple[int, int]:
    """Both ends in nanoseconds; a bare 0 is a duration too, as in the scenario format."""
    try:
        return (0 if low == "0" else parse_duration(low)), (0 if high == "0" else parse_duration(high))
    except ValueError:
        raise _not_a_range(text, written, option) from None


def _not_a_range(text: str, written: str, option: str) -> SweepError:
    return _refused(
        text,
        option,
        f"{_quoted(written.strip())} is not a range; write LO..HI with numbers (0.5..2) "
        f"or durations (30s..5m), then :int or :log if wanted",
    )


def _refused(text: str, option: str, reason: str) -> SweepError:
    """The one line for a bad option: `--space 'x=10..5': the low end 10 is not below the high end 5`."""
    return SweepError(f"{option} {_quoted(text)}: {reason}", value=_kept(text))


def _quoted(value: Any) -> str:
    """The value as written (repr), cut short if long: an error stays one readable line."""
    shown = repr(value)
    return shown if len(shown) <= 80 else f"{shown[:40]}… ({len(shown):,} characters)"


def _kept(text: str) -> str | None:
    """The offending text for the error's `value`, unless too long to show: SkenarioError would print it whole."""
    return text if len(repr(text)) <= 80 else None


def _bad_path(path: str, option: str | None, reason: str) -> SweepError:
    prefix = f"{option} " if option else ""
    return SweepError(f"{prefix}path {_quoted(path.strip())}: {reason}", value=_kept(path))
